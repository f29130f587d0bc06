// pointrt::MeanShift: optimised vs reference on clustered votes of awkward sizes (fixed seeds),
// against PVN3D's all-points loop, degenerate instances, and errors through a Session.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/pose/mean_shift.h"
#include "support/op_tester.h"
#include "support/single_node.h"

using namespace pointrt;
using namespace pointrt::pose;
using namespace pointrt::test;

namespace {

MeanShiftAttrs attrs(int64_t instances, float bandwidth, int64_t filter = -1, int64_t ignore = -1) {
  MeanShiftAttrs a;
  a.num_instances = instances;
  a.bandwidth = bandwidth;
  a.stop_threshold = bandwidth * 1e-3f;
  a.filter_vote = filter;
  a.ignore_label = ignore;
  return a;
}

struct Result {
  std::vector<float> modes;
  std::vector<int32_t> counts;
};

template <typename Fn>
Result run(Fn fn, const std::vector<float>& votes, const std::vector<int32_t>& labels, int64_t b, int64_t k, int64_t n,
           const MeanShiftAttrs& a) {
  Result r{std::vector<float>(static_cast<size_t>(b * a.num_instances * k * 3), -7.f),
           std::vector<int32_t>(static_cast<size_t>(b * a.num_instances * k), -7)};
  fn(votes.data(), labels.data(), b, k, n, a, r.modes.data(), r.counts.data());
  return r;
}

// Votes around a per-(instance, set) centre with a few outliers and NaNs; labels in [-1, C).
void clustered(int64_t b, int64_t k, int64_t n, int64_t c, uint32_t seed, std::vector<float>& votes,
               std::vector<int32_t>& labels) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> lab(-1, static_cast<int>(c) - 1);
  std::normal_distribution<float> noise(0.f, 0.02f);
  std::uniform_real_distribution<float> uni(-1.f, 1.f);
  labels.resize(static_cast<size_t>(b * n));
  for (auto& l : labels) l = lab(rng);
  votes.resize(static_cast<size_t>(b * k * n * 3));
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t i = 0; i < n; ++i) {
        float* v = &votes[((bb * k + kk) * n + i) * 3];
        const int l = labels[bb * n + i];
        const float centre = 0.3f * static_cast<float>(l + 1) + 0.05f * static_cast<float>(kk);
        const float r = uni(rng);
        for (int d = 0; d < 3; ++d) v[d] = r > 0.8f ? uni(rng) : centre + noise(rng) + 0.1f * d;
        if (r < -0.97f) v[1] = NAN;
      }
}

}  // namespace

TEST(MeanShift, HandExample) {
  // Three votes within the bandwidth of each other, two far away: the seed is vote 0.
  const std::vector<float> votes = {0, 0, 0, 0.01f, 0, 0, 0, 0.01f, 0, 1, 1, 1, 1.01f, 1, 1};
  const std::vector<int32_t> labels = {0, 0, 0, 0, 0};
  for (auto fn : {mean_shift_ref, mean_shift}) {
    Result r = run(fn, votes, labels, 1, 1, 5, attrs(1, 0.1f));
    EXPECT_EQ(r.counts[0], 5);
    EXPECT_NEAR(r.modes[0], 0.01f / 3, 1e-5);
    EXPECT_NEAR(r.modes[1], 0.01f / 3, 1e-5);
    EXPECT_NEAR(r.modes[2], 0.f, 1e-6);
  }
}

TEST(MeanShift, OptimisedMatchesReference) {
  for (int64_t n : {0, 1, 2, 17, 255, 256, 257, 1000}) {
    for (int64_t filter : {-1, 2}) {
      std::vector<float> votes;
      std::vector<int32_t> labels;
      clustered(2, 3, n, 4, static_cast<uint32_t>(n * 7 + filter + 3), votes, labels);
      const MeanShiftAttrs a = attrs(4, 0.08f, filter, n % 2 ? 1 : -1);
      Result want = run(mean_shift_ref, votes, labels, 2, 3, n, a);
      Result got = run(mean_shift, votes, labels, 2, 3, n, a);
      SCOPED_TRACE("n = " + std::to_string(n) + ", filter = " + std::to_string(filter));
      ASSERT_EQ(want.counts, got.counts);
      expect_close(got.modes, want.modes, Tol{2 * a.stop_threshold + 2e-5f}.finite_only(), "modes");
    }
  }
}

