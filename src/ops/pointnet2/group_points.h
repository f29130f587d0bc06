// GroupPoints (OPS.md "PointNet++ family"; reference: pointnet2_ops group_points_kernel).
//
//   features [B, C, N] float32, idx [B, M, S] int32|int64 -> out [B, C, M, S] float32
//   out[b, c, m, s] = features[b, c, idx[b, m, s]]
//
// Every index must lie in [0, N) (checked before any work). Sizes 0 give an empty output.
#pragma once

#include <cstdint>

#include "ops/pointnet2/gather_points.h"

namespace pointrt::pointnet2 {

/// Naive reference (four loops). Indices must already be validated.
template <typename Index>
void group_points_ref(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                      int64_t s, float* out);
/// Optimised: gather_points over the M*S indices of each batch.
template <typename Index>
void group_points(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                  int64_t s, float* out, const ScratchAllocator& scratch = nullptr);

}  // namespace pointrt::pointnet2
