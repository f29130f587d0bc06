// A uniform spatial grid over one batch of points, built once per run and per batch, used by
// the neighbour searches (BallQuery, KNN, ThreeNN) to look only at nearby cells.
//
// Points are bucketed by cell with a counting sort that keeps point order inside a cell, so
// `order[cell_start[c] .. cell_start[c+1])` lists the points of cell c in increasing index.
// That is what lets BallQuery return "the first nsample hits in point order" exactly. Cells are
// numbered x-fastest, so the cells of one x-row are one contiguous range of `order`.
// Coordinates are copied in `order` (SoA) so a cell scan reads contiguous memory.
//
// Only finite points are inserted. Cell coordinates are computed in double from float inputs;
// the map v -> floor((v - origin) * inv_cell) is monotone, so a query range computed with the
// same map and a small outward margin never misses a point.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace pointrt::pointnet2 {

struct PointBounds {
  double lo[3] = {0, 0, 0};
  double hi[3] = {0, 0, 0};
  int64_t finite = 0;  // number of finite points
};

/// Bounding box of the finite points of xyz [n, 3].
PointBounds finite_bounds(const float* xyz, int64_t n);

struct SpatialGrid {
  double origin[3] = {0, 0, 0};
  double cell = 1;
  double inv_cell = 1;
  int64_t dims[3] = {1, 1, 1};
  std::vector<int32_t> cell_start;  // num_cells() + 1 offsets into order
  std::vector<int32_t> order;       // original point indices sorted by (cell, index)
  std::vector<float> x, y, z;       // coordinates in `order`
  int64_t inserted = 0;             // finite points (= order.size())

  int64_t num_cells() const { return dims[0] * dims[1] * dims[2]; }
  int64_t cell_id(int64_t ix, int64_t iy, int64_t iz) const { return ix + dims[0] * (iy + dims[1] * iz); }
  /// floor((v - origin) / cell) without clamping (may be outside [0, dims)).
  double raw_coord(double v, int axis) const { return std::floor((v - origin[axis]) * inv_cell); }
  /// The cell coordinate clamped into [0, dims).
  int64_t coord(double v, int axis) const {
    double t = raw_coord(v, axis);
    if (!(t >= 0)) return 0;
    if (t >= static_cast<double>(dims[axis] - 1)) return dims[axis] - 1;
    return static_cast<int64_t>(t);
  }
  /// The cell box [lo, hi] (inclusive, clamped) overlapping [v - reach, v + reach] per axis; false
  /// when the range misses the grid on some axis.
  bool range(const float* v, double reach, int64_t lo[3], int64_t hi[3]) const;
};

/// The query indices 0..m-1 of queries [m, 3] sorted by the grid cell they fall in (stable), so
/// that consecutive queries read the same cells: a large cloud then stays in cache.
std::vector<int32_t> queries_by_cell(const SpatialGrid& g, const float* queries, int64_t m);

/// The queries of one batch in the order the searches process them: visit[i] is the original
/// index of the i-th query (queries_by_cell order) and xyz[3i .. 3i+2] its coordinates, copied
/// so that the search loop reads them sequentially instead of one random cache line per query
/// (which, with the scattered result rows, is what made the cost per query grow with N once the
/// queries and outputs no longer fit in L2). Results are still written at the original index.
struct QueryOrder {
  std::vector<int32_t> visit;
  std::vector<float> xyz;
};
QueryOrder order_queries(const SpatialGrid& g, const float* queries, int64_t m);

/// Prefetch (for writing) the `bytes` bytes at p: the result row of a query a few iterations
/// ahead, so that its cache-line misses overlap with the current query's work.
inline void prefetch_for_write(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  bytes = std::min<size_t>(bytes, 512);  // the head of a long row is enough to overlap misses
  for (size_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off, 1, 3);
  if (bytes) __builtin_prefetch(c + bytes - 1, 1, 3);
}

/// How many queries ahead the search loops prefetch result rows.
constexpr int64_t kPrefetchQueries = 8;

/// A cell size that gives about `target_cells` cells over the bounds (at least 1 cell).
double cell_size_for_cell_count(const PointBounds& b, double target_cells);

/// Build the grid of xyz [n, 3] with the given cell size, enlarged when the grid would have more
/// than max_cells cells.
void build_grid(SpatialGrid& g, const float* xyz, int64_t n, const PointBounds& b, double cell, int64_t max_cells);

}  // namespace pointrt::pointnet2

namespace pointrt::pointnet2 {

/// Calls visit(d2, index) for each point p of order[begin, end) whose d2 = squared_distance(q, p)
/// is <= limit() (limit is re-read for every 16 points; visit must do its own final test).
/// The AVX-512 path computes d2 with the same operations in the same order as
/// squared_distance, so the values are bit-identical to the reference's.
template <typename Limit, typename Visit>
inline void scan_candidates(const SpatialGrid& g, int32_t begin, int32_t end, float qx, float qy, float qz,
                            Limit&& limit, Visit&& visit) {
  const float* x = g.x.data();
  const float* y = g.y.data();
  const float* z = g.z.data();
  const int32_t* order = g.order.data();
#if defined(__AVX512F__)
  const __m512 vqx = _mm512_set1_ps(qx), vqy = _mm512_set1_ps(qy), vqz = _mm512_set1_ps(qz);
  alignas(64) float d2s[16];
  for (int32_t p = begin; p < end; p += 16) {
    const __mmask16 live = end - p >= 16 ? __mmask16(0xffff) : __mmask16((1u << (end - p)) - 1);
    __m512 dx = _mm512_sub_ps(vqx, _mm512_maskz_loadu_ps(live, x + p));
    __m512 dy = _mm512_sub_ps(vqy, _mm512_maskz_loadu_ps(live, y + p));
    __m512 dz = _mm512_sub_ps(vqz, _mm512_maskz_loadu_ps(live, z + p));
    __m512 d2 = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)), _mm512_mul_ps(dz, dz));
    unsigned mask = _mm512_mask_cmp_ps_mask(live, d2, _mm512_set1_ps(limit()), _CMP_LE_OQ);
    if (!mask) continue;
    _mm512_store_ps(d2s, d2);
    while (mask) {
      int lane = __builtin_ctz(mask);
      mask &= mask - 1;
      visit(d2s[lane], order[p + lane]);
    }
  }
