// ScatterDense: optimised vs reference, and the diagnosis of all-zeros outputs.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "unit/sparse/sparse_test_util.h"

namespace pointrt {
namespace sparse {
namespace {

using namespace test_helpers;

std::vector<Tensor> scatter(Shape3 shape, int64_t batch, const Tensor& x, const Tensor& idx, bool reference) {
  TestGraph tg;
  int n = tg.add("ScatterDense", "scatter", 2, 1,
                 {{"spatial_shape", ints_attr({shape[0], shape[1], shape[2]})}, {"batch_size", int_attr(batch)}});
  RunCache cache;
  return tg.run(*tg.kernel(n, reference), n, {&x, &idx}, cache);
}

TEST(ScatterDense, MatchesReference) {
  std::mt19937 rng(71);
  for (int trial = 0; trial < 4; ++trial) {
    Shape3 shape{2 + trial, 7, 5 + 2 * trial};
    int64_t n = trial == 0 ? 0 : trial == 1 ? 1 : 40 * trial;
    Tensor idx = random_sites(n, 2, shape, rng, trial % 2 ? DType::kInt64 : DType::kInt32);
    Tensor x = float_tensor({idx.dim(0), 3}, rng);
    auto a = scatter(shape, 2, x, idx, false), b = scatter(shape, 2, x, idx, true);
    ASSERT_EQ(a[0].shape(), (Shape{2, 3, shape[0], shape[1], shape[2]}));
    ASSERT_EQ(0, std::memcmp(a[0].data(), b[0].data(), a[0].nbytes()));
  }
}

TEST(ScatterDense, DiagnosesAllZerosCauses) {
  std::mt19937 rng(81);
  Tensor x = float_tensor({3, 2}, rng);
  // (batch, x, y, z) given to a (z, y, x) shape [2, 180, 200].
  Tensor xyz = int_tensor({3, 4}, {0, 150, 100, 1, 0, 20, 30, 0, 0, 199, 179, 1});
  std::string msg = error_of([&] { scatter({2, 180, 200}, 1, x, xyz, false); });
  EXPECT_NE(msg.find("node 'scatter'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("column 1 (i0) = 150 at row 0 is outside [0, 2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max 199 exceeds the last valid index 1 by 198"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the spatial columns look reversed"), std::string::npos) << msg;
  // voxelizer-resolution indices fed to a ScatterDense after downsampling.
  Tensor fine = int_tensor({3, 4}, {0, 40, 1500, 1400, 0, 3, 7, 9, 0, 10, 799, 100});
  msg = error_of([&] { scatter({2, 200, 176}, 1, x, fine, false); });
  EXPECT_NE(msg.find("need a grid of at least [41, 1501, 1401]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out_indices of the last SparseConv"), std::string::npos) << msg;
  // batch beyond batch_size
  Tensor batch = int_tensor({3, 4}, {0, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0});
  msg = error_of([&] { scatter({2, 3, 3}, 1, x, batch, false); });
  EXPECT_NE(msg.find("column 0 (batch) = 1 at row 1 is outside [0, 1) of batch_size 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("set batch_size to 3"), std::string::npos) << msg;
  // batch index in the last column
  Tensor last = int_tensor({3, 4}, {150, 100, 1, 0, 20, 30, 0, 0, 199, 179, 1, 0});
  msg = error_of([&] { scatter({2, 180, 200}, 1, x, last, false); });
  EXPECT_NE(msg.find("the batch index seems to be in column 3"), std::string::npos) << msg;
  // one short (mmdet3d's extra z layer)
  Tensor z41 = int_tensor({3, 4}, {0, 40, 10, 10, 0, 3, 1599, 1407, 0, 0, 0, 0});
  msg = error_of([&] { scatter({40, 1600, 1408}, 1, x, z41, false); });
  EXPECT_NE(msg.find("is one short on axis 0 (indices reach 40)"), std::string::npos) << msg;
  // padding rows of -1
  Tensor pad = int_tensor({3, 4}, {0, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1});
  msg = error_of([&] { scatter({2, 3, 3}, 1, x, pad, false); });
  EXPECT_NE(msg.find("2 rows are all -1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("min -1 is below 0 by 1"), std::string::npos) << msg;
  // duplicate site
  Tensor dup = int_tensor({3, 4}, {0, 1, 1, 1, 0, 0, 2, 1, 0, 1, 1, 1}, DType::kInt64);
  msg = error_of([&] { scatter({2, 3, 3}, 1, x, dup, false); });
  EXPECT_NE(msg.find("rows 0 and 2 are the same site (0, 1, 1, 1)"), std::string::npos) << msg;
  // the reference kernel reports the same diagnosis
  EXPECT_NE(error_of([&] { scatter({2, 180, 200}, 1, x, xyz, true); }).find("look reversed"), std::string::npos);
}

}  // namespace
}  // namespace sparse
}  // namespace pointrt
