// Optimised MeanShift: per task (batch, instance, vote set) the finite votes are copied into SoA
// arrays; the density count adds the pairs inside a clustered core wholesale when there is one
// (PVN3D's votes are clustered), every other pair is tested once (symmetric, four rows at a time,
// vectorised); the shift runs in float32 with a vectorisable exp. OpenMP over tasks, largest first.
#include "ops/pose/mean_shift.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "ops/onnx/elementwise/elementwise.h"  // fast_exp_block: vectorises, within 2 ulp of expf
#include "ops/pose/pose_common.h"

namespace pointrt::pose {

MeanShiftAttrs parse_mean_shift(const Attributes& attrs, const std::string& where) {
  MeanShiftAttrs a;
  a.num_instances = attrs.get_int("num_instances");
  a.bandwidth = attrs.get_float("bandwidth");
  a.max_iterations = attrs.get_int("max_iterations", 300);
  a.stop_threshold = attrs.get_float("stop_threshold", a.bandwidth * 1e-3f);
  a.ignore_label = attrs.get_int("ignore_label", -1);
  a.filter_vote = attrs.get_int("filter_vote", -1);
  if (a.num_instances < 1 || a.num_instances > (int64_t(1) << 20))
    fail(where, ": attribute 'num_instances' = ", a.num_instances, " must be in [1, 2^20]");
  if (!(a.bandwidth > 0.f) || !std::isfinite(a.bandwidth))
    fail(where, ": attribute 'bandwidth' = ", a.bandwidth, " must be finite and > 0");
  if (a.max_iterations < 0) fail(where, ": attribute 'max_iterations' = ", a.max_iterations, " must be >= 0");
  if (!(a.stop_threshold >= 0.f)) fail(where, ": attribute 'stop_threshold' = ", a.stop_threshold, " must be >= 0");
  if (a.filter_vote < -1) fail(where, ": attribute 'filter_vote' = ", a.filter_vote, " must be -1 or a vote set index");
  return a;
}

namespace {

struct SetPoints {
  std::vector<float> x, y, z;
  std::vector<int32_t> index;  // point index of each entry
  std::vector<int32_t> count;  // density counts
  detail::DensityScratch scratch;
};

void gather_finite(const float* set_votes, const int32_t* members, int64_t m, SetPoints& p) {
  p.x.clear();
  p.y.clear();
  p.z.clear();
  p.index.clear();
  p.x.reserve(static_cast<size_t>(m));
  p.y.reserve(static_cast<size_t>(m));
  p.z.reserve(static_cast<size_t>(m));
  p.index.reserve(static_cast<size_t>(m));
  for (int64_t t = 0; t < m; ++t) {
    const float* v = set_votes + 3 * static_cast<int64_t>(members[t]);
    if (!finite3(v)) continue;
    p.x.push_back(v[0]);
    p.y.push_back(v[1]);
    p.z.push_back(v[2]);
    p.index.push_back(members[t]);
  }
}

// Counts of rows [i0, i0 + 4) against j in [j0, j1), added to both sides (cnt[j] once per j for
// all four rows: one read-modify-write instead of four).
inline void count_block4(const float* x, const float* y, const float* z, int64_t i0, int64_t j0, int64_t j1, float bw2,
                         int32_t* cnt) {
  const float x0 = x[i0], y0 = y[i0], z0 = z[i0], x1 = x[i0 + 1], y1 = y[i0 + 1], z1 = z[i0 + 1];
  const float x2 = x[i0 + 2], y2 = y[i0 + 2], z2 = z[i0 + 2], x3 = x[i0 + 3], y3 = y[i0 + 3], z3 = z[i0 + 3];
  int32_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
#pragma omp simd reduction(+ : c0, c1, c2, c3)
  for (int64_t j = j0; j < j1; ++j) {
    const float xj = x[j], yj = y[j], zj = z[j];
    float dx = x0 - xj, dy = y0 - yj, dz = z0 - zj;
    const int32_t h0 = (dx * dx + dy * dy) + dz * dz < bw2;
    dx = x1 - xj, dy = y1 - yj, dz = z1 - zj;
    const int32_t h1 = (dx * dx + dy * dy) + dz * dz < bw2;
    dx = x2 - xj, dy = y2 - yj, dz = z2 - zj;
    const int32_t h2 = (dx * dx + dy * dy) + dz * dz < bw2;
    dx = x3 - xj, dy = y3 - yj, dz = z3 - zj;
    const int32_t h3 = (dx * dx + dy * dy) + dz * dz < bw2;
    cnt[j] += (h0 + h1) + (h2 + h3);
    c0 += h0;
    c1 += h1;
    c2 += h2;
    c3 += h3;
  }
  cnt[i0] += c0;
  cnt[i0 + 1] += c1;
  cnt[i0 + 2] += c2;
  cnt[i0 + 3] += c3;
}

inline void count_row(const float* x, const float* y, const float* z, int64_t i, int64_t j0, int64_t j1, float bw2,
                      int32_t* cnt) {
  int32_t c = 0;
#pragma omp simd reduction(+ : c)
  for (int64_t j = j0; j < j1; ++j) {
    const float dx = x[i] - x[j], dy = y[i] - y[j], dz = z[i] - z[j];
    const int32_t hit = (dx * dx + dy * dy) + dz * dz < bw2;
    c += hit;
    cnt[j] += hit;
  }
  cnt[i] += c;
}

// Pairs (i, j), b0 <= i < j < e0, tested once each and added to both counts (not i itself).
void count_within(const float* x, const float* y, const float* z, int64_t b0, int64_t e0, float bw2, int32_t* cnt) {
  int64_t i = b0;
  for (; i + 4 <= e0; i += 4) {
    for (int64_t a = i; a < i + 3; ++a) count_row(x, y, z, a, a + 1, i + 4, bw2, cnt);  // inside the block
    count_block4(x, y, z, i, i + 4, e0, bw2, cnt);
  }
  for (; i < e0; ++i) count_row(x, y, z, i, i + 1, e0, bw2, cnt);
}

// Pairs (i, j), i in [b0, e0), j in [b1, e1) (disjoint ranges), added to both counts.
void count_across(const float* x, const float* y, const float* z, int64_t b0, int64_t e0, int64_t b1, int64_t e1,
                  float bw2, int32_t* cnt) {
  int64_t i = b0;
  for (; i + 4 <= e0; i += 4) count_block4(x, y, z, i, b1, e1, bw2, cnt);
  for (; i < e0; ++i) count_row(x, y, z, i, b1, e1, bw2, cnt);
}

}  // namespace

namespace detail {

void density_counts_direct(const float* x, const float* y, const float* z, int64_t n, float bw2, int32_t* count) {
  std::fill(count, count + n, 1);  // itself: d2 = 0 < bw2
  count_within(x, y, z, 0, n, bw2, count);
}

namespace {

// The median of at most 31 votes spread over the set: any centre keeps the counts exact; this one
// is cheap and lands in the cluster when most votes are in one.
double sampled_median(const float* v, int64_t n, std::vector<float>& tmp) {
  const int64_t step = (n + 30) / 31;
  tmp.clear();
  for (int64_t i = 0; i < n; i += step) tmp.push_back(v[i]);
  const size_t mid = tmp.size() / 2;
  std::nth_element(tmp.begin(), tmp.begin() + static_cast<std::ptrdiff_t>(mid), tmp.end());
  return tmp[mid];
}

}  // namespace

bool density_counts_core(const float* x, const float* y, const float* z, int64_t n, float bw2, int32_t* count,
                         DensityScratch& s) {
  // The core: the votes within (bandwidth / 2)(1 - 1e-3) of a centre (a sampled coordinate-wise
  // median), so any two are within the bandwidth with a margin far above float32's rounding of d2
  // (a few 1e-7). Distances are compared squared, in double.
  const double bw = std::sqrt(static_cast<double>(bw2)), core_radius = 0.5 * bw * (1 - 1e-3);
  const double cx = sampled_median(x, n, s.x), cy = sampled_median(y, n, s.x), cz = sampled_median(z, n, s.x);
  // The others: beyond bw + r of the centre (with the margin) they hit no core vote ("far"); the
  // rest ("boundary") are tested against the core. (Hitting every core vote would need a distance
  // under bw - r ~ r: none outside the core.)
  const double core2 = core_radius * core_radius, far2 = std::pow((bw + core_radius) * (1 + 1e-3), 2);
  enum : uint8_t { kBoundary, kFar, kCore };
  s.kind.resize(static_cast<size_t>(n));
  uint8_t* kind = s.kind.data();
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const double dx = x[i] - cx, dy = y[i] - cy, dz = z[i] - cz, d2 = dx * dx + dy * dy + dz * dz;
    kind[i] = d2 <= core2 ? kCore : d2 > far2 ? kFar : kBoundary;
  }
  int64_t size[3] = {0, 0, 0};
  for (int64_t i = 0; i < n; ++i) ++size[kind[i]];
  if (size[kCore] * 4 < n) return false;
  // Order: boundary, far, core votes; `order` maps back.
  int64_t next[3] = {0, size[kBoundary], n - size[kCore]};
  s.order.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) s.order[next[kind[i]]++] = i;
  const int64_t boundary = size[kBoundary], rest = n - size[kCore];
  s.x.resize(static_cast<size_t>(n));
  s.y.resize(static_cast<size_t>(n));
  s.z.resize(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = s.order[k];
    s.x[k] = x[i], s.y[k] = y[i], s.z[k] = z[i];
  }
  s.count.assign(static_cast<size_t>(n), 1);  // itself
  int32_t* cnt = s.count.data();
  const float *sx = s.x.data(), *sy = s.y.data(), *sz = s.z.data();
  count_within(sx, sy, sz, 0, rest, bw2, cnt);                                      // non-core pairs
  count_across(sx, sy, sz, 0, boundary, rest, n, bw2, cnt);                         // boundary x core
  for (int64_t k = rest; k < n; ++k) cnt[k] += static_cast<int32_t>(n - rest - 1);  // the other core votes
  for (int64_t k = 0; k < n; ++k) count[s.order[k]] = cnt[k];
  return true;
}

