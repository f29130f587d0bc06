// Optimised FurthestPointSample. The O(N * npoint) work is inherent; what matters is that each
// of the npoint passes is one vectorised sweep over a SoA copy (x, y, z, dist) with a blocked
// arg-max: the sweep keeps only each block's maximum (a SIMD max-reduction), and the lowest
// index holding the overall maximum is then found inside the first block that reached it.
// Non-candidates (ignore_origin) get dist = -1 forever: fps_min never raises it and it never
// beats the initial best of -1, exactly like skipping them.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "ops/pointnet2/furthest_point_sample.h"

namespace pointrt::pointnet2 {

FurthestPointSampleAttrs parse_furthest_point_sample(const Attributes& attrs, const std::string& where) {
  FurthestPointSampleAttrs a;
  a.npoint = attrs.get_int("npoint");
  if (a.npoint < 1) fail(where, ": attribute 'npoint' must be >= 1, got ", a.npoint);
  if (a.npoint > std::numeric_limits<int32_t>::max()) fail(where, ": attribute 'npoint' is too large: ", a.npoint);
  int64_t ignore = attrs.get_int("ignore_origin", 0);
  if (ignore != 0 && ignore != 1) fail(where, ": attribute 'ignore_origin' must be 0 or 1, got ", ignore);
  a.ignore_origin = ignore == 1;
  return a;
}

namespace {

constexpr int64_t kBlock = 256;

struct ScanResult {
  float best = -1;
  int64_t index = -1;  // -1: no candidate in the range
};

struct Soa {
  std::vector<float> x, y, z, dist;
  explicit Soa(int64_t n) : x(n), y(n), z(n), dist(n) {}
};

void fill_soa(const float* pts, int64_t begin, int64_t end, bool ignore_origin, Soa& s) {
  for (int64_t k = begin; k < end; ++k) {
    float px = pts[3 * k], py = pts[3 * k + 1], pz = pts[3 * k + 2];
    s.x[k] = px;
    s.y[k] = py;
    s.z[k] = pz;
    s.dist[k] = fps_is_candidate(px, py, pz, ignore_origin) ? kFpsInitialDistance : -1.0f;
  }
}

// One FPS pass over [begin, end): update dist against (lx, ly, lz), return the largest dist and
// the lowest index holding it.
ScanResult fps_sweep(Soa& s, int64_t begin, int64_t end, float lx, float ly, float lz) {
  const float* __restrict x = s.x.data();
  const float* __restrict y = s.y.data();
  const float* __restrict z = s.z.data();
  float* __restrict dist = s.dist.data();
  float best = -1;
  int64_t best_block = -1;
  for (int64_t b0 = begin; b0 < end; b0 += kBlock) {
    const int64_t b1 = std::min(end, b0 + kBlock);
    float block_max = -1;
#pragma omp simd reduction(max : block_max)
    for (int64_t k = b0; k < b1; ++k) {
      float dx = x[k] - lx, dy = y[k] - ly, dz = z[k] - lz;
      float xx = dx * dx, yy = dy * dy, zz = dz * dz;
      float d = (xx + yy) + zz;
      float m = fps_min(d, dist[k]);
      dist[k] = m;
      block_max = block_max > m ? block_max : m;
    }
    if (block_max > best) {  // strict: an earlier block keeps a tie
      best = block_max;
      best_block = b0;
    }
  }
  ScanResult r;
  if (best_block < 0) return r;
  r.best = best;
  for (int64_t k = best_block;; ++k)
    if (dist[k] == best) {
      r.index = k;
      break;
    }
  return r;
}

void fps_one_batch(const float* pts, int64_t n, const FurthestPointSampleAttrs& attrs, int32_t* out) {
  Soa s(n);
  fill_soa(pts, 0, n, attrs.ignore_origin, s);
  out[0] = 0;
  int64_t last = 0;
  for (int64_t j = 1; j < attrs.npoint; ++j) {
    ScanResult r = fps_sweep(s, 0, n, pts[3 * last], pts[3 * last + 1], pts[3 * last + 2]);
    last = r.index < 0 ? 0 : r.index;
    out[j] = static_cast<int32_t>(last);
  }
}

struct alignas(64) ThreadBest {
  ScanResult r;
};

// One batch, its points split over the threads of one parallel region. Every thread reduces
// the per-thread results itself, so each sample costs a single barrier; the results alternate
// between two buffers so a thread running ahead never overwrites what a slower one still reads.
void fps_one_batch_split(const float* pts, int64_t n, const FurthestPointSampleAttrs& attrs, int32_t* out,
                         int threads) {
  Soa s(n);
  std::vector<ThreadBest> results(2 * static_cast<size_t>(threads));
  out[0] = 0;
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num(), nt = omp_get_num_threads();
    int64_t per = (n + nt - 1) / nt;
    per = (per + kBlock - 1) / kBlock * kBlock;
    const int64_t begin = std::min(n, per * tid), end = std::min(n, begin + per);
    fill_soa(pts, begin, end, attrs.ignore_origin, s);
    int64_t last = 0;
    for (int64_t j = 1; j < attrs.npoint; ++j) {
      ThreadBest* slot = results.data() + (j & 1) * nt;
      slot[tid].r = fps_sweep(s, begin, end, pts[3 * last], pts[3 * last + 1], pts[3 * last + 2]);
#pragma omp barrier
      ScanResult best;
      for (int t = 0; t < nt; ++t)  // chunks are in point order: the first maximum is the lowest index
        if (slot[t].r.index >= 0 && slot[t].r.best > best.best) best = slot[t].r;
      last = best.index < 0 ? 0 : best.index;
      if (tid == 0) out[j] = static_cast<int32_t>(last);
    }
  }
}

}  // namespace

void furthest_point_sample(const float* xyz, int64_t batch, int64_t n, const FurthestPointSampleAttrs& attrs,
                           int32_t* idx) {
  const int threads = omp_get_max_threads();
  if (threads > 1 && batch < threads && n / threads >= kFpsMinPointsPerThread) {
    for (int64_t b = 0; b < batch; ++b) fps_one_batch_split(xyz + b * n * 3, n, attrs, idx + b * attrs.npoint, threads);
    return;
  }
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
  for (int64_t b = 0; b < batch; ++b) fps_one_batch(xyz + b * n * 3, n, attrs, idx + b * attrs.npoint);
}

}  // namespace pointrt::pointnet2