// PVN3D's loop: shift every vote until all move less than the threshold, return the densest
// vote's shifted position. The operator shifts the densest vote alone.
TEST(MeanShift, AgreesWithShiftingEveryPoint) {
  std::mt19937 rng(5);
  std::normal_distribution<float> noise(0.f, 0.03f);
  const int64_t n = 300;
  std::vector<float> votes(n * 3);
  for (int64_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d) votes[i * 3 + d] = (i % 3 == 0 ? 0.25f : 0.f) + noise(rng);
  const MeanShiftAttrs a = attrs(1, 0.08f);
  Result r = run(mean_shift, votes, std::vector<int32_t>(n, 0), 1, 1, n, a);

  std::vector<double> c(votes.begin(), votes.end());
  const double bw = a.bandwidth;
  for (int it = 0; it < 300; ++it) {
    double worst = 0;
    std::vector<double> next(c.size());
    for (int64_t i = 0; i < n; ++i) {
      double sw = 0, s[3] = {0, 0, 0};
      for (int64_t j = 0; j < n; ++j) {
        double d2 = 0;
        for (int d = 0; d < 3; ++d) d2 += (c[i * 3 + d] - votes[j * 3 + d]) * (c[i * 3 + d] - votes[j * 3 + d]);
        const double w = std::exp(-0.5 * d2 / (bw * bw));
        sw += w;
        for (int d = 0; d < 3; ++d) s[d] += w * votes[j * 3 + d];
      }
      double shift2 = 0;
      for (int d = 0; d < 3; ++d) {
        next[i * 3 + d] = s[d] / sw;
        shift2 += (next[i * 3 + d] - c[i * 3 + d]) * (next[i * 3 + d] - c[i * 3 + d]);
      }
      worst = std::max(worst, std::sqrt(shift2));
    }
    c = next;
    if (worst < a.stop_threshold) break;
  }
  int64_t best = -1, seed = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t cnt = 0;
    for (int64_t j = 0; j < n; ++j) {
      double d2 = 0;
      for (int d = 0; d < 3; ++d) d2 += (votes[i * 3 + d] - votes[j * 3 + d]) * (votes[i * 3 + d] - votes[j * 3 + d]);
      cnt += d2 < bw * bw;
    }
    if (cnt > best) best = cnt, seed = i;
  }
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(r.modes[d], c[seed * 3 + d], 5 * a.stop_threshold) << d;
}

TEST(MeanShift, DegenerateInstancesNeverNaN) {
  // Instance 0: one vote; 1: empty; 2: only NaN votes; 3: two votes 100 bandwidths apart.
  const std::vector<float> votes = {0.5f, 0.25f, 0.125f, NAN, 0, 0, 0, 0, 0, 10, 0, 0};
  const std::vector<int32_t> labels = {0, 2, 3, 3};
  for (auto fn : {mean_shift_ref, mean_shift}) {
    Result r = run(fn, votes, labels, 1, 1, 4, attrs(4, 0.1f));
    EXPECT_EQ(r.counts, (std::vector<int32_t>{1, 0, 0, 2}));
    EXPECT_FLOAT_EQ(r.modes[0], 0.5f);
    EXPECT_FLOAT_EQ(r.modes[2], 0.125f);
    for (int i = 3; i < 9; ++i) EXPECT_EQ(r.modes[i], 0.f);
    for (float v : r.modes) EXPECT_TRUE(std::isfinite(v));
    EXPECT_NEAR(r.modes[9], 0.f, 1e-6);  // stays on the seed (the lower index of the tie)
  }
  MeanShiftAttrs none = attrs(1, 0.1f);
  none.max_iterations = 0;  // the mode is the densest vote itself
  const std::vector<float> three = {0, 0, 0, 0.05f, 0, 0, 0.12f, 0, 0};
  for (auto fn : {mean_shift_ref, mean_shift})
    EXPECT_FLOAT_EQ(run(fn, three, {0, 0, 0}, 1, 1, 3, none).modes[0], 0.05f);
}