void density_counts(const float* x, const float* y, const float* z, int64_t n, float bw2, int32_t* count,
                    DensityScratch& s) {
  // A bandwidth^2 near float32's underflow (bandwidth < ~1e-15) loses the relative precision the
  // core's margins rely on (and at 0 every vote would be a core of its duplicates): every pair is
  // tested then.
  if (n < 64 || bw2 < 1e-30f || !density_counts_core(x, y, z, n, bw2, count, s))
    density_counts_direct(x, y, z, n, bw2, count);
}

}  // namespace detail

namespace {

// Entry (in p) of the vote with the most neighbours within the bandwidth, ties to the lowest (the
// entries are in point order).
int64_t densest(SetPoints& p, float bw2) {
  const int64_t n = static_cast<int64_t>(p.x.size());
  p.count.resize(static_cast<size_t>(n));
  detail::density_counts(p.x.data(), p.y.data(), p.z.data(), n, bw2, p.count.data(), p.scratch);
  return std::max_element(p.count.begin(), p.count.end()) - p.count.begin();  // first maximum
}

// The Gaussian shift from the seed, accumulated relative to the seed (less cancellation). The
// weights are computed in blocks of 256 through fast_exp_block: with the exp inlined into the sum
// loop GCC does not vectorise it.
void shift_from(const SetPoints& p, int64_t seed, const MeanShiftAttrs& a, float* mode) {
  constexpr int64_t kBlock = 256;
  const int64_t n = static_cast<int64_t>(p.x.size());
  const float *x = p.x.data(), *y = p.y.data(), *z = p.z.data();
  const float ox = x[seed], oy = y[seed], oz = z[seed];
  const float inv = 1.f / (2.f * a.bandwidth * a.bandwidth), thr2 = a.stop_threshold * a.stop_threshold;
  float mx = 0, my = 0, mz = 0;  // relative to the seed
  float arg[kBlock], w[kBlock];
  for (int64_t it = 0; it < a.max_iterations; ++it) {
    float sw = 0, sx = 0, sy = 0, sz = 0;
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      const int64_t len = std::min(kBlock, n - j0);
      const float *bx = x + j0, *by = y + j0, *bz = z + j0;
#pragma omp simd
      for (int64_t j = 0; j < len; ++j) {
        const float dx = mx - (bx[j] - ox), dy = my - (by[j] - oy), dz = mz - (bz[j] - oz);
        arg[j] = -((dx * dx + dy * dy) + dz * dz) * inv;
      }
      elementwise::fast_exp_block(arg, w, len);
#pragma omp simd reduction(+ : sw, sx, sy, sz)
      for (int64_t j = 0; j < len; ++j) {
        sw += w[j];
        sx += w[j] * (bx[j] - ox);
        sy += w[j] * (by[j] - oy);
        sz += w[j] * (bz[j] - oz);
      }
    }
    if (!(sw > 0.f)) break;
    const float nx = sx / sw, ny = sy / sw, nz = sz / sw;
    const float shift2 = (nx - mx) * (nx - mx) + (ny - my) * (ny - my) + (nz - mz) * (nz - mz);
    mx = nx;
    my = ny;
    mz = nz;
    if (shift2 < thr2) break;
  }
  mode[0] = ox + mx;
  mode[1] = oy + my;
  mode[2] = oz + mz;
}

