// Naive MeanShift: every density count over all pairs, the shift in double. The test oracle.
#include <cmath>
#include <vector>

#include "ops/pointnet2/common.h"
#include "ops/pose/mean_shift.h"
#include "ops/pose/pose_common.h"

namespace pointrt::pose {

namespace {

using pointnet2::squared_distance;

struct SetResult {
  double mode[3] = {0, 0, 0};
  int32_t count = 0;
  std::vector<int32_t> inliers;
};

// Steps 1 and 2 of the contract over the finite votes of `members` (ascending point indices).
SetResult shift_set(const float* set_votes, const std::vector<int32_t>& members, const MeanShiftAttrs& a) {
  SetResult r;
  std::vector<int32_t> s;
  for (int32_t i : members)
    if (finite3(set_votes + 3 * i)) s.push_back(i);
  r.count = static_cast<int32_t>(s.size());
  if (s.empty()) return r;
  const float bw2 = a.bandwidth * a.bandwidth;
  int64_t best = -1;
  int32_t seed = s[0];
  for (int32_t i : s) {
    int64_t n = 0;
    for (int32_t j : s) n += squared_distance(set_votes + 3 * i, set_votes + 3 * j) < bw2;
    if (n > best) {
      best = n;
      seed = i;
    }
  }
  for (int32_t j : s)
    if (squared_distance(set_votes + 3 * seed, set_votes + 3 * j) < bw2) r.inliers.push_back(j);
  double m[3] = {set_votes[3 * seed], set_votes[3 * seed + 1], set_votes[3 * seed + 2]};
  const double bw = a.bandwidth, inv = 1.0 / (2.0 * bw * bw), thr = a.stop_threshold;
  for (int64_t it = 0; it < a.max_iterations; ++it) {
    double sw = 0, sv[3] = {0, 0, 0};
    for (int32_t j : s) {
      const float* v = set_votes + 3 * j;
      double d2 = 0;
      for (int d = 0; d < 3; ++d) d2 += (m[d] - v[d]) * (m[d] - v[d]);
      const double w = std::exp(-d2 * inv);
      sw += w;
      for (int d = 0; d < 3; ++d) sv[d] += w * v[d];
    }
    if (!(sw > 0)) break;
    double shift2 = 0;
    for (int d = 0; d < 3; ++d) {
      const double next = sv[d] / sw;
      shift2 += (next - m[d]) * (next - m[d]);
      m[d] = next;
    }
    if (shift2 < thr * thr) break;
  }
  for (int d = 0; d < 3; ++d) r.mode[d] = m[d];
  return r;
}

void store(const SetResult& r, float* mode, int32_t* count) {
  for (int d = 0; d < 3; ++d) mode[d] = static_cast<float>(r.mode[d]);
  *count = r.count;
}

}  // namespace

void mean_shift_ref(const float* votes, const int32_t* labels, int64_t batch, int64_t sets, int64_t n,
                    const MeanShiftAttrs& a, float* modes, int32_t* counts) {
  const int64_t instances = a.num_instances;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t c = 0; c < instances; ++c) {
      std::vector<int32_t> members;
      if (c != a.ignore_label)
        for (int64_t i = 0; i < n; ++i)
          if (labels[b * n + i] == c) members.push_back(static_cast<int32_t>(i));
      const int64_t row = (b * instances + c) * sets;
      auto set_votes = [&](int64_t k) { return votes + (b * sets + k) * n * 3; };
      std::vector<int32_t> voters = members;
      if (a.filter_vote >= 0) {
        SetResult f = shift_set(set_votes(a.filter_vote), members, a);
        store(f, modes + (row + a.filter_vote) * 3, counts + row + a.filter_vote);
        voters = f.inliers;
      }
      for (int64_t k = 0; k < sets; ++k)
        if (k != a.filter_vote) store(shift_set(set_votes(k), voters, a), modes + (row + k) * 3, counts + row + k);
    }
  }
}

}  // namespace pointrt::pose
