// Optimised KNN: a grid per batch sized for ~k points per cell, so that the query's cell and
// its first ring usually hold the k nearest with room to prove it; ring_search() keeps going
// until the k-th best d2 is strictly below a lower bound for every unvisited point, which makes
// the result (ties by index included) exactly the reference's.
#include <omp.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <vector>

#include "ops/pointnet2/knn.h"
#include "ops/pointnet2/spatial_grid.h"

namespace pointrt::pointnet2 {

KnnAttrs parse_knn(const Attributes& attrs, const std::string& where) {
  KnnAttrs a;
  a.k = attrs.get_int("k");
  if (a.k < 1) fail(where, ": attribute 'k' must be >= 1, got ", a.k);
  if (a.k > std::numeric_limits<int32_t>::max()) fail(where, ": attribute 'k' is too large: ", a.k);
  return a;
}

namespace {

void exhaustive(const float* pts, int64_t n, const float* query, int64_t k, float* d2s, int32_t* ids) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i)
    knn_insert(squared_distance(query, pts + 3 * i), static_cast<int32_t>(i), d2s, ids, count, k);
}

#if defined(__AVX512F__)
// The best k <= 16 (d2, index) pairs of one query, ascending in the KNN order, held in two
// registers: an insertion is a compare, a one-lane shift of the larger suffix and a blend, with
// no data-dependent branch (finite d2 only; empty lanes hold (+inf, INT32_MAX)).
class TopK16 {
 public:
  explicit TopK16(int64_t k)
      : d_(_mm512_set1_ps(std::numeric_limits<float>::infinity())),
        i_(_mm512_set1_epi32(std::numeric_limits<int32_t>::max())),
        lanes_(static_cast<__mmask16>(k >= 16 ? 0xffffu : (1u << k) - 1)),
        last_(_mm512_set1_epi32(static_cast<int32_t>(k - 1))),
        k_(k) {}
  int64_t count() const { return count_; }
  float worst() const { return _mm512_cvtss_f32(_mm512_maskz_permutexvar_ps(__mmask16(1), last_, d_)); }
  void insert(float d, int32_t i) {
    const __m512 vd = _mm512_set1_ps(d);
    const __m512i vi = _mm512_set1_epi32(i);
    // Lanes whose key is larger than (d, i): a suffix of the sorted list.
    const __mmask16 larger = _mm512_mask_cmp_ps_mask(lanes_, d_, vd, _CMP_GT_OQ) |
                             (_mm512_mask_cmp_ps_mask(lanes_, d_, vd, _CMP_EQ_OQ) & _mm512_cmpgt_epi32_mask(i_, vi));
    const __mmask16 first = static_cast<__mmask16>(larger & (0u - larger));
    const __m512i from_left = _mm512_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    d_ = _mm512_mask_mov_ps(_mm512_mask_permutexvar_ps(d_, larger, from_left, d_), first, vd);
    i_ = _mm512_mask_mov_epi32(_mm512_mask_permutexvar_epi32(i_, larger, from_left, i_), first, vi);
    count_ += (count_ < k_) & (larger != 0);
  }
  void store(float* d2s, int32_t* ids) const {
    _mm512_mask_storeu_ps(d2s, lanes_, d_);
    _mm512_mask_storeu_epi32(ids, lanes_, i_);
  }

 private:
  __m512 d_;
  __m512i i_;
  __mmask16 lanes_;
  __m512i last_;
  int64_t k_;
  int64_t count_ = 0;
};
#endif

}  // namespace

void knn(const float* xyz, const float* new_xyz, int64_t batch, int64_t n, int64_t m, const KnnAttrs& attrs,
         int32_t* idx, float* dist2) {
  if (m == 0) return;
  const int64_t k = attrs.k;
  std::vector<SpatialGrid> grids(static_cast<size_t>(batch));
  std::vector<char> exhaustive_batch(static_cast<size_t>(batch), 0);
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b) {
    const float* pts = xyz + b * n * 3;
    PointBounds bounds = finite_bounds(pts, n);
    if (bounds.finite < n) {  // NaN/inf points take part in the order: scan everything
      exhaustive_batch[b] = 1;
      continue;
    }
    double per_cell = std::max(2.0, 1.0 * static_cast<double>(k));
    double cell = cell_size_for_cell_count(bounds, static_cast<double>(n) / per_cell);
    build_grid(grids[b], pts, n, bounds, cell, 4 * n + 64);
  }
  std::vector<QueryOrder> visit(static_cast<size_t>(batch));
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b)
    if (!exhaustive_batch[b]) visit[b] = order_queries(grids[b], new_xyz + b * m * 3, m);
  const int64_t queries = batch * m;
#pragma omp parallel for schedule(dynamic, 16) if (queries > 64)
  for (int64_t slot = 0; slot < queries; ++slot) {
    const int64_t b = slot / m;
    const bool sorted = !visit[b].visit.empty();
    const int64_t q = sorted ? b * m + visit[b].visit[slot % m] : slot;
    if (slot + kPrefetchQueries < queries) {
      const int64_t ahead = slot + kPrefetchQueries, ab = ahead / m;
      const int64_t aq = visit[ab].visit.empty() ? ahead : ab * m + visit[ab].visit[ahead % m];
      prefetch_for_write(dist2 + aq * k, static_cast<size_t>(k) * 4);
      prefetch_for_write(idx + aq * k, static_cast<size_t>(k) * 4);
    }
    const float* query = sorted ? visit[b].xyz.data() + (slot % m) * 3 : new_xyz + q * 3;
    float* d2s = dist2 + q * k;
    int32_t* ids = idx + q * k;
    if (exhaustive_batch[b] || !is_finite_point(query)) {
      exhaustive(xyz + b * n * 3, n, query, k, d2s, ids);
      continue;
    }
    const SpatialGrid& g = grids[b];
    const float qx = query[0], qy = query[1], qz = query[2];
#if defined(__AVX512F__)
    if (k <= 16) {
      TopK16 top(k);
      ring_search(
          g, query,
          [&](int32_t begin, int32_t end) {
            scan_candidates(
                g, begin, end, qx, qy, qz,
                [&] { return top.count() < k ? std::numeric_limits<float>::infinity() : top.worst(); },
                [&](float d, int32_t i) { top.insert(d, i); });
          },
          [&](double bound2) { return top.count() == k && static_cast<double>(top.worst()) < bound2; });
      top.store(d2s, ids);
      continue;
    }
#endif
    int64_t count = 0;
    ring_search(
        g, query,
        [&](int32_t begin, int32_t end) {
          scan_candidates(
              g, begin, end, qx, qy, qz,
              [&] { return count < k ? std::numeric_limits<float>::infinity() : d2s[k - 1]; },
              [&](float d, int32_t i) { knn_insert_finite(d, i, d2s, ids, count, k); });
        },
        [&](double bound2) { return count == k && static_cast<double>(d2s[k - 1]) < bound2; });
  }
}

}  // namespace pointrt::pointnet2
