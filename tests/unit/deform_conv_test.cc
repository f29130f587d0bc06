// DeformConv: with zero offsets and no mask it is Conv (compared with the Conv kernel); an
// integer offset shifts the sampling grid; a mask scales taps; the shape errors.
#include <gtest/gtest.h>

#include "support/node_runner.h"
#include "support/random.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(DeformConv, ZeroOffsetsIsConvWithGroupsPadsStrides) {
  const Tensor x = random_floats({2, 4, 7, 6}, 1), w = random_floats({6, 2, 3, 2}, 2), b = random_floats({6}, 3);
  auto attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "group", 2);
    ModelBuilder::attr_ints(n, "pads", {1, 0, 1, 1});
    ModelBuilder::attr_ints(n, "strides", {2, 1});
    ModelBuilder::attr_ints(n, "dilations", {1, 2});
  };
  NodeCase conv{"Conv", 19, "", {{"x", x}, {"w", w}, {"b", b}}};
  conv.attrs = attrs;
  const Tensor want = run_node(conv)[0];
  const int64_t oh = want.dim(2), ow = want.dim(3);
  NodeCase dc{"DeformConv",
              19,
              "",
              {{"x", x}, {"w", w}, {"off", Tensor::zeros(DType::kFloat32, {2, 2 * 6 * 2, oh, ow})}, {"b", b}}};
  dc.attrs = [&](onnx::NodeProto& n) {
    attrs(n);
    ModelBuilder::attr_int(n, "offset_group", 2);
  };
  const Tensor got = run_node(dc)[0];
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) EXPECT_NEAR(got.data_as<float>()[i], want.data_as<float>()[i], 1e-5);
}

TEST(DeformConv, OffsetsShiftAndMaskScales) {
  // 1x1 kernel of weight 1 on a 1x3 row [0, 1, 2]: an offset of dx = 1 reads the next pixel
  // (0 beyond the edge), dx = 0.5 interpolates; the mask halves the result.
  NodeCase c{"DeformConv",
             19,
             "",
             {{"x", iota_tensor({1, 1, 1, 3})},
              {"w", tensor_of<float>({1, 1, 1, 1}, {1})},
              {"off", tensor_of<float>({1, 2, 1, 3}, {0, 0, 0, 1, 0.5f, 1})},
              {"", Tensor()},
              {"mask", tensor_of<float>({1, 1, 1, 3}, {1, 1, 0.5f})}}};
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 1.5f, 0}));
  c.inputs[2].second = Tensor::zeros(DType::kFloat32, {1, 2, 1, 2});
  EXPECT_NE(node_error(c).find("input offset has shape [1, 2, 1, 2], expected [1, 2, 1, 3]"), std::string::npos)
      << node_error(c);
}
