// FurthestPointSample: optimised vs reference on random clouds, duplicates and ties, the
// ignore-origin rule, non-finite points, the split over threads, errors through a Session.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/pointnet2/furthest_point_sample.h"
#include "support/expect_error.h"
#include "unit/pointnet2/pointnet2_test_util.h"

namespace pointrt {
namespace pointnet2 {
namespace {

using namespace test_helpers;
using test::expect_error_with;

TEST(FurthestPointSample, HandExample) {
  // x = 0, 1, 3, 10 on a line: 0, then 10 (idx 3), then 3 (idx 2: min(9, 49)), then 1.
  std::vector<float> xyz = {0, 0, 0, 1, 0, 0, 3, 0, 0, 10, 0, 0};
  EXPECT_EQ(fps_ref(xyz, 1, 4, 4, false), (std::vector<int32_t>{0, 3, 2, 1}));
  EXPECT_EQ(fps_opt(xyz, 1, 4, 4, false), (std::vector<int32_t>{0, 3, 2, 1}));
  // npoint > N: every distance is 0 after four samples, the lowest index repeats.
  EXPECT_EQ(fps_opt(xyz, 1, 4, 6, false), (std::vector<int32_t>{0, 3, 2, 1, 0, 0}));
}

TEST(FurthestPointSample, RandomMatchesReference) {
  uint32_t seed = 1;
  for (int64_t n : {1, 2, 3, 7, 255, 256, 257, 1000, 2049})
    for (int64_t npoint : {int64_t(1), int64_t(2), int64_t(17), n, n + 3})
      for (bool ignore : {false, true}) {
        int64_t b = 3;
        auto xyz = uniform_cloud(b * n, seed++, -1.f, 1.f);
        // A few points inside the ignore_origin ball (|p|^2 <= 1e-3), including index 0 sometimes.
        for (int64_t i = 0; i < b * n; i += 5)
          for (int a = 0; a < 3; ++a) xyz[3 * i + a] *= 0.01f;
        EXPECT_EQ(fps_opt(xyz, b, n, npoint, ignore), fps_ref(xyz, b, n, npoint, ignore))
            << "n=" << n << " npoint=" << npoint << " ignore=" << ignore;
      }
}

TEST(FurthestPointSample, DuplicatesAndTies) {
  // All points identical: after idx[0] every distance is 0, so the lowest index (0) repeats.
  std::vector<float> same(3 * 50, 0.25f);
  EXPECT_EQ(fps_opt(same, 1, 50, 5, false), (std::vector<int32_t>(5, 0)));
  // A lattice: huge numbers of exact distance ties, broken by the lowest index.
  auto lattice = lattice_cloud(9, 0.125f);
  int64_t n = static_cast<int64_t>(lattice.size() / 3);
  EXPECT_EQ(fps_opt(lattice, 1, n, 200, false), fps_ref(lattice, 1, n, 200, false));
  EXPECT_EQ(fps_opt(lattice, 1, n, 200, true), fps_ref(lattice, 1, n, 200, true));
}

TEST(FurthestPointSample, IgnoreOrigin) {
  // Points 0, 2 and 4 sit at the origin (or within |p|^2 <= 1e-3); they are never sampled
  // (idx[0] = 0 regardless).
  std::vector<float> xyz = {0, 0, 0, 1, 0, 0, 0.01f, 0.01f, 0.01f, 0, 2, 0, 0, 0, 0.0316f, 0, 0, 3};
  auto got = fps_opt(xyz, 1, 6, 6, true);
  EXPECT_EQ(got, fps_ref(xyz, 1, 6, 6, true));
  EXPECT_EQ(got[0], 0);
  for (size_t j = 1; j < got.size(); ++j) EXPECT_TRUE(got[j] == 1 || got[j] == 3 || got[j] == 5) << got[j];
  // Without the rule the near-origin points are ordinary candidates.
  EXPECT_EQ(fps_opt(xyz, 1, 6, 6, false), fps_ref(xyz, 1, 6, 6, false));
  // No candidate at all: every index is 0.
  std::vector<float> origin(3 * 8, 0.f);
  EXPECT_EQ(fps_opt(origin, 1, 8, 4, true), (std::vector<int32_t>(4, 0)));
}

TEST(FurthestPointSample, NonFinitePoints) {
  auto xyz = uniform_cloud(300, 11);
  xyz[3 * 7] = std::numeric_limits<float>::quiet_NaN();
  xyz[3 * 50 + 1] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fps_opt(xyz, 1, 300, 40, false), fps_ref(xyz, 1, 300, 40, false));
}

TEST(FurthestPointSample, SplitOverThreads) {
  // Large enough for the path that shares one batch between threads (when there are several).
  int threads = omp_get_max_threads();
  int64_t n = kFpsMinPointsPerThread * std::max(2, threads) + 123;
  auto xyz = uniform_cloud(n, 5);
  EXPECT_EQ(fps_opt(xyz, 1, n, 64, false), fps_ref(xyz, 1, n, 64, false));
  if (threads == 1) {
    omp_set_num_threads(2);  // force the split path even on one core
    EXPECT_EQ(fps_opt(xyz, 1, n, 64, true), fps_ref(xyz, 1, n, 64, true));
    omp_set_num_threads(threads);
  }
}

TEST(FurthestPointSample, SessionAndErrors) {
  auto xyz = uniform_cloud(2 * 100, 3);
  auto out = run_node("FurthestPointSample", {{"xyz", floats({2, 100, 3}, xyz)}}, {"idx"}, {int_attr("npoint", 10)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].shape(), (Shape{2, 10}));
  auto want = fps_ref(xyz, 2, 100, 10, false);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out[0].data_as<int32_t>()));

  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({1, 0, 3}, {})}}, {"idx"}, {int_attr("npoint", 4)});
      },
      {"node_under_test", "'xyz'", "N = 0"});
  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({1, 2, 4}, std::vector<float>(8))}}, {"idx"},
                 {int_attr("npoint", 4)});
      },
      {"node_under_test", "'xyz'", "last dimension 4"});
  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({2, 3}, std::vector<float>(6))}}, {"idx"},
                 {int_attr("npoint", 4)});
      },
      {"node_under_test", "rank 3"});
  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({1, 2, 3}, std::vector<float>(6))}}, {"idx"},
                 {int_attr("npoint", 0)});
      },
      {"node_under_test", "npoint", "0"});
  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({1, 2, 3}, std::vector<float>(6))}}, {"idx"}, {});
      },
      {"node_under_test", "npoint"});
}

}  // namespace
}  // namespace pointnet2
}  // namespace pointrt
