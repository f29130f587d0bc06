// pointrt::RigidFit: Horn (production) vs Kabsch (reference) on random fits, exact recovery,
// the reflection fix, degenerate input (status, never NaN), broadcasting and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/pose/rigid_fit.h"
#include "support/single_node.h"

using namespace pointrt;
using namespace pointrt::pose;
using namespace pointrt::test;

namespace {

// A random proper rotation (normalised quaternion).
std::vector<double> random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> g;
  double q[4] = {g(rng), g(rng), g(rng), g(rng)};
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (double& v : q) v /= n;
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  return {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
          2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
          2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
}

struct Fit {
  std::vector<float> pose;
  std::vector<int32_t> status;
};

template <typename Fn>
Fit fit(Fn fn, const std::vector<float>& src, const std::vector<float>& dst, const std::vector<float>* w, int64_t fits,
        int64_t source_fits, int64_t p) {
  Fit r{std::vector<float>(static_cast<size_t>(fits * 12), -7.f), std::vector<int32_t>(static_cast<size_t>(fits), -7)};
  fn(src.data(), dst.data(), w ? w->data() : nullptr, fits, source_fits, p, r.pose.data(), r.status.data());
  return r;
}

// target = R source + t (+ noise)
std::vector<float> transform(const std::vector<float>& src, const std::vector<double>& r, const double* t, double noise,
                             std::mt19937& rng) {
  std::normal_distribution<double> g(0, noise > 0 ? noise : 1);
  std::vector<float> out(src.size());
  for (size_t i = 0; i < src.size(); i += 3)
    for (int a = 0; a < 3; ++a)
      out[i + a] = static_cast<float>(r[a * 3] * src[i] + r[a * 3 + 1] * src[i + 1] + r[a * 3 + 2] * src[i + 2] + t[a] +
                                      (noise > 0 ? g(rng) : 0));
  return out;
}

double det3(const float* p) {  // of the rotation part of a [3, 4] pose
  return p[0] * (p[5] * p[10] - p[6] * p[9]) - p[1] * (p[4] * p[10] - p[6] * p[8]) + p[2] * (p[4] * p[9] - p[5] * p[8]);
}

void expect_identity_rotation(const float* p) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(p[i * 4 + j], i == j ? 1.f : 0.f);
}

}  // namespace

TEST(RigidFit, RecoversExactPoses) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  for (int64_t p : {3, 4, 8, 9, 33}) {
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<float> src(static_cast<size_t>(p * 3));
      for (auto& v : src) v = u(rng);
      const auto r = random_rotation(rng);
      const double t[3] = {0.3, -0.2, 1.1};
      const auto dst = transform(src, r, t, 0, rng);
      for (auto fn : {rigid_fit_ref, rigid_fit}) {
        Fit f = fit(fn, src, dst, nullptr, 1, 1, p);
        ASSERT_EQ(f.status[0], kFitOk);
        for (int a = 0; a < 3; ++a) {
          for (int b = 0; b < 3; ++b) EXPECT_NEAR(f.pose[a * 4 + b], r[a * 3 + b], 2e-5) << p;
          EXPECT_NEAR(f.pose[a * 4 + 3], t[a], 2e-5);
        }
      }
    }
  }
}

TEST(RigidFit, HornMatchesKabschOnNoisyWeightedFits) {
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f), uw(0.f, 2.f);
  const int64_t fits = 64, p = 9;
  std::vector<float> src(static_cast<size_t>(p * 3)), dst, w(static_cast<size_t>(fits * p));
  for (auto& v : src) v = u(rng);
  for (int64_t f = 0; f < fits; ++f) {
    const auto r = random_rotation(rng);
    const double t[3] = {u(rng), u(rng), 1.0 + u(rng)};
    auto d = transform(src, r, t, 0.005, rng);
    dst.insert(dst.end(), d.begin(), d.end());
  }
  for (auto& v : w) v = uw(rng) < 0.3f ? 0.f : uw(rng);
  const Fit want = fit(rigid_fit_ref, src, dst, &w, fits, 1, p);
  const Fit got = fit(rigid_fit, src, dst, &w, fits, 1, p);
  EXPECT_EQ(want.status, got.status);
  for (size_t i = 0; i < want.pose.size(); ++i) EXPECT_NEAR(want.pose[i], got.pose[i], 1e-5) << i;
}

TEST(RigidFit, ReflectionIsFixed) {
  // The target is the mirror image of the source: the best proper rotation, never det -1.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> src(24), dst(24);
  for (auto& v : src) v = u(rng);
  for (size_t i = 0; i < src.size(); ++i) dst[i] = i % 3 == 2 ? -src[i] : src[i];
  const Fit a = fit(rigid_fit_ref, src, dst, nullptr, 1, 1, 8), b = fit(rigid_fit, src, dst, nullptr, 1, 1, 8);
  EXPECT_NEAR(det3(a.pose.data()), 1.0, 1e-5);
  EXPECT_NEAR(det3(b.pose.data()), 1.0, 1e-5);
  for (int i = 0; i < 12; ++i) EXPECT_NEAR(a.pose[i], b.pose[i], 1e-4) << i;
}

