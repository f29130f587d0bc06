// ThreeInterpolate (OPS.md "PointNet++ family"; reference: pointnet2_ops
// three_interpolate_kernel).
//
//   features [B, C, m] float32, idx [B, n, 3] int32|int64, weight [B, n, 3] float32
//   -> out [B, C, n] float32
//   out[b, c, i] = w0*f[idx0] + w1*f[idx1] + w2*f[idx2], summed in that order (no FMA).
//
// Every index must lie in [0, m) (checked before any work; so m = 0 with n > 0 is an error).
// The weights come from the graph (r = 1 / (dist + 1e-8), w = r / sum(r)), not from here.
#pragma once

#include <cstdint>

#include "ops/pointnet2/common.h"
#include "ops/pointnet2/gather_points.h"

namespace pointrt::pointnet2 {

/// One output element, in the OPS.md summation order.
POINTNET2_HD inline float three_interpolate_one(float f0, float f1, float f2, float w0, float w1, float w2) {
  float a = w0 * f0, b = w1 * f1, c = w2 * f2;
  return (a + b) + c;
}

/// Naive reference. Indices must already be validated.
template <typename Index>
void three_interpolate_ref(const float* features, const Index* idx, const float* weight, int64_t batch,
                           int64_t channels, int64_t m, int64_t n, float* out);
/// Optimised: with n >= m, a point-major copy of the features, 16 channels per load and 16x16
/// register transposes; otherwise point tiles whose indices/weights are turned into SoA once
/// and used by a block of channels whose rows stay in L2, AVX-512 gathers. OpenMP over tiles.
template <typename Index>
void three_interpolate(const float* features, const Index* idx, const float* weight, int64_t batch, int64_t channels,
                       int64_t m, int64_t n, float* out, const ScratchAllocator& scratch = nullptr);

}  // namespace pointrt::pointnet2