TEST(MeanShift, FilterUsesTheInliersOfTheFilterSet) {
  // Set 1 (the filter, like PVN3D's centre) puts point 2 far away: set 0 must ignore point 2.
  const std::vector<float> votes = {0, 0, 0, 0.02f, 0, 0, 5, 5, 5, 1, 1, 1, 1.01f, 1, 1, 9, 9, 9};
  for (auto fn : {mean_shift_ref, mean_shift}) {
    Result r = run(fn, votes, {0, 0, 0}, 1, 2, 3, attrs(1, 0.1f, 1));
    EXPECT_EQ(r.counts, (std::vector<int32_t>{2, 3}));
    EXPECT_NEAR(r.modes[0], 0.01f, 1e-5);
  }
}

TEST(MeanShift, SessionAndErrors) {
  std::vector<float> votes;
  std::vector<int32_t> labels;
  clustered(1, 2, 50, 3, 11, votes, labels);
  auto set = [](int64_t c, float bw) {
    return [=](onnx::NodeProto& n) {
      ModelBuilder::attr_int(n, "num_instances", c);
      ModelBuilder::attr_float(n, "bandwidth", bw);
    };
  };
  std::vector<int64_t> labels64(labels.begin(), labels.end());
  auto out = run_pointrt_node(
      "MeanShift",
      {{"votes", make_tensor<float>({1, 2, 50, 3}, votes)}, {"labels", make_tensor<int64_t>({1, 50}, labels64)}},
      {"modes", "counts"}, set(3, 0.08f));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 3, 2, 3}));
  EXPECT_EQ(out[1].shape(), (Shape{1, 3, 2}));
  Result want = run(mean_shift_ref, votes, labels, 1, 2, 50, attrs(3, 0.08f));
  EXPECT_TRUE(std::equal(want.counts.begin(), want.counts.end(), out[1].data_as<int32_t>()));

  auto votes_t = make_tensor<float>({1, 2, 50, 3}, votes);
  labels[7] = 3;
  expect_error_with(
      [&] {
        run_pointrt_node("MeanShift", {{"votes", votes_t}, {"labels", make_tensor<int32_t>({1, 50}, labels)}},
                         {"modes"}, set(3, 0.08f));
      },
      {"node0", "'labels'", "label 3 at [0, 7]", "num_instances = 3"});
  expect_error_with(
      [&] {
        run_pointrt_node("MeanShift",
                         {{"votes", votes_t}, {"labels", make_tensor<int32_t>({1, 49}, std::vector<int32_t>(49))}},
                         {"modes"}, set(3, 0.08f));
      },
      {"node0", "'labels'", "[1, 50]"});
  expect_error_with(
      [&] {
        run_pointrt_node("MeanShift",
                         {{"votes", make_tensor<float>({1, 50, 3}, std::vector<float>(150))},
                          {"labels", make_tensor<int32_t>({1, 50}, std::vector<int32_t>(50))}},
                         {"modes"}, set(3, 0.08f));
      },
      {"node0", "'votes'", "rank 4"});
  expect_error_with(
      [&] {
        run_pointrt_node("MeanShift",
                         {{"votes", votes_t}, {"labels", make_tensor<int32_t>({1, 50}, std::vector<int32_t>(50))}},
                         {"modes"}, set(3, 0.f));
      },
      {"node0", "bandwidth"});
  expect_error_with(
      [&] {
        run_pointrt_node("MeanShift",
                         {{"votes", votes_t}, {"labels", make_tensor<int32_t>({1, 50}, std::vector<int32_t>(50))}},
                         {"modes"}, [&](onnx::NodeProto& n) {
                           set(3, 0.1f)(n);
                           ModelBuilder::attr_int(n, "filter_vote", 2);
                         });
      },
      {"node0", "filter_vote", "K = 2"});
}

namespace {

std::vector<int32_t> every_pair(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                                float bw2) {
  std::vector<int32_t> c(x.size(), 0);
  for (size_t i = 0; i < x.size(); ++i)
    for (size_t j = 0; j < x.size(); ++j) {
      const float dx = x[i] - x[j], dy = y[i] - y[j], dz = z[i] - z[j];
      c[i] += (dx * dx + dy * dy) + dz * dz < bw2;
    }
  return c;
}

}  // namespace

