// The gathers (GatherPoints, GroupPoints, ThreeInterpolate and their gradients): optimised vs
// reference for int32 and int64 indices, blocked sizes, errors through a Session.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/pointnet2/gather_kernels.h"
#include "ops/pointnet2/gather_points.h"
#include "ops/pointnet2/group_points.h"
#include "ops/pointnet2/three_interpolate.h"
#include "support/expect_error.h"
#include "unit/pointnet2/pointnet2_test_util.h"

namespace pointrt {
namespace pointnet2 {
namespace {

using namespace test_helpers;
using test::expect_error_with;
namespace gather_detail = detail;  // gather_kernels.h

template <typename Index>
std::vector<Index> random_indices(int64_t count, int64_t limit, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Index> v(static_cast<size_t>(count));
  for (auto& x : v) x = static_cast<Index>(limit ? rng() % limit : 0);
  return v;
}

template <typename Index>
void check_gathers(uint32_t seed) {
  for (int64_t b : {1, 3})
    for (int64_t c : {0, 1, 5, 64})
      for (int64_t n : {1, 7, 300})
        for (int64_t m : {0, 1, 33}) {
          auto f = uniform_cloud(b * c * n, seed++);  // 3x more than needed; fine
          f.resize(static_cast<size_t>(b * c * n));
          auto idx = random_indices<Index>(b * m, n, seed++);
          std::vector<float> a(static_cast<size_t>(b * c * m), -1.f), r(a.size(), -2.f);
          gather_points(f.data(), idx.data(), b, c, n, m, a.data());
          gather_points_ref(f.data(), idx.data(), b, c, n, m, r.data());
          EXPECT_EQ(a, r);
          for (int64_t s : {1, 5}) {
            auto gidx = random_indices<Index>(b * m * s, n, seed++);
            std::vector<float> ga(static_cast<size_t>(b * c * m * s), -1.f), gr(ga.size(), -2.f);
            group_points(f.data(), gidx.data(), b, c, n, m, s, ga.data());
            group_points_ref(f.data(), gidx.data(), b, c, n, m, s, gr.data());
            EXPECT_EQ(ga, gr);
          }
          auto tidx = random_indices<Index>(b * m * 3, n, seed++);
          auto w = uniform_cloud(b * m, seed++);
          std::vector<float> ta(static_cast<size_t>(b * c * m), -1.f), tr(ta.size(), -2.f);
          three_interpolate(f.data(), tidx.data(), w.data(), b, c, n, m, ta.data());
          three_interpolate_ref(f.data(), tidx.data(), w.data(), b, c, n, m, tr.data());
          EXPECT_EQ(ta, tr);
        }
}

TEST(Gathers, MatchReferenceInt32) { check_gathers<int32_t>(800); }
TEST(Gathers, MatchReferenceInt64) { check_gathers<int64_t>(900); }

// Sizes around the kernels' tiles (16-index/16-channel blocks of the point-major path,
// ThreeInterpolate's 512-point tiles, partial channel blocks: rows of 40000/49153 floats give
// blocks of 2 channels), both paths of each operator, and outputs large enough for streaming
// stores (with scalar heads up to the first 64-byte boundary).
template <typename Index>
void check_blocked_gathers(uint32_t seed) {
  const int64_t kIndexTile = 1024;
  const int64_t b = 2;
  // n = 40000 (rows longer than L1) with 17 channels (two 16-channel chunks) takes the
  // point-major path when M*S >= n; the rest the row-by-row gather.
  for (int64_t n : {int64_t{300}, int64_t{40000}})
    for (int64_t c : {1, 5, 17})
      for (int64_t m : {kIndexTile - 1, kIndexTile, kIndexTile + 1, 2 * kIndexTile + 1}) {
        auto f = uniform_cloud(b * c * n, seed++);
        f.resize(static_cast<size_t>(b * c * n));
        auto idx = random_indices<Index>(b * m, n, seed++);
        std::vector<float> a(static_cast<size_t>(b * c * m), -1.f), r(a.size(), -2.f);
        gather_points(f.data(), idx.data(), b, c, n, m, a.data());
        gather_points_ref(f.data(), idx.data(), b, c, n, m, r.data());
        ASSERT_EQ(a, r) << "gather n=" << n << " c=" << c << " m=" << m;
        const int64_t s = n > 1000 ? 20 : 3;  // M*S >= n for the long rows
        auto gidx = random_indices<Index>(b * m * s, n, seed++);
        std::vector<float> ga(static_cast<size_t>(b * c * m * s), -1.f), gr(ga.size(), -2.f);
        group_points(f.data(), gidx.data(), b, c, n, m, s, ga.data());
        group_points_ref(f.data(), gidx.data(), b, c, n, m, s, gr.data());
        ASSERT_EQ(ga, gr) << "group n=" << n << " c=" << c << " m=" << m;
      }
  for (int64_t points : {1, 15, 16, 17, 511, 512, 513, 1025})
    for (int64_t m : {3, 49153}) {  // 49153 features per row: channel blocks of 2
      const int64_t c = 5;
      auto f = uniform_cloud(b * c * m, seed++);
      f.resize(static_cast<size_t>(b * c * m));
      auto tidx = random_indices<Index>(b * points * 3, m, seed++);
      auto w = uniform_cloud(b * points, seed++);
      std::vector<float> ta(static_cast<size_t>(b * c * points), -1.f), tr(ta.size(), -2.f);
      three_interpolate(f.data(), tidx.data(), w.data(), b, c, m, points, ta.data());
      three_interpolate_ref(f.data(), tidx.data(), w.data(), b, c, m, points, tr.data());
      ASSERT_EQ(ta, tr) << "interpolate points=" << points << " m=" << m;
    }
  // Streaming stores: outputs over kStreamOutputBytes. 3 channels take the
  // row-by-row gather / ThreeInterpolate's channel-block path (odd rows), 12 and 17 the
  // point-major ones (rows a multiple of 16 long: streamed after a scalar head up to the first
  // 64-byte boundary); feature rows of 9001 floats are longer than L1.
  for (int64_t c : {3, 12, 17}) {
    const int64_t row = c == 3 ? kStreamOutputBytes / 4 / c + 7 : (kStreamOutputBytes / 4 / c / 16 + 1) * 16;
    const int64_t n = 9001;
    auto f = uniform_cloud(c * n, seed++);
    f.resize(static_cast<size_t>(c * n));
    auto idx = random_indices<Index>(row, n, seed++);
    std::vector<float> a(static_cast<size_t>(c * row), -1.f), r(a.size(), -2.f);
    group_points(f.data(), idx.data(), 1, c, n, row, 1, a.data());
    group_points_ref(f.data(), idx.data(), 1, c, n, row, 1, r.data());
    ASSERT_TRUE(a == r) << "streamed group, c=" << c;
    auto tidx = random_indices<Index>(row * 3, n, seed++);
    auto w = uniform_cloud(row, seed++);
    three_interpolate(f.data(), tidx.data(), w.data(), 1, c, n, row, a.data());
    three_interpolate_ref(f.data(), tidx.data(), w.data(), 1, c, n, row, r.data());
    ASSERT_TRUE(a == r) << "streamed interpolate, c=" << c;
  }
}

TEST(Gathers, BlockedSizesInt32) { check_blocked_gathers<int32_t>(3000); }
TEST(Gathers, BlockedSizesInt64) { check_blocked_gathers<int64_t>(4000); }

TEST(Gathers, ThreeInterpolateOrder) {
  // (w0*f0 + w1*f1) + w2*f2 in float32: 1e8 + 1 - 1e8 is 0 in this order, not 1.
  std::vector<float> f = {1e8f, 1.f, -1e8f};
  std::vector<int32_t> idx = {0, 1, 2};
  std::vector<float> w = {1, 1, 1}, out(1);
  three_interpolate(f.data(), idx.data(), w.data(), 1, 1, 3, 1, out.data());
  EXPECT_EQ(out[0], 0.f);
}

TEST(Gathers, SessionAndErrors) {
  auto f = uniform_cloud(2 * 4 * 10, 1000);
  f.resize(2 * 4 * 10);
  std::vector<int64_t> idx = {0, 9, 3, 1, 1, 2};
  auto out =
      run_node("GatherPoints", {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt64, {2, 3}, idx)}},
               {"out"}, {});
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(out[0].data_as<float>()[1], f[9]);
  EXPECT_EQ(out[0].data_as<float>()[4 * 3], f[4 * 10 + 1]);

