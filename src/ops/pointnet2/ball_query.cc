// Optimised BallQuery.
//
// A grid per batch with cells of side ~radius; a centre's ball overlaps at most 3x3x3 cells,
// and the cells of one x-row of that box are one contiguous span of the grid's cell-ordered
// SoA coordinates. Inside a cell the points are in increasing index (spatial_grid.h). Per
// centre, a cost model picks one of three strategies (all return exactly the reference's
// indices):
//  - single pass (balls with up to a few times nsample hits, the common case): test every
//    candidate row by row, sort the hits by index, keep the first nsample;
//  - blocks (big balls): walk the cells in blocks of point indices [lo, hi): every hit of a
//    block precedes every hit of the next block, so after sorting one block's hits the output
//    is in point order, and the walk stops at the first block that completes nsample hits;
//  - in point order over an index-ordered copy (balls holding a large share of the cloud).
// Centres are processed in grid-cell order from a sorted copy of their coordinates, with the
// result rows prefetched a few centres ahead (spatial_grid.h QueryOrder).
#include <omp.h>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <vector>

#include "ops/pointnet2/ball_query.h"
#include "ops/pointnet2/spatial_grid.h"

namespace pointrt::pointnet2 {

BallQueryAttrs parse_ball_query(const Attributes& attrs, const std::string& where) {
  BallQueryAttrs a;
  a.radius = attrs.get_float("radius");
  if (!(a.radius > 0) || !std::isfinite(a.radius))
    fail(where, ": attribute 'radius' must be > 0 and finite, got ", a.radius);
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
  std::vector<Span> spans;  // one per x-row of the cell box
  std::vector<Span> cells;  // one per non-empty cell (block strategy)
  std::vector<int32_t> hits;
  std::vector<int32_t> sorted, bucket_count;
};

// Sort `count` distinct point indices from [lo, hi) ascending. The hits of a block arrive as a
// few dozen sorted runs (one per cell) that std::sort handles with many mispredicted branches;
// a counting sort on the high bits into ~count buckets followed by an insertion pass over the
// nearly sorted result is several times faster at these sizes.
void sort_hits(int32_t* a, int64_t count, int64_t lo, int64_t hi, Scratch& sc) {
  if (count < 2) return;
  if (count > 4096) {
    std::sort(a, a + count);
    return;
  }
  int64_t buckets = 16;
  while (buckets < count) buckets *= 2;
  int shift = 0;
  while (((hi - lo - 1) >> shift) >= buckets) ++shift;
  sc.bucket_count.assign(static_cast<size_t>(buckets) + 1, 0);
  sc.sorted.resize(static_cast<size_t>(count));
  int32_t* counts = sc.bucket_count.data();
  for (int64_t i = 0; i < count; ++i) ++counts[((a[i] - lo) >> shift) + 1];
  for (int64_t b = 0; b < buckets; ++b) counts[b + 1] += counts[b];
  for (int64_t i = 0; i < count; ++i) sc.sorted[counts[(a[i] - lo) >> shift]++] = a[i];
  for (int64_t i = 0; i < count; ++i) {  // insertion within buckets (each holds ~1)
    int32_t v = sc.sorted[i];
    int64_t j = i;
    while (j > 0 && a[j - 1] > v) {
      a[j] = a[j - 1];
      --j;
    }
    a[j] = v;
  }
}

// One batch: the grid, plus an index-ordered SoA copy for scans in point order.
struct BatchIndex {
  SpatialGrid grid;
  std::vector<float> x, y, z;
};

// Tests points [0, len) of SoA arrays against the ball and appends the accepted ones' ids
// (ids[i], or first_id + i when ids is null) to out; returns how many. `out` needs room for
// len + 16 entries (the vector path stores whole registers).
inline int64_t accept_range(const float* x, const float* y, const float* z, const int32_t* ids, int32_t first_id,
                            int64_t len, float cx, float cy, float cz, float r2, float min_r2, int32_t* out) {
  int64_t count = 0, i = 0;
#if defined(__AVX512F__)
  const __m512 vcx = _mm512_set1_ps(cx), vcy = _mm512_set1_ps(cy), vcz = _mm512_set1_ps(cz);
  const __m512 vr2 = _mm512_set1_ps(r2), vmin = _mm512_set1_ps(min_r2), zero = _mm512_setzero_ps();
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (; i < len; i += 16) {
    const __mmask16 live = len - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (len - i)) - 1);
    // Same operations, same order as squared_distance(centre, point): bit-identical d2.
    __m512 dx = _mm512_sub_ps(vcx, _mm512_maskz_loadu_ps(live, x + i));
    __m512 dy = _mm512_sub_ps(vcy, _mm512_maskz_loadu_ps(live, y + i));
    __m512 dz = _mm512_sub_ps(vcz, _mm512_maskz_loadu_ps(live, z + i));
    __m512 d2 = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)), _mm512_mul_ps(dz, dz));
    __mmask16 hit = _mm512_cmp_ps_mask(d2, zero, _CMP_EQ_OQ) |
                    (_mm512_cmp_ps_mask(d2, vmin, _CMP_GE_OQ) & _mm512_cmp_ps_mask(d2, vr2, _CMP_LT_OQ));
    hit &= live;
    __m512i id = ids ? _mm512_maskz_loadu_epi32(live, ids + i)
                     : _mm512_add_epi32(_mm512_set1_epi32(first_id + static_cast<int32_t>(i)), iota);
    // Compress in a register, then a plain store (compress-to-memory is slow on some cores).
    _mm512_storeu_si512(out + count, _mm512_maskz_compress_epi32(hit, id));
    count += __builtin_popcount(hit);
  }
