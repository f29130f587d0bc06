// KNN: hand-checked case, optimised vs reference (bitwise, NaN included) on random and
// adversarial clouds, query order across batches, errors through a Session.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/pointnet2/knn.h"
#include "ops/pointnet2/spatial_grid.h"
#include "support/expect_error.h"
#include "unit/pointnet2/pointnet2_test_util.h"

namespace pointrt {
namespace pointnet2 {
namespace {

using namespace test_helpers;
using test::expect_error_with;

void expect_knn_match(const std::vector<float>& xyz, const std::vector<float>& q, int64_t b, int64_t n, int64_t m,
                      int64_t k) {
  EXPECT_TRUE(knn_run(true, xyz, q, b, n, m, k) == knn_run(false, xyz, q, b, n, m, k))
      << "n=" << n << " m=" << m << " k=" << k;
}

TEST(KNN, HandExample) {
  // Points at x = 3, 1, 2, 1 (indices 0..3); query at 0: d2 = 1 (idx 1), 1 (idx 3), 4, 9.
  std::vector<float> xyz = {3, 0, 0, 1, 0, 0, 2, 0, 0, 1, 0, 0};
  std::vector<float> q = {0, 0, 0};
  auto r = knn_run(true, xyz, q, 1, 4, 1, 3);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{1, 3, 2}));
  EXPECT_EQ(r.d2, (std::vector<float>{1, 1, 4}));
  // N = 1, k = 1.
  r = knn_run(true, {0.5f, 0.5f, 0.5f}, q, 1, 1, 1, 1);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{0}));
}

TEST(KNN, RandomMatchesReference) {
  uint32_t seed = 300;
  for (int64_t n : {1, 2, 5, 64, 1000, 3001})
    for (int64_t k : {1, 3, 16, 64}) {
      if (k > n) continue;
      for (int64_t m : {1, 37, 400}) {
        auto xyz = uniform_cloud(2 * n, seed++);
        auto q = uniform_cloud(2 * m, seed++, -0.2f, 1.2f);
        expect_knn_match(xyz, q, 2, n, m, k);
      }
    }
  auto xyz = uniform_cloud(50, 7);
  expect_knn_match(xyz, xyz, 1, 50, 50, 50);  // k = N
  expect_knn_match(xyz, {}, 1, 50, 0, 5);     // M = 0
}

TEST(KNN, QueryOrderAcrossBatches) {
  // Prefetching looks kPrefetchQueries ahead, across batch ends, including into a batch that
  // takes the exhaustive path (a non-finite point) and has no sorted query copy.
  uint32_t seed = 2100;
  for (int64_t m : {int64_t{1}, kPrefetchQueries - 1, kPrefetchQueries, kPrefetchQueries + 1, int64_t{33}})
    for (int64_t n : {17, 1025}) {
      const int64_t b = 3;
      auto xyz = uniform_cloud(b * n, seed++);
      auto q = uniform_cloud(b * m, seed++, -0.1f, 1.1f);
      expect_knn_match(xyz, q, b, n, m, 5);
      xyz[3 * n + 4] = std::numeric_limits<float>::infinity();  // batch 1 goes exhaustive
      q[0] = std::numeric_limits<float>::quiet_NaN();
      expect_knn_match(xyz, q, b, n, m, 5);
    }
}

TEST(KNN, AdversarialClouds) {
  auto lattice = lattice_cloud(10, 0.125f);  // exact ties everywhere, points on cell boundaries
  int64_t ln = static_cast<int64_t>(lattice.size() / 3);
  for (int64_t k : {1, 6, 7, 19, 27, 33}) expect_knn_match(lattice, lattice, 1, ln, ln, k);
  auto half = lattice;  // queries between lattice points: 8 equidistant neighbours
  for (auto& v : half) v += 0.0625f;
  expect_knn_match(lattice, half, 1, ln, ln, 8);
  expect_knn_match(lattice, half, 1, ln, ln, 9);

  auto dup = uniform_cloud(30, 40);
  dup = batches({dup, dup, dup, dup});
  expect_knn_match(dup, dup, 1, 120, 120, 10);

  auto clusters = clustered_cloud(4000, 41);
  auto far = uniform_cloud(100, 42, -50.f, 50.f);  // mostly outside the clusters' box
  expect_knn_match(clusters, std::vector<float>(clusters.begin(), clusters.begin() + 3 * 600), 1, 4000, 600, 16);
  expect_knn_match(clusters, far, 1, 4000, 100, 5);

  auto plane = planar_cloud(3000, 43);
  auto pq = uniform_cloud(300, 44);
  expect_knn_match(plane, pq, 1, 3000, 300, 12);
  auto cube = uniform_cloud(5000, 47);
  auto distant = uniform_cloud(200, 48, -1000.f, 1000.f);  // far outside on every side
  expect_knn_match(cube, distant, 1, 5000, 200, 3);
  expect_knn_match(cube, distant, 1, 5000, 200, 40);

  auto nf = uniform_cloud(2 * 400, 45);
  nf[3 * 11] = std::numeric_limits<float>::quiet_NaN();  // batch 0: exhaustive path
  nf[3 * 20 + 1] = std::numeric_limits<float>::infinity();
  auto nq = uniform_cloud(2 * 30, 46);
  nq[3 * 40 + 2] = std::numeric_limits<float>::quiet_NaN();  // a NaN query in batch 1
  expect_knn_match(nf, nq, 2, 400, 30, 400);
  expect_knn_match(nf, nq, 2, 400, 30, 7);
}

TEST(KNN, SessionAndErrors) {
  auto xyz = uniform_cloud(2 * 50, 50);
  auto q = uniform_cloud(2 * 7, 51);
  auto out = run_node("KNN", {{"xyz", floats({2, 50, 3}, xyz)}, {"new_xyz", floats({2, 7, 3}, q)}}, {"idx", "dist2"},
                      {int_attr("k", 4)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 7, 4}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 7, 4}));
  auto want = knn_run(false, xyz, q, 2, 50, 7, 4);
  EXPECT_TRUE(std::equal(want.idx.begin(), want.idx.end(), out[0].data_as<int32_t>()));
  EXPECT_TRUE(std::equal(want.d2.begin(), want.d2.end(), out[1].data_as<float>()));
  // Only the idx output.
  out = run_node("KNN", {{"xyz", floats({2, 50, 3}, xyz)}, {"new_xyz", floats({2, 7, 3}, q)}}, {"idx"},
                 {int_attr("k", 4)});
  EXPECT_TRUE(std::equal(want.idx.begin(), want.idx.end(), out[0].data_as<int32_t>()));

  expect_error_with(
      [&] {
        run_node("KNN", {{"xyz", floats({2, 50, 3}, xyz)}, {"new_xyz", floats({2, 7, 3}, q)}}, {"idx", "dist2"},
                 {int_attr("k", 51)});
      },
      {"node_under_test", "'k' = 51", "N = 50", "'xyz'"});
  expect_error_with(
      [&] {
        run_node("KNN", {{"xyz", floats({1, 0, 3}, {})}, {"new_xyz", floats({1, 1, 3}, {0, 0, 0})}}, {"idx"},
                 {int_attr("k", 1)});
      },
      {"node_under_test", "N = 0"});
  expect_error_with(
      [&] {
        run_node("KNN", {{"xyz", floats({2, 50, 3}, xyz)}, {"new_xyz", floats({2, 7, 3}, q)}}, {"idx"},
                 {int_attr("k", 0)});
      },
      {"node_under_test", "'k'"});
}

}  // namespace
}  // namespace pointnet2
}  // namespace pointrt