  std::vector<int32_t> bad = {0, 9, 3, 1, 10, 2};
  expect_error_with(
      [&] {
        run_node("GatherPoints", {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt32, {2, 3}, bad)}},
                 {"out"}, {});
      },
      {"node_under_test", "'idx'", "index 10", "[1, 1]", "[0, 10)"});
  std::vector<int64_t> negative = {0, -1, 3, 1, 1, 2, 0, 0};
  expect_error_with(
      [&] {
        run_node("GroupPoints",
                 {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt64, {2, 2, 2}, negative)}}, {"out"},
                 {});
      },
      {"node_under_test", "'idx'", "index -1", "[0, 0, 1]"});
  std::vector<int32_t> gidx = {0, 1, 2, 3, 4, 5, 6, 7};
  out =
      run_node("GroupPoints", {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt32, {2, 2, 2}, gidx)}},
               {"out"}, {});
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 2, 2}));
  expect_error_with(
      [&] {
        run_node("GroupPoints",
                 {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt32, {1, 4, 2}, gidx)}}, {"out"},
                 {});
      },
      {"node_under_test", "'idx'", "batch 1", "batch 2"});
  expect_error_with(
      [&] {
        run_node("GatherPoints", {{"features", floats({2, 4, 10}, f)}, {"idx", floats({2, 3}, std::vector<float>(6))}},
                 {"out"}, {});
      },
      {"node_under_test", "'idx'", "float"});

  std::vector<int32_t> tidx = {0, 1, 2, 3, 4, 12};
  std::vector<float> w = {0.5f, 0.25f, 0.25f, 1, 0, 0};
  expect_error_with(
      [&] {
        run_node("ThreeInterpolate",
                 {{"features", floats({1, 8, 10}, std::vector<float>(f.begin(), f.begin() + 80))},
                  {"idx", tensor_of(DType::kInt32, {1, 2, 3}, tidx)},
                  {"weight", floats({1, 2, 3}, w)}},
                 {"out"}, {});
      },
      {"node_under_test", "'idx'", "index 12", "[0, 1, 2]", "[0, 10)"});
  tidx[5] = 9;
  out = run_node("ThreeInterpolate",
                 {{"features", floats({1, 8, 10}, std::vector<float>(f.begin(), f.begin() + 80))},
                  {"idx", tensor_of(DType::kInt32, {1, 2, 3}, tidx)},
                  {"weight", floats({1, 2, 3}, w)}},
                 {"out"}, {});
  EXPECT_EQ(out[0].shape(), (Shape{1, 8, 2}));
  EXPECT_EQ(out[0].data_as<float>()[1], f[3]);
  expect_error_with(
      [&] {
        run_node("ThreeInterpolate",
                 {{"features", floats({1, 8, 10}, std::vector<float>(f.begin(), f.begin() + 80))},
                  {"idx", tensor_of(DType::kInt32, {1, 2, 3}, tidx)},
                  {"weight", floats({1, 3, 2}, w)}},
                 {"out"}, {});
      },
      {"node_under_test", "'weight'", "[1, 3, 2]"});
}

}  // namespace
}  // namespace pointnet2
}  // namespace pointrt