// The count with a core against every pair: clustered votes with outliers or a shell of boundary
// votes (the core path must be taken), votes on lattices at the bandwidth and half of it (pairs at
// d2 ~ bw2, duplicates), far-off and huge coordinates, two clusters; sizes around the 64-vote cut.
TEST(MeanShift, DensityWithACoreMatchesEveryPair) {
  const float bw = 0.08f, bw2 = bw * bw;
  pose::detail::DensityScratch scratch;
  for (int64_t n : {1, 2, 63, 64, 65, 257, 1000}) {
    for (int layout = 0; layout < 7; ++layout) {
      std::mt19937 rng(static_cast<uint32_t>(n * 10 + layout));
      std::normal_distribution<float> tight(0.f, 0.01f);
      std::uniform_real_distribution<float> uni(-1.f, 1.f);
      std::vector<float> x(n), y(n), z(n);
      for (int64_t i = 0; i < n; ++i) {
        const float r = uni(rng);
        switch (layout) {
          case 0:  // a cluster, 10% outliers
            x[i] = r > 0.8f ? uni(rng) : tight(rng), y[i] = r > 0.8f ? uni(rng) : tight(rng), z[i] = tight(rng);
            break;
          case 1:  // lattice of the bandwidth: neighbours at d2 = bw2 up to rounding
            x[i] = bw * static_cast<float>(i % 7), y[i] = bw * static_cast<float>((i / 7) % 5), z[i] = 0.f;
            break;
          case 2:  // lattice of half the bandwidth, repeated points
            x[i] = 0.5f * bw * static_cast<float>(i % 5), y[i] = 0.5f * bw * static_cast<float>((i / 5) % 3),
            z[i] = 0.25f * bw * static_cast<float>(i % 2);
            break;
          case 3:  // a cluster far from the origin (coarse float spacing)
            x[i] = 1000.f + tight(rng), y[i] = -500.f + tight(rng), z[i] = 250.f + tight(rng);
            break;
          case 4:  // huge coordinates next to a cluster (d2 overflows float32)
            x[i] = i % 9 == 0 ? 1e30f * r : tight(rng), y[i] = i % 9 == 0 ? -3e38f : tight(rng), z[i] = tight(rng);
            break;
          case 5: {  // a cluster and a shell 0.5-1.5 bandwidths around it: boundary votes
            const float radius = r > 0.4f ? 0.f : bw * (1.f + std::fabs(r) * 1.25f) - 0.5f * bw;
            const float theta = 3.f * uni(rng), phi = 1.5f * uni(rng);
            x[i] = tight(rng) + radius * std::cos(theta) * std::cos(phi);
            y[i] = tight(rng) + radius * std::sin(theta) * std::cos(phi), z[i] = tight(rng) + radius * std::sin(phi);
            break;
          }
          default:  // two clusters 1.2 bandwidths apart
            x[i] = (i % 2 ? 1.2f * bw : 0.f) + 0.3f * tight(rng), y[i] = 0.3f * tight(rng), z[i] = 0.3f * tight(rng);
        }
      }
      SCOPED_TRACE("n = " + std::to_string(n) + ", layout = " + std::to_string(layout));
      const std::vector<int32_t> want = every_pair(x, y, z, bw2);
      std::vector<int32_t> direct(n, -1), with_core(n, -1), chosen(n, -1);
      pose::detail::density_counts_direct(x.data(), y.data(), z.data(), n, bw2, direct.data());
      EXPECT_EQ(direct, want);
      const bool took =
          pose::detail::density_counts_core(x.data(), y.data(), z.data(), n, bw2, with_core.data(), scratch);
      if (took) {
        EXPECT_EQ(with_core, want);
      }
      if ((layout == 0 || layout == 5) && n >= 257) {
        EXPECT_TRUE(took);  // the case the core is for
      }
      pose::detail::density_counts(x.data(), y.data(), z.data(), n, bw2, chosen.data(), scratch);
      EXPECT_EQ(chosen, want);
    }
  }
}

// A bandwidth whose square underflows float32 to 0: no pair is within it, so the reference's seed
// is the first vote; the optimised kernel must not take the duplicates at the median for a core.
TEST(MeanShift, BandwidthSquaredUnderflowKeepsTheReferenceSeed) {
  const int64_t n = 300;
  std::vector<float> votes(n * 3, 0.25f);
  votes[0] = votes[1] = votes[2] = -1.f;  // the first vote apart, the others all equal
  MeanShiftAttrs a = attrs(1, 1e-24f);
  a.max_iterations = 0;  // the mode is the seed itself
  const std::vector<int32_t> labels(n, 0);
  for (auto fn : {mean_shift_ref, mean_shift}) EXPECT_EQ(run(fn, votes, labels, 1, 1, n, a).modes[0], -1.f);
}
