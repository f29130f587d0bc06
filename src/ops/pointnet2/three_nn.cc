// Optimised ThreeNN: KNN's ring search with k = 3 over a grid of the finite known points
// (non-finite points can never have d2 < inf, so leaving them out changes nothing).
#include <omp.h>

#include <vector>

#include "ops/pointnet2/spatial_grid.h"
#include "ops/pointnet2/three_nn.h"

namespace pointrt::pointnet2 {

void three_nn(const float* unknown, const float* known, int64_t batch, int64_t n, int64_t m, float* dist,
              int32_t* idx) {
  if (n == 0) return;
  std::vector<SpatialGrid> grids(static_cast<size_t>(batch));
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b) {
    const float* pts = known + b * m * 3;
    PointBounds bounds = finite_bounds(pts, m);
    double cell = cell_size_for_cell_count(bounds, static_cast<double>(bounds.finite) / 2.0);
    build_grid(grids[b], pts, m, bounds, cell, 4 * m + 64);
  }
  std::vector<QueryOrder> visit(static_cast<size_t>(batch));
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b) visit[b] = order_queries(grids[b], unknown + b * n * 3, n);
  const int64_t queries = batch * n;
#pragma omp parallel for schedule(dynamic, 32) if (queries > 64)
  for (int64_t slot = 0; slot < queries; ++slot) {
    const int64_t b = slot / n;
    const int64_t q = b * n + visit[b].visit[slot % n];
    if (slot + kPrefetchQueries < queries) {
      const int64_t ahead = slot + kPrefetchQueries, ab = ahead / n;
      const int64_t aq = ab * n + visit[ab].visit[ahead % n];
      prefetch_for_write(dist + aq * 3, 12);
      prefetch_for_write(idx + aq * 3, 12);
    }
    const SpatialGrid& g = grids[b];
    const float* query = visit[b].xyz.data() + (slot % n) * 3;
    float d2s[3];
    int32_t ids[3];
    int64_t count = 0;
    if (is_finite_point(query) && g.inserted > 0) {  // a non-finite query has no finite d2
      const float qx = query[0], qy = query[1], qz = query[2];
      ring_search(
          g, query,
          [&](int32_t begin, int32_t end) {
            scan_candidates(
                g, begin, end, qx, qy, qz, [&] { return count < 3 ? std::numeric_limits<float>::max() : d2s[2]; },
                [&](float d, int32_t i) { three_nn_insert(d, i, d2s, ids, count); });
          },
          [&](double bound2) { return count == 3 && static_cast<double>(d2s[2]) < bound2; });
    }
    three_nn_finish(d2s, ids, count, dist + q * 3, idx + q * 3);
  }
}

}  // namespace pointrt::pointnet2