TEST(RigidFit, DegenerateInputGivesAStatusNeverNaN) {
  const std::vector<float> two_src = {0, 0, 0, 1, 0, 0}, two_dst = {1, 2, 3, 2, 2, 3};
  const std::vector<float> line_src = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3},
                           line_dst = {5, 0, 0, 5, 1, 0, 5, 2, 0, 5, 3, 0};
  const std::vector<float> same_src(12, 0.25f), same_dst = {1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4};
  std::vector<float> nan_dst = {1, 0, 0, 0, 1, 0, 0, 0, 1, NAN, 0, 0};
  const std::vector<float> tri_src = {0, 0, 0, 1, 0, 0, 0, 1, 0, 7, 7, 7};
  const std::vector<float> zero_w(4, 0.f), last_zero = {1, 1, 1, 0};
  for (auto fn : {rigid_fit_ref, rigid_fit}) {
    Fit f = fit(fn, two_src, two_dst, nullptr, 1, 1, 2);
    EXPECT_EQ(f.status[0], kFitTooFewPoints);
    expect_identity_rotation(f.pose.data());
    EXPECT_FLOAT_EQ(f.pose[3], 1.f);
    EXPECT_FLOAT_EQ(f.pose[7], 2.f);
    f = fit(fn, line_src, line_dst, nullptr, 1, 1, 4);
    EXPECT_EQ(f.status[0], kFitDegenerate);
    expect_identity_rotation(f.pose.data());
    f = fit(fn, same_src, same_dst, nullptr, 1, 1, 4);
    EXPECT_EQ(f.status[0], kFitDegenerate);
    f = fit(fn, tri_src, nan_dst, nullptr, 1, 1, 4);
    EXPECT_EQ(f.status[0], kFitNonFinite);
    for (float v : f.pose) EXPECT_TRUE(std::isfinite(v));
    EXPECT_EQ(f.pose[3], 0.f);
    f = fit(fn, tri_src, nan_dst, &zero_w, 1, 1, 4);  // every weight 0: no point at all
    EXPECT_EQ(f.status[0], kFitTooFewPoints);
    EXPECT_EQ(f.pose[3], 0.f);
    f = fit(fn, tri_src, nan_dst, &last_zero, 1, 1, 4);  // the NaN point has weight 0: ignored
    EXPECT_EQ(f.status[0], kFitOk);
    for (float v : f.pose) EXPECT_TRUE(std::isfinite(v));
    EXPECT_NEAR(det3(f.pose.data()), 1.0, 1e-5);
  }
}

TEST(RigidFit, SessionBroadcastsTheSourceAndChecksInput) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  const int64_t b = 2, c = 3, p = 5;
  std::vector<float> src(static_cast<size_t>(c * p * 3)), dst;
  for (auto& v : src) v = u(rng);
  for (int64_t bb = 0; bb < b; ++bb)
    for (int64_t cc = 0; cc < c; ++cc) {
      const std::vector<float> one(src.begin() + cc * p * 3, src.begin() + (cc + 1) * p * 3);
      const double t[3] = {0.1 * bb, 0.2 * cc, 1};
      auto d = transform(one, random_rotation(rng), t, 0, rng);
      dst.insert(dst.end(), d.begin(), d.end());
    }
  auto out = run_pointrt_node(
      "RigidFit", {{"source", make_tensor<float>({c, p, 3}, src)}, {"target", make_tensor<float>({b, c, p, 3}, dst)}},
      {"pose", "status"}, nullptr);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{b, c, 3, 4}));
  EXPECT_EQ(out[1].shape(), (Shape{b, c}));
  const Fit want = fit(rigid_fit_ref, src, dst, nullptr, b * c, c, p);
  for (int64_t i = 0; i < b * c * 12; ++i) EXPECT_NEAR(out[0].data_as<float>()[i], want.pose[i], 1e-5);

  expect_error_with(
      [&] {
        run_pointrt_node("RigidFit",
                         {{"source", make_tensor<float>({c, p + 1, 3}, std::vector<float>(c * (p + 1) * 3))},
                          {"target", make_tensor<float>({b, c, p, 3}, dst)}},
                         {"pose"}, nullptr);
      },
      {"node0", "'source'", "[3, 6, 3]", "last dimensions"});
  std::vector<float> w(static_cast<size_t>(b * c * p), 1.f);
  w[4] = -1.f;
  expect_error_with(
      [&] {
        run_pointrt_node("RigidFit",
                         {{"source", make_tensor<float>({c, p, 3}, src)},
                          {"target", make_tensor<float>({b, c, p, 3}, dst)},
                          {"weight", make_tensor<float>({b, c, p}, w)}},
                         {"pose"}, nullptr);
      },
      {"node0", "'weight'", "-1", "flat index 4"});
  expect_error_with(
      [&] {
        run_pointrt_node("RigidFit",
                         {{"source", make_tensor<float>({c, p, 3}, src)},
                          {"target", make_tensor<float>({b, c, p, 3}, dst)},
                          {"weight", make_tensor<float>({b, c}, std::vector<float>(b * c, 1.f))}},
                         {"pose"}, nullptr);
      },
      {"node0", "'weight'", "[2, 3, 5]"});
  expect_error_with(
      [&] {
        run_pointrt_node("RigidFit",
                         {{"source", make_tensor<float>({c, p, 2}, std::vector<float>(c * p * 2))},
                          {"target", make_tensor<float>({b, c, p, 3}, dst)}},
                         {"pose"}, nullptr);
      },
      {"node0", "'source'", "[..., P, 3]"});
}
