// ThreeNN: hand-checked case, optimised vs reference on random and adversarial clouds, query
// order across batches, errors through a Session.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/pointnet2/spatial_grid.h"
#include "ops/pointnet2/three_nn.h"
#include "support/expect_error.h"
#include "unit/pointnet2/pointnet2_test_util.h"

namespace pointrt {
namespace pointnet2 {
namespace {

using namespace test_helpers;
using test::expect_error_with;

void expect_three_nn_match(const std::vector<float>& u, const std::vector<float>& k, int64_t b, int64_t n, int64_t m) {
  auto a = three_nn_run(true, u, k, b, n, m), r = three_nn_run(false, u, k, b, n, m);
  EXPECT_EQ(a.idx, r.idx) << "n=" << n << " m=" << m;
  EXPECT_EQ(a.dist, r.dist) << "n=" << n << " m=" << m;
}

TEST(ThreeNN, HandExample) {
  std::vector<float> known = {0, 0, 3, 0, 0, 1, 0, 0, 2, 0, 0, 1};  // z = 3, 1, 2, 1
  std::vector<float> u = {0, 0, 0};
  auto r = three_nn_run(true, u, known, 1, 1, 4);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{1, 3, 2}));
  EXPECT_EQ(r.dist, (std::vector<float>{1, 1, 2}));  // Euclidean, not squared
  // m < 3: missing slots have index 0 and distance 1e20.
  r = three_nn_run(true, u, {0, 4, 0, 0, 3, 0}, 1, 1, 2);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(r.dist, (std::vector<float>{3, 4, 1e20f}));
  r = three_nn_run(true, u, {0, 4, 0}, 1, 1, 1);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(r.dist, (std::vector<float>{4, 1e20f, 1e20f}));
}

TEST(ThreeNN, RandomAndAdversarial) {
  uint32_t seed = 500;
  for (int64_t m : {1, 2, 3, 4, 100, 4096})
    for (int64_t n : {0, 1, 50, 1000}) {
      auto known = uniform_cloud(2 * m, seed++);
      auto u = uniform_cloud(2 * n, seed++, -0.3f, 1.3f);
      expect_three_nn_match(u, known, 2, n, m);
    }
  auto lattice = lattice_cloud(10, 0.125f);
  int64_t ln = static_cast<int64_t>(lattice.size() / 3);
  auto half = lattice;
  for (auto& v : half) v += 0.0625f;
  expect_three_nn_match(half, lattice, 1, ln, ln);
  expect_three_nn_match(lattice, lattice, 1, ln, ln);
  auto clusters = clustered_cloud(2000, 60);
  auto far = uniform_cloud(200, 61, -20.f, 20.f);
  expect_three_nn_match(far, clusters, 1, 200, 2000);
  auto cube = uniform_cloud(5000, 66);
  expect_three_nn_match(uniform_cloud(300, 67, -1000.f, 1000.f), cube, 1, 300, 5000);
  auto plane = planar_cloud(1000, 62);
  expect_three_nn_match(uniform_cloud(300, 63), plane, 1, 300, 1000);
  // Non-finite known points never qualify; a non-finite query has no neighbour.
  auto nf = uniform_cloud(4, 64);
  nf[0] = std::numeric_limits<float>::quiet_NaN();
  nf[4] = std::numeric_limits<float>::infinity();
  auto nq = uniform_cloud(3, 65);
  nq[3] = std::numeric_limits<float>::quiet_NaN();
  expect_three_nn_match(nq, nf, 1, 3, 4);
  auto r = three_nn_run(true, nq, nf, 1, 3, 4);
  EXPECT_EQ(r.idx[2], 0);
  EXPECT_EQ(r.dist[2], 1e20f);  // only two finite known points
  EXPECT_EQ(r.dist[3], 1e20f);  // the NaN query
}

TEST(ThreeNN, QueryOrderAcrossBatches) {
  uint32_t seed = 2200;
  for (int64_t n : {int64_t{1}, kPrefetchQueries - 1, kPrefetchQueries, kPrefetchQueries + 1, int64_t{65}})
    for (int64_t m : {1, 4, 1025}) {
      const int64_t b = 3;
      auto known = uniform_cloud(b * m, seed++);
      auto u = uniform_cloud(b * n, seed++, -0.2f, 1.2f);
      u[3 * (b * n - 1)] = std::numeric_limits<float>::quiet_NaN();
      expect_three_nn_match(u, known, b, n, m);
    }
}

TEST(ThreeNN, SessionAndErrors) {
  auto u = uniform_cloud(10, 70), k = uniform_cloud(8, 71);
  auto out = run_node("ThreeNN",
                      {{"unknown", floats({1, 3, 3}, std::vector<float>(u.begin(), u.begin() + 9))},
                       {"known", floats({1, 2, 3}, std::vector<float>(k.begin(), k.begin() + 6))}},
                      {"dist", "idx"}, {});
  EXPECT_EQ(out[0].shape(), (Shape{1, 3, 3}));
  EXPECT_EQ(out[1].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].data_as<float>()[2], 1e20f);
  expect_error_with(
      [&] {
        run_node("ThreeNN", {{"unknown", floats({1, 1, 3}, {0, 0, 0})}, {"known", floats({1, 0, 3}, {})}},
                 {"dist", "idx"}, {});
      },
      {"node_under_test", "'known'", "m = 0"});
}

}  // namespace
}  // namespace pointnet2
}  // namespace pointrt
