// FurthestPointSample (OPS.md "PointNet++ family"; reference: pointnet2_ops
// furthest_point_sampling_kernel, as vendored by PVN3D).
//
//   xyz [B, N, 3] float32 -> idx [B, npoint] int32
//   attributes: npoint int >= 1 (required); ignore_origin int, default 0.
//
// Per batch: idx[0] = 0. dist[k] starts at 1e10. For j = 1 .. npoint-1, with last = idx[j-1],
// every candidate k gets dist[k] = min(dist[k], d2(xyz[k], xyz[last])) and idx[j] is the
// candidate with the largest dist; ties go to the LOWEST k. With ignore_origin = 1, points with
// x*x + y*y + z*z <= 1e-3 are not candidates (pointnet2_ops/PVN3D rule; the comparison is made in
// double, as the CUDA source compares a float with the double literal 1e-3). No candidate at all
// -> index 0. npoint > N is allowed (the lowest candidate repeats once all distances are 0).
// N = 0 is an error. The min keeps dist[k] when d2 is NaN (CUDA fminf), so NaN never spreads.
#pragma once

#include <cstdint>
#include <string>

#include "graph/ir.h"
#include "ops/pointnet2/common.h"

namespace pointrt::pointnet2 {

struct FurthestPointSampleAttrs {
  int64_t npoint = 1;
  bool ignore_origin = false;
};

/// Reads and checks the attributes (npoint >= 1, ignore_origin in {0, 1}).
FurthestPointSampleAttrs parse_furthest_point_sample(const Attributes& attrs, const std::string& where);

/// Whether point p may be sampled.
POINTNET2_HD inline bool fps_is_candidate(float x, float y, float z, bool ignore_origin) {
  if (!ignore_origin) return true;
  float xx = x * x, yy = y * y, zz = z * z;
  float mag = (xx + yy) + zz;
  return !(static_cast<double>(mag) <= 1e-3);
}

/// dist update of one candidate: min that keeps the old value when d is NaN.
POINTNET2_HD inline float fps_min(float d, float old) { return d < old ? d : old; }

constexpr float kFpsInitialDistance = 1e10f;

/// One batch is split over the threads only when each thread gets at least this many points:
/// the split costs one barrier per sample (~1-2 us with idle cores, a scheduler time slice on
/// an oversubscribed machine), and a sweep of 16384 points takes ~2 us on one core.
constexpr int64_t kFpsMinPointsPerThread = 65536;

/// Naive reference (the test oracle). xyz [B, N, 3] with N >= 1, idx [B, npoint].
void furthest_point_sample_ref(const float* xyz, int64_t batch, int64_t n, const FurthestPointSampleAttrs& attrs,
                               int32_t* idx);
/// Optimised: SoA copy, vectorised update + blocked arg-max, OpenMP over batches and, for large
/// N with few batches, over the points of one batch (one barrier per sampled point).
void furthest_point_sample(const float* xyz, int64_t batch, int64_t n, const FurthestPointSampleAttrs& attrs,
                           int32_t* idx);

}  // namespace pointrt::pointnet2
