// BallQuery: hand-checked cases, points near the radius, optimised vs reference on random and
// adversarial clouds, strategies and query order, errors through a Session.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/pointnet2/ball_query.h"
#include "ops/pointnet2/spatial_grid.h"
#include "support/expect_error.h"
#include "unit/pointnet2/pointnet2_test_util.h"

namespace pointrt {
namespace pointnet2 {
namespace {

using namespace test_helpers;
using test::expect_error_with;

TEST(BallQuery, HandExample) {
  // Points at x = 0, 0.5, 2, 0.25, 0.75 (index order); centre at 0 with radius 1.
  std::vector<float> xyz = {0, 0, 0, 0.5f, 0, 0, 2, 0, 0, 0.25f, 0, 0, 0.75f, 0, 0};
  std::vector<float> c = {0, 0, 0};
  // First three hits in point order: 0, 1, 3 (not the nearest: 0, 3, 1).
  EXPECT_EQ(bq_opt(xyz, c, 1, 5, 1, {1.f, 3, 0.f}), (std::vector<int32_t>{0, 1, 3}));
  // Fewer hits (4) than nsample (6): the first hit fills the remaining slots.
  EXPECT_EQ(bq_opt(xyz, c, 1, 5, 1, {1.f, 6, 0.f}), (std::vector<int32_t>{0, 1, 3, 4, 0, 0}));
  // min_radius 0.3 drops 0.25 but d2 == 0 is always accepted.
  EXPECT_EQ(bq_opt(xyz, c, 1, 5, 1, {1.f, 4, 0.3f}), (std::vector<int32_t>{0, 1, 4, 0}));
  // A centre with no hit: all zeros.
  std::vector<float> far = {100, 100, 100};
  EXPECT_EQ(bq_opt(xyz, far, 1, 5, 1, {1.f, 3, 0.f}), (std::vector<int32_t>{0, 0, 0}));
  // Strict upper bound: a point exactly at the radius (0.5, exact in binary) is not a hit.
  std::vector<float> two = {0.5f, 0, 0, 0.25f, 0, 0};
  EXPECT_EQ(bq_opt(two, c, 1, 2, 1, {0.5f, 2, 0.f}), (std::vector<int32_t>{1, 1}));
  // N = 0: every centre gets zeros.
  EXPECT_EQ(bq_opt({}, c, 1, 0, 1, {1.f, 2, 0.f}), (std::vector<int32_t>{0, 0}));
}

TEST(BallQuery, NearTheRadius) {
  // Points 2e-5 (relative) inside and outside the radius along axes and diagonals: inside
  // accepted, outside not, whatever the grid does.
  const float r = 0.2f;
  std::vector<float> xyz;
  std::vector<int32_t> inside;
  const float dirs[4][3] = {{1, 0, 0}, {0, -1, 0}, {0.6f, 0.8f, 0}, {0.48f, 0.6f, 0.64f}};
  int32_t index = 0;
  for (const auto& d : dirs)
    for (float scale : {1.f - 2e-5f, 1.f + 2e-5f}) {
      for (int a = 0; a < 3; ++a) xyz.push_back(0.5f + d[a] * r * scale);
      if (scale < 1) inside.push_back(index);
      ++index;
    }
  std::vector<float> c = {0.5f, 0.5f, 0.5f};
  auto got = bq_opt(xyz, c, 1, index, 1, {r, 8, 0.f});
  EXPECT_EQ(got, bq_ref(xyz, c, 1, index, 1, {r, 8, 0.f}));
  std::vector<int32_t> want = inside;
  while (want.size() < 8) want.push_back(inside[0]);
  EXPECT_EQ(got, want);
}

TEST(BallQuery, RandomMatchesReference) {
  uint32_t seed = 100;
  for (int64_t n : {1, 2, 17, 1000, 4097})
    for (int64_t m : {1, 33, 300})
      for (float radius : {0.05f, 0.1f, 0.3f, 2.f})
        for (int64_t nsample : {1, 5, 32, 64}) {
          int64_t b = 2;
          auto xyz = uniform_cloud(b * n, seed++);
          auto centres = uniform_cloud(b * m, seed++, -0.1f, 1.1f);
          for (float min_r : {0.f, 0.03f}) {
            BallQueryAttrs a{radius, nsample, min_r};
            ASSERT_EQ(bq_opt(xyz, centres, b, n, m, a), bq_ref(xyz, centres, b, n, m, a))
                << "n=" << n << " m=" << m << " r=" << radius << " nsample=" << nsample << " min_r=" << min_r;
          }
        }
}

TEST(BallQuery, LargeBallsStopEarly) {
  // Many hits per ball: the blocked walk must still give the first nsample in point order.
  const int64_t n = 16384, m = 300;
  auto xyz = uniform_cloud(n, 7);
  auto centres = uniform_cloud(m, 8);
  for (float radius : {0.1f, 0.3f, 0.6f})
    for (int64_t nsample : {16, 32, 64})
      ASSERT_EQ(bq_opt(xyz, centres, 1, n, m, {radius, nsample, 0.f}),
                bq_ref(xyz, centres, 1, n, m, {radius, nsample, 0.f}))
          << radius << " " << nsample;
}

TEST(BallQuery, AdversarialClouds) {
  // Centres on the points (d2 == 0), duplicate points, a lattice whose spacing equals the
  // radius (distances exactly at the bound; points exactly on cell boundaries), clusters,
  // a plane, and non-finite coordinates.
  auto lattice = lattice_cloud(12, 0.125f);
  int64_t ln = static_cast<int64_t>(lattice.size() / 3);
  for (float radius : {0.125f, 0.25f, 0.1875f})
    for (float min_r : {0.f, 0.125f})
      EXPECT_EQ(bq_opt(lattice, lattice, 1, ln, ln, {radius, 16, min_r}),
                bq_ref(lattice, lattice, 1, ln, ln, {radius, 16, min_r}));

  auto dup = uniform_cloud(40, 9);
  dup = batches({dup, dup, dup, dup, dup});  // every point five times
  EXPECT_EQ(bq_opt(dup, dup, 1, 200, 200, {0.2f, 7, 0.f}), bq_ref(dup, dup, 1, 200, 200, {0.2f, 7, 0.f}));

  auto clusters = clustered_cloud(3000, 10);
  auto qc = clustered_cloud(200, 10);
  EXPECT_EQ(bq_opt(clusters, qc, 1, 3000, 200, {0.05f, 32, 0.f}), bq_ref(clusters, qc, 1, 3000, 200, {0.05f, 32, 0.f}));
  EXPECT_EQ(bq_opt(clusters, qc, 1, 3000, 200, {1.f, 32, 0.f}), bq_ref(clusters, qc, 1, 3000, 200, {1.f, 32, 0.f}));

  auto plane = planar_cloud(2000, 12);
  auto pq = uniform_cloud(100, 13);
  EXPECT_EQ(bq_opt(plane, pq, 1, 2000, 100, {0.1f, 16, 0.f}), bq_ref(plane, pq, 1, 2000, 100, {0.1f, 16, 0.f}));

  auto nf = uniform_cloud(500, 14);
  nf[3 * 3] = std::numeric_limits<float>::quiet_NaN();
  nf[3 * 9 + 2] = -std::numeric_limits<float>::infinity();
  auto nq = uniform_cloud(20, 15);
  nq[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(bq_opt(nf, nq, 1, 500, 20, {0.3f, 8, 0.f}), bq_ref(nf, nq, 1, 500, 20, {0.3f, 8, 0.f}));

  // A tiny radius on a spread-out cloud: the grid hits its cell cap and grows its cells.
  auto wide = uniform_cloud(1000, 16, -1000.f, 1000.f);
  EXPECT_EQ(bq_opt(wide, wide, 1, 1000, 1000, {1e-3f, 4, 0.f}), bq_ref(wide, wide, 1, 1000, 1000, {1e-3f, 4, 0.f}));
}

TEST(BallQuery, StrategiesAndQueryOrder) {
  // Centre counts around the prefetch distance and the OpenMP chunk (so prefetches cross batch
  // ends), B = 3, radii giving about nsample/2, 2*nsample and 8*nsample hits per ball (the
  // single-pass, single-pass/block boundary and block strategies), point counts 0, 1, odd and
  // around powers of two, and a NaN centre (it goes through the sorted coordinate copy).
  uint32_t seed = 2000;
  const int64_t b = 3, nsample = 32;
  for (int64_t n : {0, 1, 33, 2047, 2049})
    for (int64_t m : {int64_t{0}, int64_t{1}, kPrefetchQueries - 1, kPrefetchQueries, kPrefetchQueries + 1, int64_t{17},
                      int64_t{257}})
      for (double hits : {16.0, 64.0, 256.0}) {
        auto xyz = uniform_cloud(b * n, seed++);
        auto centres = uniform_cloud(b * m, seed++, -0.05f, 1.05f);
        if (m > 3) centres[3 * (m + 2) + 1] = std::numeric_limits<float>::quiet_NaN();
        const float radius = static_cast<float>(std::cbrt(hits / (4.18879 * std::max<int64_t>(n, 1))));
        BallQueryAttrs a{radius, nsample, 0.f};
        ASSERT_EQ(bq_opt(xyz, centres, b, n, m, a), bq_ref(xyz, centres, b, n, m, a))
            << "n=" << n << " m=" << m << " hits=" << hits;
      }
}

TEST(BallQuery, SessionAndErrors) {
  auto xyz = uniform_cloud(2 * 64, 20);
  auto c = uniform_cloud(2 * 5, 21);
  auto out = run_node("BallQuery", {{"xyz", floats({2, 64, 3}, xyz)}, {"new_xyz", floats({2, 5, 3}, c)}}, {"idx"},
                      {float_attr("radius", 0.4f), int_attr("nsample", 6)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 5, 6}));
  auto want = bq_ref(xyz, c, 2, 64, 5, {0.4f, 6, 0.f});
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out[0].data_as<int32_t>()));
  // M = 0 is fine.
  out = run_node("BallQuery", {{"xyz", floats({1, 4, 3}, std::vector<float>(12))}, {"new_xyz", floats({1, 0, 3}, {})}},
                 {"idx"}, {float_attr("radius", 0.4f), int_attr("nsample", 2)});
  EXPECT_EQ(out[0].shape(), (Shape{1, 0, 2}));

  expect_error_with(
      [&] {
        run_node("BallQuery",
                 {{"xyz", floats({2, 64, 3}, xyz)}, {"new_xyz", floats({1, 5, 3}, std::vector<float>(15))}}, {"idx"},
                 {float_attr("radius", 0.4f), int_attr("nsample", 6)});
      },
      {"node_under_test", "'new_xyz'", "batch 1", "batch 2"});
  expect_error_with(
      [&] {
        run_node("BallQuery", {{"xyz", floats({2, 64, 3}, xyz)}, {"new_xyz", floats({2, 5, 3}, c)}}, {"idx"},
                 {float_attr("radius", -1.f), int_attr("nsample", 6)});
      },
      {"node_under_test", "radius", "-1"});
  expect_error_with(
      [&] {
        run_node("BallQuery", {{"xyz", floats({2, 64, 3}, xyz)}, {"new_xyz", floats({2, 5, 3}, c)}}, {"idx"},
                 {float_attr("radius", 1.f), int_attr("nsample", 0)});
      },
      {"node_under_test", "nsample"});
}

}  // namespace
}  // namespace pointnet2
}  // namespace pointrt