#else
  for (; i < len; ++i) {
    float d2 = squared_distance(cx, cy, cz, x[i], y[i], z[i]);
    out[count] = ids ? ids[i] : first_id + static_cast<int32_t>(i);
    count += ball_query_accepts(d2, r2, min_r2);
  }
#endif
  return count;
}

// Scan in point order (index-ordered SoA), stopping once nsample hits are in. Best when the
// ball holds a large share of the cloud. Returns the hits written to out (room nsample + 80).
int64_t scan_prefix(const BatchIndex& bi, int64_t n, const float* centre, const BallQueryAttrs& a, int32_t* out) {
  const float r2 = a.radius2(), min_r2 = a.min_radius2();
  int64_t count = 0;
  for (int64_t start = 0; start < n && count < a.nsample; start += 64)
    count += accept_range(bi.x.data() + start, bi.y.data() + start, bi.z.data() + start, nullptr,
                          static_cast<int32_t>(start), std::min<int64_t>(64, n - start), centre[0], centre[1],
                          centre[2], r2, min_r2, out + count);
  return std::min(count, a.nsample);
}

// The reference scan for one centre (used for non-finite centres, whose d2 is never finite).
void scan_in_order(const float* pts, int64_t n, const float* centre, const BallQueryAttrs& a, int32_t* out) {
  const float r2 = a.radius2(), min_r2 = a.min_radius2();
  int64_t count = 0;
  for (int64_t k = 0; k < n && count < a.nsample; ++k)
    if (ball_query_accepts(squared_distance(centre, pts + 3 * k), r2, min_r2)) out[count++] = static_cast<int32_t>(k);
  for (int64_t s = count; s < a.nsample; ++s) out[s] = count ? out[0] : 0;
}

// Rough costs in nanoseconds of the strategies, to pick one per centre (the result is the
// same whichever runs).
constexpr double kTestCost = 0.2, kSpanCost = 8, kSortCostPerHit = 4;

// Strategy (3) of query_one: cell by cell in blocks of point indices, stopping at the first block
// that completes nsample hits. Returns the hits written to `out`, in point order.
int64_t query_cell_blocks(const SpatialGrid& g, const int64_t lo[3], const int64_t hi[3], int64_t n,
                          const float* centre, const BallQueryAttrs& a, double expected, Scratch& sc, int32_t* hits,
                          int32_t* out) {
  const int64_t nsample = a.nsample;
  const double want = static_cast<double>(nsample);
  const float r2 = a.radius2(), min_r2 = a.min_radius2();
  const float cx = centre[0], cy = centre[1], cz = centre[2];
  int64_t count = 0;
  // Per-cell spans: inside a cell the points are in increasing index.
  sc.cells.clear();
  for (int64_t z = lo[2]; z <= hi[2]; ++z)
    for (int64_t y = lo[1]; y <= hi[1]; ++y)
      for (int64_t x = lo[0]; x <= hi[0]; ++x) {
        int64_t id = g.cell_id(x, y, z);
        if (g.cell_start[id] < g.cell_start[id + 1]) sc.cells.push_back({g.cell_start[id], g.cell_start[id + 1]});
      }
  int64_t block = n;  // one pass over all candidates
  if (expected > 2.0 * want)
    block = std::max<int64_t>(256, static_cast<int64_t>(static_cast<double>(n) * 2.0 * want / expected));
  for (int64_t block_begin = 0; block_begin < n && count < nsample; block_begin += block) {
    const int64_t block_end = std::min(n, block_begin + block);
    int64_t found = 0;
    for (Span& s : sc.cells) {
      const int32_t* first = g.order.data() + s.cursor;
      // Cells list their points in increasing index: the block's part is a prefix.
      int32_t stop =
          block_end == n
              ? s.end
              : static_cast<int32_t>(std::lower_bound(first, g.order.data() + s.end, static_cast<int32_t>(block_end)) -
                                     g.order.data());
      found += accept_range(g.x.data() + s.cursor, g.y.data() + s.cursor, g.z.data() + s.cursor, first, 0,
                            stop - s.cursor, cx, cy, cz, r2, min_r2, hits + found);
      s.cursor = stop;
    }
    // The block's hits come cell by cell; put them in point order and keep what is needed.
    int64_t take = std::min(found, nsample - count);
    sort_hits(hits, found, block_begin, block_end, sc);
    std::copy(hits, hits + take, out + count);
    count += take;
  }
  return count;
}

