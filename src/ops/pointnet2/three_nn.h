// ThreeNN (OPS.md "PointNet++ family"; reference: pointnet2_ops three_nn_kernel and its Python
// wrapper, which returns sqrt of the kernel's d2).
//
//   unknown [B, n, 3] float32 (queries), known [B, m, 3] float32
//   -> dist [B, n, 3] float32 (Euclidean, sqrt(d2)), idx [B, n, 3] int32
//
// Per query: the three known points with the smallest d2, ascending; equal d2 -> lower index
// first. Like the reference kernel (best d2 initialised to 1e40f = +inf, strict `<`), only
// points with d2 < +inf qualify, so NaN/inf coordinates never appear. Missing slots (m < 3, or
// fewer than three qualifying points) have index 0 and distance 1e20. m = 0 is an error.
#pragma once

#include <cstdint>

#include "ops/pointnet2/common.h"
#include "ops/pointnet2/knn.h"

namespace pointrt::pointnet2 {

constexpr float kThreeNNMissingDistance = 1e20f;

/// Offer (d, i) to the sorted best-three list (count used); the reference's insertion.
POINTNET2_HD inline void three_nn_insert(float d, int32_t i, float* d2s, int32_t* ids, int64_t& count) {
  if (!(d < std::numeric_limits<float>::infinity())) return;
  knn_insert(d, i, d2s, ids, count, 3);
}

/// Write one query's result: sqrt of the kept d2, missing slots as (1e20, 0).
POINTNET2_HD inline void three_nn_finish(const float* d2s, const int32_t* ids, int64_t count, float* dist,
                                         int32_t* idx) {
  for (int64_t s = 0; s < 3; ++s) {
    dist[s] = s < count ? std::sqrt(d2s[s]) : kThreeNNMissingDistance;
    idx[s] = s < count ? ids[s] : 0;
  }
}

/// Naive reference (the test oracle): the kernel's three-slot insertion in point order.
void three_nn_ref(const float* unknown, const float* known, int64_t batch, int64_t n, int64_t m, float* dist,
                  int32_t* idx);
/// Optimised: grid per batch over the known points, ring search per query; OpenMP over queries.
void three_nn(const float* unknown, const float* known, int64_t batch, int64_t n, int64_t m, float* dist, int32_t* idx);

}  // namespace pointrt::pointnet2
