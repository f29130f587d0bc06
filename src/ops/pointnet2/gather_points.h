// GatherPoints (OPS.md "PointNet++ family"; reference: pointnet2_ops gather_points_kernel).
//
//   features [B, C, N] float32, idx [B, M] int32|int64 -> out [B, C, M] float32
//   out[b, c, m] = features[b, c, idx[b, m]]
//
// Every index must lie in [0, N) (checked before any work; an error names the value and its
// position). C = 0 or M = 0 give an empty output.
#pragma once

#include <cstdint>
#include <functional>

#include "ops/pointnet2/common.h"

namespace pointrt::pointnet2 {

/// out[m] = row[idx[m]] for one (b, c) row: the per-element rule shared by GatherPoints and
/// GroupPoints (whose idx [B, M, S] is a gather of M*S points).
template <typename Index>
POINTNET2_HD inline float gather_one(const float* row, const Index* idx, int64_t m) {
  return row[idx[m]];
}

/// Where an optimised kernel gets a temporary buffer of `floats` floats, alive until the kernel
/// returns: in a session the run's allocator (KernelContext::temporary, so arena runs reuse dead
/// tensors' memory); when empty, the kernel allocates its own.
using ScratchAllocator = std::function<float*(size_t floats)>;

/// Naive reference. Indices must already be validated.
template <typename Index>
void gather_points_ref(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                       float* out);
/// Optimised: OpenMP over (b, c) rows; with M >= N, rows longer than L1 and >= 12 channels, a
/// point-major copy of the features and 16x16 register transposes (gather_kernels.h).
template <typename Index>
void gather_points(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                   float* out, const ScratchAllocator& scratch = nullptr);

}  // namespace pointrt::pointnet2
