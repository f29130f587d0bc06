#pragma GCC optimize("fp-contract=off")  // strict float32 (see common.h)
// Optimised BallQuery.
//
// A grid per batch with cells of side ~radius; a centre's ball overlaps at most 3x3x3 cells.
// Inside a cell the points are in increasing index (spatial_grid.h), which lets a centre walk
// its cells in blocks of point indices [lo, hi): every hit of a block precedes every hit of the
// next block, so after sorting one block's hits (few) the output is in point order, and the
// walk stops at the first block that completes nsample hits. The block length is chosen from
// the expected hit count, so a big ball (many hits) reads only a short prefix of the candidates
// while a small ball (fewer hits than nsample) is done in one pass.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "ops/pointnet2/ball_query.h"
#include "ops/pointnet2/spatial_grid.h"

namespace pointrt {
namespace pointnet2 {

BallQueryAttrs parse_ball_query(const Attributes& attrs, const std::string& where) {
  BallQueryAttrs a;
  a.radius = attrs.get_float("radius");
  if (!(a.radius > 0) || !std::isfinite(a.radius)) fail(where, ": attribute 'radius' must be > 0 and finite, got ", a.radius);
  a.nsample = attrs.get_int("nsample");
  if (a.nsample < 1) fail(where, ": attribute 'nsample' must be >= 1, got ", a.nsample);
  if (a.nsample > std::numeric_limits<int32_t>::max()) fail(where, ": attribute 'nsample' is too large: ", a.nsample);
  a.min_radius = attrs.get_float("min_radius", 0.0f);
  if (!(a.min_radius >= 0) || !std::isfinite(a.min_radius))
    fail(where, ": attribute 'min_radius' must be >= 0 and finite, got ", a.min_radius);
  return a;
}

namespace {

struct Span {
  int32_t cursor, end;
};

struct Scratch {
  std::vector<Span> spans;
  std::vector<int32_t> hits;
};

// The reference scan for one centre (used for non-finite centres, whose d2 is never finite).
void scan_in_order(const float* pts, int64_t n, const float* centre, const BallQueryAttrs& a, int32_t* out) {
  const float r2 = a.radius2(), min_r2 = a.min_radius2();
  int64_t count = 0;
  for (int64_t k = 0; k < n && count < a.nsample; ++k)
    if (ball_query_accepts(squared_distance(centre, pts + 3 * k), r2, min_r2)) out[count++] = static_cast<int32_t>(k);
  for (int64_t s = count; s < a.nsample; ++s) out[s] = count ? out[0] : 0;
}

void query_one(const SpatialGrid& g, int64_t n, const float* centre, const BallQueryAttrs& a, double reach,
               Scratch& sc, int32_t* out) {
  const int64_t nsample = a.nsample;
  const float r2 = a.radius2(), min_r2 = a.min_radius2();
  const float cx = centre[0], cy = centre[1], cz = centre[2];
  int64_t lo[3], hi[3];
  int64_t count = 0;
  if (g.inserted > 0 && g.range(centre, reach, lo, hi)) {
    sc.spans.clear();
    int64_t candidates = 0;
    for (int64_t z = lo[2]; z <= hi[2]; ++z)
      for (int64_t y = lo[1]; y <= hi[1]; ++y)
        for (int64_t x = lo[0]; x <= hi[0]; ++x) {
          int64_t id = g.cell_id(x, y, z);
          int32_t b = g.cell_start[id], e = g.cell_start[id + 1];
          if (b < e) {
            sc.spans.push_back({b, e});
            candidates += e - b;
          }
        }
    if (candidates > 0) {
      if (sc.hits.size() < static_cast<size_t>(candidates)) sc.hits.resize(static_cast<size_t>(candidates));
      int32_t* hits = sc.hits.data();
      const float* __restrict gx = g.x.data();
      const float* __restrict gy = g.y.data();
      const float* __restrict gz = g.z.data();
      const int32_t* __restrict order = g.order.data();
      // Expected hits: candidates times the ball's share of the scanned cell box.
      double box = static_cast<double>((hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1)) * g.cell * g.cell * g.cell;
      double ball = 4.18879 * static_cast<double>(a.radius) * a.radius * a.radius;
      double expected = static_cast<double>(candidates) * std::min(1.0, ball / box);
      int64_t block = n;  // one pass over all candidates
      if (expected > 2.0 * static_cast<double>(nsample))
        block = std::max<int64_t>(256, static_cast<int64_t>(static_cast<double>(n) * 2.0 * static_cast<double>(nsample) / expected));
      for (int64_t block_begin = 0; block_begin < n && count < nsample; block_begin += block) {
        const int64_t block_end = std::min(n, block_begin + block);
        int64_t found = 0;
        if (block_end == n) {
          for (Span& s : sc.spans) {
            for (int32_t p = s.cursor; p < s.end; ++p) {
              float d2 = squared_distance(cx, cy, cz, gx[p], gy[p], gz[p]);
              hits[found] = order[p];
              found += ball_query_accepts(d2, r2, min_r2);
            }
            s.cursor = s.end;
          }
        } else {
          for (Span& s : sc.spans) {
            int32_t p = s.cursor;
            for (; p < s.end && order[p] < block_end; ++p) {
              float d2 = squared_distance(cx, cy, cz, gx[p], gy[p], gz[p]);
              hits[found] = order[p];
              found += ball_query_accepts(d2, r2, min_r2);
            }
            s.cursor = p;
          }
        }
        // The block's hits come cell by cell; put them in point order and keep what is needed.
        int64_t take = std::min(found, nsample - count);
        if (take < found) {
          std::nth_element(hits, hits + take, hits + found);
          std::sort(hits, hits + take);
        } else {
          std::sort(hits, hits + found);
        }
        std::copy(hits, hits + take, out + count);
        count += take;
      }
    }
  }
  for (int64_t s = count; s < nsample; ++s) out[s] = count ? out[0] : 0;
}

}  // namespace

void ball_query(const float* xyz, const float* new_xyz, int64_t batch, int64_t n, int64_t m,
                const BallQueryAttrs& attrs, int32_t* idx) {
  if (m == 0) return;
  // Search a hair beyond the radius: a float d2 just under radius^2 can belong to a point a
  // few ulps outside the true ball. Cells slightly larger than that keep the box at 3x3x3.
  // d2 also underflows to exactly 0 (always accepted) for offsets below ~2.6e-23 per axis.
  const double reach = std::max(static_cast<double>(attrs.radius) * (1.0 + 1e-4), 1e-22);
  std::vector<SpatialGrid> grids(static_cast<size_t>(batch));
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b) {
    const float* pts = xyz + b * n * 3;
    PointBounds bounds = finite_bounds(pts, n);
    build_grid(grids[b], pts, n, bounds, reach * 1.0001, 4 * n + 64);
  }
  const int64_t queries = batch * m;
#pragma omp parallel if (queries > 64)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 16)
    for (int64_t q = 0; q < queries; ++q) {
      const int64_t b = q / m;
      const float* centre = new_xyz + q * 3;
      int32_t* out = idx + q * attrs.nsample;
      if (!is_finite_point(centre)) scan_in_order(xyz + b * n * 3, n, centre, attrs, out);
      else query_one(grids[b], n, centre, attrs, reach, scratch, out);
    }
  }
}

}  // namespace pointnet2
}  // namespace pointrt