void query_one(const BatchIndex& bi, int64_t n, const float* centre, const BallQueryAttrs& a, double reach, Scratch& sc,
               int32_t* out) {
  const SpatialGrid& g = bi.grid;
  const int64_t nsample = a.nsample;
  const float r2 = a.radius2(), min_r2 = a.min_radius2();
  const float cx = centre[0], cy = centre[1], cz = centre[2];
  int64_t lo[3], hi[3];
  int64_t count = 0;
  if (g.inserted > 0 && g.range(centre, reach, lo, hi)) {
    // The cells of one x-row of the box are consecutive in `order`: one span per row.
    sc.spans.clear();
    int64_t candidates = 0;
    for (int64_t z = lo[2]; z <= hi[2]; ++z)
      for (int64_t y = lo[1]; y <= hi[1]; ++y) {
        int32_t b = g.cell_start[g.cell_id(lo[0], y, z)], e = g.cell_start[g.cell_id(hi[0], y, z) + 1];
        if (b < e) {
          sc.spans.push_back({b, e});
          candidates += e - b;
        }
      }
    if (candidates > 0) {
      const int64_t cells = static_cast<int64_t>(sc.spans.size()) * (hi[0] - lo[0] + 1);
      // Expected hits: candidates times the ball's share of the scanned cell box.
      double box = static_cast<double>((hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1)) * g.cell *
                   g.cell * g.cell;
      double ball = 4.18879 * static_cast<double>(a.radius) * a.radius * a.radius;
      double expected = std::max(1e-9, static_cast<double>(candidates) * std::min(1.0, ball / box));
      double want = static_cast<double>(nsample);
      // (1) in point order over the whole cloud until nsample hits (big balls);
      double in_order_cost = kTestCost * std::min(static_cast<double>(n), want * static_cast<double>(n) / expected);
      // (2) every candidate once, row by row, then sort all hits (balls with few hits);
      double single_cost = kTestCost * static_cast<double>(candidates) +
                           kSpanCost * static_cast<double>(sc.spans.size()) + kSortCostPerHit * expected;
      // (3) cell by cell in blocks of point indices, stopping at the first block with nsample.
      double block_tests = static_cast<double>(candidates) * std::min(1.0, 2.0 * want / expected);
      double block_cost = kTestCost * block_tests + kSpanCost * static_cast<double>(cells) +
                          kSortCostPerHit * std::min(expected, 2.0 * want);
      if (sc.hits.size() < static_cast<size_t>(std::max<int64_t>(candidates, nsample + 64) + 16))
        sc.hits.resize(static_cast<size_t>(std::max<int64_t>(candidates, nsample + 64) + 16));
      int32_t* hits = sc.hits.data();
      if (in_order_cost < std::min(single_cost, block_cost)) {
        count = scan_prefix(bi, n, centre, a, hits);
        std::copy(hits, hits + count, out);
      } else if (single_cost <= block_cost) {
        int64_t found = 0;
        for (const Span& s : sc.spans)
          found += accept_range(g.x.data() + s.cursor, g.y.data() + s.cursor, g.z.data() + s.cursor,
                                g.order.data() + s.cursor, 0, s.end - s.cursor, cx, cy, cz, r2, min_r2, hits + found);
        sort_hits(hits, found, 0, n, sc);
        count = std::min(found, nsample);
        std::copy(hits, hits + count, out);
      } else {
        count = query_cell_blocks(g, lo, hi, n, centre, a, expected, sc, hits, out);
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
  std::vector<BatchIndex> index(static_cast<size_t>(batch));
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b) {
    const float* pts = xyz + b * n * 3;
    PointBounds bounds = finite_bounds(pts, n);
    BatchIndex& bi = index[b];
    build_grid(bi.grid, pts, n, bounds, reach * 1.0001, 4 * n + 64);
    bi.x.resize(static_cast<size_t>(n));
    bi.y.resize(static_cast<size_t>(n));
    bi.z.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      bi.x[k] = pts[3 * k];
      bi.y[k] = pts[3 * k + 1];
      bi.z[k] = pts[3 * k + 2];
    }
  }
  std::vector<QueryOrder> visit(static_cast<size_t>(batch));
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b) visit[b] = order_queries(index[b].grid, new_xyz + b * m * 3, m);
  const int64_t queries = batch * m;
#pragma omp parallel if (queries > 64)
  {
    Scratch scratch;
#pragma omp for schedule(dynamic, 16)
    for (int64_t slot = 0; slot < queries; ++slot) {
      const int64_t b = slot / m;
      const int64_t q = b * m + visit[b].visit[slot % m];
      if (slot + kPrefetchQueries < queries) {
        const int64_t ahead = slot + kPrefetchQueries, ab = ahead / m;
        prefetch_for_write(idx + (ab * m + visit[ab].visit[ahead % m]) * attrs.nsample,
                           static_cast<size_t>(attrs.nsample) * 4);
      }
      const float* centre = visit[b].xyz.data() + (slot % m) * 3;
      int32_t* out = idx + q * attrs.nsample;
      if (!is_finite_point(centre))
        scan_in_order(xyz + b * n * 3, n, centre, attrs, out);
      else
        query_one(index[b], n, centre, attrs, reach, scratch, out);
    }
  }
}

}  // namespace pointrt::pointnet2