#else
  for (int32_t p = begin; p < end; ++p) {
    float d = qx - x[p], e = qy - y[p], f = qz - z[p];
    float dd = d * d, ee = e * e, ff = f * f;
    float d2 = (dd + ee) + ff;
    if (d2 <= limit()) visit(d2, order[p]);
  }
#endif
}

/// Ring search for exact k-nearest queries: visits the cells around q's (clamped) cell in rings
/// of growing Chebyshev radius R = 0, 1, 2, ... For each ring, scan(begin, end) is called with
/// ranges of `order` (one per x-row segment). After each ring, stop(bound2) is asked whether to
/// finish, where bound2 is a conservative lower bound on the float32 d2 of every point not yet
/// visited (accounting for the float rounding of d2 and of cell membership); once every cell is
/// visited the search ends. A k-th best d2 strictly below bound2 is final, including its
/// tie-break by index (an unvisited point cannot even tie it).
template <typename Scan, typename Stop>
void ring_search(const SpatialGrid& g, const float* q, Scan&& scan, Stop&& stop) {
  const int64_t c[3] = {g.coord(q[0], 0), g.coord(q[1], 1), g.coord(q[2], 2)};
  const int64_t max_dim = std::max(g.dims[0], std::max(g.dims[1], g.dims[2]));
  // Cell membership uses floor((v - origin) * inv_cell) in double: its boundaries sit within a
  // few double ulps of origin + i * cell. Shrink the gap by far more than that.
  const double slack = 1e-9 * g.cell * static_cast<double>(max_dim + 1) +
                       1e-12 * (std::fabs(g.origin[0]) + std::fabs(g.origin[1]) + std::fabs(g.origin[2]));
  // Squared distance from q to the grid's box along each axis (0 inside), shrunk by the slack.
  double out2[3], out2_total = 0;
  for (int a = 0; a < 3; ++a) {
    const double lo = g.origin[a], hi = g.origin[a] + static_cast<double>(g.dims[a]) * g.cell;
    double out = std::max(0.0, std::max(lo - static_cast<double>(q[a]), static_cast<double>(q[a]) - hi) - slack);
    out2[a] = out * out;
    out2_total += out2[a];
  }
  for (int64_t r = 0;; ++r) {
    const int64_t z0 = std::max<int64_t>(0, c[2] - r), z1 = std::min(g.dims[2] - 1, c[2] + r);
    const int64_t y0 = std::max<int64_t>(0, c[1] - r), y1 = std::min(g.dims[1] - 1, c[1] + r);
    const int64_t x0 = std::max<int64_t>(0, c[0] - r), x1 = std::min(g.dims[0] - 1, c[0] + r);
    for (int64_t z = z0; z <= z1; ++z)
      for (int64_t y = y0; y <= y1; ++y) {
        if (z == c[2] - r || z == c[2] + r || y == c[1] - r || y == c[1] + r) {
          // A face row of the shell: the whole x-range, one contiguous span of `order`.
          int32_t b = g.cell_start[g.cell_id(x0, y, z)], e = g.cell_start[g.cell_id(x1, y, z) + 1];
          if (b < e) scan(b, e);
        } else {  // an inner row: only its two end cells belong to the shell
          if (c[0] - r >= 0) {
            int64_t id = g.cell_id(c[0] - r, y, z);
            if (g.cell_start[id] < g.cell_start[id + 1]) scan(g.cell_start[id], g.cell_start[id + 1]);
          }
          if (c[0] + r < g.dims[0]) {
            int64_t id = g.cell_id(c[0] + r, y, z);
            if (g.cell_start[id] < g.cell_start[id + 1]) scan(g.cell_start[id], g.cell_start[id + 1]);
          }
        }
      }
    bool exhausted = true;
    double bound2 = std::numeric_limits<double>::infinity();
    for (int a = 0; a < 3; ++a) {
      // Points beyond a face of the visited box on axis a are at least `gap` away along a, and
      // at least out2 of the other axes away from q across them (q may lie outside the grid).
      const double across = out2_total - out2[a];
      if (c[a] - r > 0) {  // unvisited cells below on this axis
        exhausted = false;
        double gap = static_cast<double>(q[a]) - (g.origin[a] + static_cast<double>(c[a] - r) * g.cell) - slack;
        bound2 = std::min(bound2, (gap > 0 ? gap * gap : 0.0) + across);
      }
      if (c[a] + r < g.dims[a] - 1) {  // and above
        exhausted = false;
        double gap = g.origin[a] + static_cast<double>(c[a] + r + 1) * g.cell - static_cast<double>(q[a]) - slack;
        bound2 = std::min(bound2, (gap > 0 ? gap * gap : 0.0) + across);
      }
    }
    if (exhausted) return;
    // float d2 of a point at true squared distance D is >= D * (1 - 2^-21) (a few roundings).
    bound2 *= 1.0 - 1e-5;
    if (stop(bound2)) return;
  }
}

}  // namespace pointrt::pointnet2