struct Task {
  int64_t batch, instance, set;
  int64_t size;  // members before the finite filter (for scheduling)
};

// Runs one task over `members`; returns the inliers of the densest point when asked.
void run_task(const float* set_votes, const int32_t* members, int64_t m, const MeanShiftAttrs& a, float* mode,
              int32_t* count, std::vector<int32_t>* inliers) {
  SetPoints p;
  gather_finite(set_votes, members, m, p);
  *count = static_cast<int32_t>(p.x.size());
  mode[0] = mode[1] = mode[2] = 0.f;
  if (p.x.empty()) return;
  const float bw2 = a.bandwidth * a.bandwidth;
  const int64_t seed = densest(p, bw2);
  if (inliers) {
    const float sx = p.x[seed], sy = p.y[seed], sz = p.z[seed];
    for (size_t j = 0; j < p.x.size(); ++j) {
      const float dx = sx - p.x[j], dy = sy - p.y[j], dz = sz - p.z[j];
      if ((dx * dx + dy * dy) + dz * dz < bw2) inliers->push_back(p.index[j]);
    }
  }
  shift_from(p, seed, a, mode);
}

void run_tasks(std::vector<Task>& tasks, const std::function<void(const Task&)>& fn) {
  std::sort(tasks.begin(), tasks.end(), [](const Task& l, const Task& r) { return l.size > r.size; });
  const int64_t count = static_cast<int64_t>(tasks.size());
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
  for (int64_t t = 0; t < count; ++t) fn(tasks[t]);
}

}  // namespace

