#include "ops/pointnet2/spatial_grid.h"

#include <algorithm>

#include "ops/pointnet2/common.h"

namespace pointrt::pointnet2 {

PointBounds finite_bounds(const float* xyz, int64_t n) {
  PointBounds b;
  float lo[3] = {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
                 std::numeric_limits<float>::infinity()};
  float hi[3] = {-lo[0], -lo[1], -lo[2]};
  int64_t finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* p = xyz + 3 * i;
    if (!is_finite_point(p)) continue;
    ++finite;
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], p[a]);
      hi[a] = std::max(hi[a], p[a]);
    }
  }
  b.finite = finite;
  for (int a = 0; a < 3; ++a) {
    b.lo[a] = finite ? lo[a] : 0.0;
    b.hi[a] = finite ? hi[a] : 0.0;
  }
  return b;
}

namespace {
double cells_for(const PointBounds& b, double cell) {
  double total = 1;
  for (int a = 0; a < 3; ++a) total *= std::floor((b.hi[a] - b.lo[a]) / cell) + 1;
  return total;
}
}  // namespace

double cell_size_for_cell_count(const PointBounds& b, double target_cells) {
  double extent = 0;
  for (int a = 0; a < 3; ++a) extent = std::max(extent, b.hi[a] - b.lo[a]);
  if (!(extent > 0) || !std::isfinite(extent)) return 1.0;
  target_cells = std::max(1.0, target_cells);
  // cells_for() decreases as the cell grows: bisect (in log space) for the smallest cell whose
  // grid has at most target_cells cells.
  double lo = extent / 4.0e6, hi = extent * 1.0001;
  if (cells_for(b, lo) <= target_cells) return lo;
  for (int it = 0; it < 60; ++it) {
    double mid = std::sqrt(lo * hi);
    if (cells_for(b, mid) <= target_cells)
      hi = mid;
    else
      lo = mid;
  }
  return hi;
}

bool SpatialGrid::range(const float* v, double reach, int64_t lo[3], int64_t hi[3]) const {
  for (int a = 0; a < 3; ++a) {
    double l = raw_coord(static_cast<double>(v[a]) - reach, a);
    double h = raw_coord(static_cast<double>(v[a]) + reach, a);
    if (!(h >= 0) || !(l <= static_cast<double>(dims[a] - 1))) return false;
    lo[a] = l <= 0 ? 0 : static_cast<int64_t>(l);
    hi[a] = h >= static_cast<double>(dims[a] - 1) ? dims[a] - 1 : static_cast<int64_t>(h);
  }
  return true;
}

std::vector<int32_t> queries_by_cell(const SpatialGrid& g, const float* queries, int64_t m) {
  const int64_t cells = g.num_cells();
  std::vector<int32_t> start(static_cast<size_t>(cells) + 1, 0), cell_of(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) {
    const float* q = queries + 3 * j;
    int64_t c = g.cell_id(g.coord(q[0], 0), g.coord(q[1], 1), g.coord(q[2], 2));  // NaN -> cell 0
    cell_of[j] = static_cast<int32_t>(c);
    ++start[c + 1];
  }
  for (int64_t c = 0; c < cells; ++c) start[c + 1] += start[c];
  std::vector<int32_t> order(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) order[start[cell_of[j]]++] = static_cast<int32_t>(j);
  return order;
}

QueryOrder order_queries(const SpatialGrid& g, const float* queries, int64_t m) {
  QueryOrder o;
  o.visit = queries_by_cell(g, queries, m);
  o.xyz.resize(static_cast<size_t>(m) * 3);
  for (int64_t i = 0; i < m; ++i) {
    const float* q = queries + 3 * static_cast<int64_t>(o.visit[i]);
    o.xyz[3 * i] = q[0];
    o.xyz[3 * i + 1] = q[1];
    o.xyz[3 * i + 2] = q[2];
  }
  return o;
}

void build_grid(SpatialGrid& g, const float* xyz, int64_t n, const PointBounds& b, double cell, int64_t max_cells) {
  if (!(cell > 0) || !std::isfinite(cell)) cell = 1.0;
  // Cell ids are stored as int32.
  max_cells = std::min<int64_t>(std::max<int64_t>(1, max_cells), std::numeric_limits<int32_t>::max() - 1);
  if (cells_for(b, cell) > static_cast<double>(max_cells))
    cell = std::max(cell, cell_size_for_cell_count(b, static_cast<double>(max_cells)));
  // The bisection may still land one row over the cap on degenerate extents: grow until it fits.
  while (cells_for(b, cell) > static_cast<double>(max_cells)) cell *= 1.25;
  g.cell = cell;
  g.inv_cell = 1.0 / cell;
  for (int a = 0; a < 3; ++a) {
    g.origin[a] = b.lo[a];
    g.dims[a] = static_cast<int64_t>(std::floor((b.hi[a] - b.lo[a]) / cell)) + 1;
  }
  const int64_t cells = g.num_cells();
  g.cell_start.assign(static_cast<size_t>(cells) + 1, 0);

  std::vector<int32_t> cell_of(static_cast<size_t>(n));
  int64_t inserted = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* p = xyz + 3 * i;
    if (!is_finite_point(p)) {
      cell_of[i] = -1;
      continue;
    }
    int64_t c = g.cell_id(g.coord(p[0], 0), g.coord(p[1], 1), g.coord(p[2], 2));
    cell_of[i] = static_cast<int32_t>(c);
    ++g.cell_start[c + 1];
    ++inserted;
  }
  for (int64_t c = 0; c < cells; ++c) g.cell_start[c + 1] += g.cell_start[c];
  g.inserted = inserted;
  g.order.resize(static_cast<size_t>(inserted));
  g.x.resize(static_cast<size_t>(inserted));
  g.y.resize(static_cast<size_t>(inserted));
  g.z.resize(static_cast<size_t>(inserted));
  std::vector<int32_t> cursor(g.cell_start.begin(), g.cell_start.end() - 1);
  for (int64_t i = 0; i < n; ++i) {  // in point order: each cell's list is sorted by index
    int32_t c = cell_of[i];
    if (c < 0) continue;
    int32_t slot = cursor[c]++;
    g.order[slot] = static_cast<int32_t>(i);
    g.x[slot] = xyz[3 * i];
    g.y[slot] = xyz[3 * i + 1];
    g.z[slot] = xyz[3 * i + 2];
  }
}

}  // namespace pointrt::pointnet2
