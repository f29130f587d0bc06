// Voxelize: optimised vs reference on random clouds, boundaries and rounding, truncation and
// the mean, errors.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "unit/sparse/sparse_test_util.h"

namespace pointrt {
namespace sparse {
namespace {

using namespace test_helpers;

std::map<std::string, Attribute> vox_attrs(std::vector<float> size, std::vector<float> range, int64_t max_points,
                                           int64_t max_voxels) {
  return {{"voxel_size", floats_attr(size)},
          {"point_cloud_range", floats_attr(range)},
          {"max_points_per_voxel", int_attr(max_points)},
          {"max_voxels", int_attr(max_voxels)}};
}

std::vector<Tensor> voxelize(const std::map<std::string, Attribute>& attrs, const Tensor& pts, bool reference) {
  TestGraph tg;
  int n = tg.add("Voxelize", "vox", 1, 3, attrs);
  RunCache cache;
  return tg.run(*tg.kernel(n, reference), n, {&pts}, cache);
}

TEST(Voxelize, MatchesReferenceOnRandomClouds) {
  std::mt19937 rng(61);
  for (int trial = 0; trial < 5; ++trial) {
    const int64_t p = trial == 0 ? 0 : trial == 1 ? 1 : trial == 4 ? 30000 : 3000 + 1111 * trial, f = 3 + trial % 3;
    Tensor pts = float_tensor({p, f}, rng, -6.f, 6.f);
    auto attrs = vox_attrs({0.5f, 0.4f, 0.75f}, {-5.f, -4.f, -3.f, 5.f, 4.f, 3.f}, 1 + trial * 2, 50 + trial * 200);
    auto a = voxelize(attrs, pts, false), b = voxelize(attrs, pts, true);
    for (int o = 0; o < 3; ++o) {
      ASSERT_EQ(a[o].shape(), b[o].shape()) << "trial " << trial << " output " << o;
      ASSERT_EQ(0, std::memcmp(a[o].data(), b[o].data(), a[o].nbytes())) << "trial " << trial << " output " << o;
    }
  }
}

TEST(Voxelize, BoundariesAndRounding) {
  // x, y, z range [-3, 1) with size 0.1 on z: G = 40; the largest float below 1 has a quotient
  // that rounds up to 40 and is dropped; exactly max is dropped; exactly min is kept.
  const float below = std::nextafter(1.0f, 0.0f);
  std::vector<float> v = {0.5f, 0.5f, below,   // z quotient rounds to G -> dropped
                          0.5f, 0.5f, 1.0f,    // on max -> dropped
                          -3.f, -3.f, -3.f,    // on min -> kept, cell 0
                          0.5f, 0.5f, 0.95f};  // last cell, z = 39
  Tensor pts = Tensor::wrap(DType::kFloat32, {4, 3}, v.data());
  auto attrs = vox_attrs({0.1f, 0.1f, 0.1f}, {-3.f, -3.f, -3.f, 1.f, 1.f, 1.f}, 4, 10);
  for (bool ref : {false, true}) {
    auto out = voxelize(attrs, pts, ref);
    ASSERT_EQ(out[1].dim(0), 2);
    const int32_t* c = out[1].data_as<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(c, c + 8), (std::vector<int32_t>{0, 0, 0, 0, 0, 39, 35, 35}));
  }
}

TEST(Voxelize, TruncationAndMean) {
  // F = 5: voxel A gets 4 points (max 3 kept), voxel B 1, voxel C (third) dropped by max_voxels = 2,
  // then a late point of voxel A is still ignored (full) and one of B is added.
  std::vector<float> v = {
      0.1f, 0.1f, 0.1f, 1.f, 10.f,  // A
      0.2f, 0.2f, 0.2f, 2.f, 20.f,  // A
      1.5f, 0.1f, 0.1f, 7.f, 70.f,  // B
      0.3f, 0.3f, 0.3f, 3.f, 30.f,  // A
      2.5f, 0.1f, 0.1f, 9.f, 90.f,  // C -> dropped (max_voxels)
      0.4f, 0.4f, 0.4f, 4.f, 40.f,  // A -> ignored (max_points_per_voxel)
      1.7f, 0.2f, 0.2f, 5.f, 50.f,  // B
  };
  Tensor pts = Tensor::wrap(DType::kFloat32, {7, 5}, v.data());
  auto attrs = vox_attrs({1.f, 1.f, 1.f}, {0.f, 0.f, 0.f, 4.f, 4.f, 4.f}, 3, 2);
  for (bool ref : {false, true}) {
    auto out = voxelize(attrs, pts, ref);
    ASSERT_EQ(out[0].shape(), (Shape{2, 5}));
    const float* f = out[0].data_as<float>();
    EXPECT_NEAR(f[0], 0.2f, 1e-6);
    EXPECT_NEAR(f[3], 2.f, 1e-6);
    EXPECT_NEAR(f[4], 20.f, 1e-5);
    EXPECT_NEAR(f[5], 1.6f, 1e-6);
    EXPECT_NEAR(f[8], 6.f, 1e-6);
    EXPECT_NEAR(f[9], 60.f, 1e-5);
    EXPECT_EQ(out[2].data_as<int32_t>()[0], 3);
    EXPECT_EQ(out[2].data_as<int32_t>()[1], 2);
    const int32_t* c = out[1].data_as<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(c, c + 8), (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 1}));
  }
}

TEST(Voxelize, Errors) {
  std::vector<float> v = {0.f, 0.f};
  Tensor bad = Tensor::wrap(DType::kFloat32, {1, 2}, v.data());
  auto attrs = vox_attrs({1.f, 1.f, 1.f}, {0.f, 0.f, 0.f, 4.f, 4.f, 4.f}, 3, 2);
  EXPECT_NE(error_of([&] { voxelize(attrs, bad, false); }).find("F >= 3"), std::string::npos);
  auto bad_range = vox_attrs({1.f, 1.f, 1.f}, {0.f, 0.f, 0.f, 4.f, 4.f}, 3, 2);
  EXPECT_NE(error_of([&] { voxelize(bad_range, bad, false); }).find("6 values"), std::string::npos);
  auto bad_size = vox_attrs({1.f, 0.f, 1.f}, {0.f, 0.f, 0.f, 4.f, 4.f, 4.f}, 3, 2);
  EXPECT_NE(error_of([&] { voxelize(bad_size, bad, false); }).find("voxel_size[1]"), std::string::npos);
}

}  // namespace
}  // namespace sparse
}  // namespace pointrt