void mean_shift(const float* votes, const int32_t* labels, int64_t batch, int64_t sets, int64_t n,
                const MeanShiftAttrs& a, float* modes, int32_t* counts) {
  const int64_t instances = a.num_instances, f = a.filter_vote;
  std::vector<InstanceBuckets> buckets(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) buckets[b] = bucket_by_instance(labels + b * n, n, instances, a.ignore_label);
  auto set_votes = [&](int64_t b, int64_t k) { return votes + (b * sets + k) * n * 3; };
  auto row = [&](const Task& t) { return (t.batch * instances + t.instance) * sets + t.set; };
  // Inliers of the filter set per (batch, instance); the members of every other set.
  std::vector<std::vector<int32_t>> voters(static_cast<size_t>(batch * instances));
  std::vector<Task> first, second;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < instances; ++c) {
      const int64_t size = buckets[b].offsets[c + 1] - buckets[b].offsets[c];
      for (int64_t k = 0; k < sets; ++k) (k == f ? first : second).push_back({b, c, k, size});
    }
  run_tasks(first, [&](const Task& t) {
    const InstanceBuckets& bk = buckets[t.batch];
    const int64_t r = row(t);
    run_task(set_votes(t.batch, t.set), bk.order.data() + bk.offsets[t.instance], t.size, a, modes + 3 * r, counts + r,
             &voters[t.batch * instances + t.instance]);
  });
  for (Task& t : second)
    if (f >= 0) t.size = static_cast<int64_t>(voters[t.batch * instances + t.instance].size());
  run_tasks(second, [&](const Task& t) {
    const InstanceBuckets& bk = buckets[t.batch];
    const int32_t* members =
        f >= 0 ? voters[t.batch * instances + t.instance].data() : bk.order.data() + bk.offsets[t.instance];
    const int64_t r = row(t);
    run_task(set_votes(t.batch, t.set), members, t.size, a, modes + 3 * r, counts + r, nullptr);
  });
}

}  // namespace pointrt::pose
