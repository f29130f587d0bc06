#pragma GCC optimize("fp-contract=off")  // strict float32 (see common.h)
// Optimised KNN: a grid per batch sized for ~k points per cell, so that the query's cell and
// its first ring usually hold the k nearest with room to prove it; ring_search() keeps going
// until the k-th best d2 is strictly below a lower bound for every unvisited point, which makes
// the result (ties by index included) exactly the reference's.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "ops/pointnet2/knn.h"
#include "ops/pointnet2/spatial_grid.h"

namespace pointrt {
namespace pointnet2 {

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
  std::vector<std::vector<int32_t>> visit(static_cast<size_t>(batch));
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b)
    if (!exhaustive_batch[b]) visit[b] = queries_by_cell(grids[b], new_xyz + b * m * 3, m);
  const int64_t queries = batch * m;
#pragma omp parallel for schedule(dynamic, 16) if (queries > 64)
  for (int64_t slot = 0; slot < queries; ++slot) {
    const int64_t b = slot / m;
    const int64_t q = visit[b].empty() ? slot : b * m + visit[b][slot % m];
    const float* query = new_xyz + q * 3;
    float* d2s = dist2 + q * k;
    int32_t* ids = idx + q * k;
    if (exhaustive_batch[b] || !is_finite_point(query)) {
      exhaustive(xyz + b * n * 3, n, query, k, d2s, ids);
      continue;
    }
    const SpatialGrid& g = grids[b];
    const float qx = query[0], qy = query[1], qz = query[2];
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

}  // namespace pointnet2
}  // namespace pointrt
