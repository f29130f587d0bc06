// LpPool / GlobalLpPool, MaxUnpool (the inverse of MaxPool with its Indices), MaxRoiPool and
// Col2Im (the adjoint of im2col): against hand-written sums and identities.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(LpPool, WindowNormsAndGlobal) {
  NodeCase c{"LpPool", 18, "", {{"x", tensor_of<float>({1, 1, 1, 4}, {3, -4, 1, 1})}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_ints(n, "kernel_shape", {1, 2});
    ModelBuilder::attr_ints(n, "strides", {1, 2});
  };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{5, std::sqrt(2.f)}));
  NodeCase g{"GlobalLpPool", 2, "", {{"x", tensor_of<float>({1, 2, 2}, {1, -1, 2, 2})}}};
  g.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "p", 1); };
  EXPECT_EQ(values_of<float>(run_node(g)[0]), (std::vector<float>{2, 4}));
  NodeCase old{"GlobalLpPool", 1, "", {{"x", tensor_of<float>({1, 1, 2}, {3, 4})}}};  // float p, default 2
  EXPECT_EQ(values_of<float>(run_node(old)[0]), (std::vector<float>{5}));
}

TEST(MaxUnpool, InvertsMaxPoolIndices) {
  std::mt19937 rng(3);
  Tensor x = Tensor::allocate(DType::kFloat32, {2, 3, 6, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(rng() % 1000);
  NodeCase pool{"MaxPool", 12, "", {{"x", x}}, {"y", "idx"}};
  auto window = [](onnx::NodeProto& n) {
    ModelBuilder::attr_ints(n, "kernel_shape", {2, 2});
    ModelBuilder::attr_ints(n, "strides", {2, 2});
  };
  pool.attrs = window;
  const auto pooled = run_node(pool);
  NodeCase unpool{"MaxUnpool", 11, "", {{"p", pooled[0]}, {"i", pooled[1]}}};
  unpool.attrs = window;
  const Tensor u = run_node(unpool)[0];
  ASSERT_EQ(u.shape(), x.shape());
  for (int64_t i = 0; i < u.numel(); ++i) {  // each kept maximum is back in place, zeros elsewhere
    const float v = u.data_as<float>()[i];
    EXPECT_TRUE(v == 0 || v == x.data_as<float>()[i]) << i;
  }
  unpool.inputs[1].second.data_as<int64_t>()[0] = 1000;
  EXPECT_NE(node_error(unpool).find("holds 1000 at position 0, outside the output"), std::string::npos)
      << node_error(unpool);
}

TEST(MaxRoiPool, BinsOfTheRoundedRoi) {
  // 4x4 image of 0..15, ROI (x 0..3, y 0..1) pooled to 1x2: maxima of columns 0-1 and 2-3 in rows 0-1.
  NodeCase c{
      "MaxRoiPool", 1, "", {{"x", iota_tensor({1, 1, 4, 4})}, {"rois", tensor_of<float>({1, 5}, {0, 0, 0, 3, 1})}}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_ints(n, "pooled_shape", {1, 2}); };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{5, 7}));
  c.inputs[1].second = tensor_of<float>({1, 5}, {3, 0, 0, 3, 1});
  EXPECT_NE(node_error(c).find("names batch 3"), std::string::npos) << node_error(c);
}

TEST(Col2Im, IsTheAdjointOfIm2col) {
  // <im2col(a), b> == <a, col2im(b)> for random a (image) and b (columns), 2x2 blocks, stride 1,
  // pad 1, dilation 2 on a 4x5 image.
  const int64_t H = 4, W = 5, kh = 2, kw = 2, pad = 1, dil = 2;
  const int64_t oh = H + 2 * pad - (kh - 1) * dil, ow = W + 2 * pad - (kw - 1) * dil, L = oh * ow;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor a = Tensor::allocate(DType::kFloat32, {1, 1, H, W}), b = Tensor::allocate(DType::kFloat32, {1, kh * kw, L});
  for (int64_t i = 0; i < a.numel(); ++i) a.data_as<float>()[i] = u(rng);
  for (int64_t i = 0; i < b.numel(); ++i) b.data_as<float>()[i] = u(rng);
  double lhs = 0;
  for (int64_t k = 0; k < kh * kw; ++k)
    for (int64_t l = 0; l < L; ++l) {
      const int64_t y = l / ow - pad + (k / kw) * dil, x = l % ow - pad + (k % kw) * dil;
      if (y >= 0 && y < H && x >= 0 && x < W) lhs += a.data_as<float>()[y * W + x] * b.data_as<float>()[k * L + l];
    }
  NodeCase c{"Col2Im",
             18,
             "",
             {{"b", b}, {"image", tensor_of<int64_t>({2}, {H, W})}, {"block", tensor_of<int64_t>({2}, {kh, kw})}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_ints(n, "pads", {1, 1, 1, 1});
    ModelBuilder::attr_ints(n, "dilations", {2, 2});
  };
  const Tensor img = run_node(c)[0];
  ASSERT_EQ(img.shape(), (Shape{1, 1, H, W}));
  double rhs = 0;
  for (int64_t i = 0; i < a.numel(); ++i) rhs += a.data_as<float>()[i] * img.data_as<float>()[i];
  EXPECT_NEAR(lhs, rhs, 1e-5);
  c.inputs[0].second = Tensor::allocate(DType::kFloat32, {1, kh * kw, L + 1});
  EXPECT_NE(node_error(c).find("expected [N, C * 4, 20]"), std::string::npos) << node_error(c);
}
