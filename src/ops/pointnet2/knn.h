// KNN (OPS.md "PointNet++ family").
//
//   xyz [B, N, 3] float32 (points), new_xyz [B, M, 3] float32 (queries)
//   -> idx [B, M, k] int32, dist2 [B, M, k] float32 (squared distances)
//   attribute: k int, 1 <= k <= N (k > N is an error, so is N = 0).
//
// Per query: the k points with the smallest d2 = squared_distance(query, point), ascending by
// d2; on equal d2 the lower index comes first. A NaN d2 (non-finite input) sorts after every
// number, NaNs among themselves by index, so the order is total and the output always filled.
#pragma once

#include <cstdint>
#include <string>

#include "graph/ir.h"
#include "ops/pointnet2/common.h"

namespace pointrt::pointnet2 {

struct KnnAttrs {
  int64_t k = 1;
};

/// Reads and checks the attributes (k >= 1; k <= N is checked at run time).
KnnAttrs parse_knn(const Attributes& attrs, const std::string& where);

/// The KNN order: (d2, index) ascending, NaN after every number.
POINTNET2_HD inline bool knn_less(float da, int32_t ia, float db, int32_t ib) {
  const bool nan_a = da != da, nan_b = db != db;
  if (nan_a || nan_b) return nan_a != nan_b ? nan_b : ia < ib;
  if (da != db) return da < db;
  return ia < ib;
}

/// Insert (d, i) into the sorted best list (d2s/ids, `count` used of `capacity`) if it belongs
/// there. The list keeps the `capacity` smallest in knn_less order.
POINTNET2_HD inline void knn_insert(float d, int32_t i, float* d2s, int32_t* ids, int64_t& count, int64_t capacity) {
  int64_t pos;
  if (count < capacity) {
    pos = count++;
  } else {
    if (!knn_less(d, i, d2s[capacity - 1], ids[capacity - 1])) return;
    pos = capacity - 1;
  }
  while (pos > 0 && knn_less(d, i, d2s[pos - 1], ids[pos - 1])) {
    d2s[pos] = d2s[pos - 1];
    ids[pos] = ids[pos - 1];
    --pos;
  }
  d2s[pos] = d;
  ids[pos] = i;
}

/// knn_insert for finite d2 only (the grid path): the same order without the NaN branches.
POINTNET2_HD inline void knn_insert_finite(float d, int32_t i, float* d2s, int32_t* ids, int64_t& count,
                                           int64_t capacity) {
  int64_t pos;
  if (count < capacity) {
    pos = count++;
  } else {
    const float wd = d2s[capacity - 1];
    if (d > wd || (d == wd && i > ids[capacity - 1])) return;
    pos = capacity - 1;
  }
  while (pos > 0 && (d < d2s[pos - 1] || (d == d2s[pos - 1] && i < ids[pos - 1]))) {
    d2s[pos] = d2s[pos - 1];
    ids[pos] = ids[pos - 1];
    --pos;
  }
  d2s[pos] = d;
  ids[pos] = i;
}

/// Naive reference (the test oracle): every d2, sorted, first k. Requires 1 <= k <= n.
void knn_ref(const float* xyz, const float* new_xyz, int64_t batch, int64_t n, int64_t m, const KnnAttrs& attrs,
             int32_t* idx, float* dist2);
/// Optimised: one uniform grid per batch, ring search per query until the k-th best d2 is
/// provably below every unvisited point; OpenMP over queries. Batches with non-finite points
/// and non-finite queries take an exhaustive scan with the same order.
void knn(const float* xyz, const float* new_xyz, int64_t batch, int64_t n, int64_t m, const KnnAttrs& attrs,
         int32_t* idx, float* dist2);

}  // namespace pointrt::pointnet2
