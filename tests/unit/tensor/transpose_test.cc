// Transpose: fast vs reference for ranks 0..6, the tiled paths on tile edges, the default perm
// and perm errors.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ops/onnx/tensor/transpose.h"
#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;

TEST(TensorTranspose, FastMatchesReferenceRank0To6) {
  std::mt19937 rng(2);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = iter % 7;
    Shape s = random_shape(rng, rank);
    std::vector<int64_t> perm(rank);
    for (int d = 0; d < rank; ++d) perm[d] = d;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Tensor a = Tensor::zeros(dt, transpose_shape(s, perm)), b = Tensor::zeros(dt, transpose_shape(s, perm));
      transpose_cpu(x, perm, a);
      transpose_ref(x, perm, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s);
    }
  }
}

TEST(TensorTranspose, TiledPathsOnTileEdges) {
  std::mt19937 rng(3);
  // 2D, batched 2D (NCHW<->NHWC) and inner-block copies around the 32-element tile.
  struct Case {
    Shape s;
    std::vector<int64_t> perm;
  };
  std::vector<Case> cases = {{{31, 33}, {1, 0}},
                             {{32, 32}, {1, 0}},
                             {{33, 65}, {1, 0}},
                             {{1, 97}, {1, 0}},
                             {{3, 5, 31, 33}, {0, 2, 3, 1}},
                             {{2, 7, 33}, {0, 2, 1}},
                             {{2, 33, 5, 7}, {0, 3, 1, 2}},
                             {{4, 3, 9, 8}, {1, 0, 2, 3}},
                             {{300, 257}, {1, 0}},
                             {{8, 64, 130}, {2, 0, 1}},
                             // the source-contiguous dim outermost or in the middle of the output
                             // (yanx27's permute(0, 3, 2, 1), rank-5 head shuffles), tiles +-1
                             {{1, 33, 5, 17}, {0, 3, 2, 1}},
                             {{1, 128, 64, 131}, {0, 3, 2, 1}},
                             {{2, 15, 3, 16}, {0, 3, 2, 1}},
                             {{2, 4, 9, 8, 17}, {0, 3, 1, 4, 2}},
                             {{5, 7, 33}, {2, 1, 0}},
                             {{0, 33}, {1, 0}}};
  for (const auto& c : cases)
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, c.s, rng);
      Tensor a = Tensor::zeros(dt, transpose_shape(c.s, c.perm)), b = Tensor::zeros(dt, transpose_shape(c.s, c.perm));
      transpose_cpu(x, c.perm, a);
      transpose_ref(x, c.perm, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(c.s);
    }
}

TEST(TensorTranspose, DefaultPermReversesAndBadPermErrors) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = run_op("Transpose", 13, {x});
  EXPECT_EQ(y[0].shape(), (Shape{3, 2}));
  EXPECT_EQ(y[0].data_as<float>()[1], 4.f);
  std::string msg = error_of([&] { run_op("Transpose", 13, {x}, {{"perm", attr_ints({0, 0})}}); });
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("perm"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Transpose", 13, {x}, {{"perm", attr_ints({0, 1, 2})}}); });
  EXPECT_NE(msg.find("rank 2"), std::string::npos) << msg;
}

}  // namespace
}  // namespace pointrt::tensor
