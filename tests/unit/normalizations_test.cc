// LRN, MeanVarianceNormalization, LpNormalization and GroupNormalization: each against its
// formula evaluated independently here in double (different loop structure from the kernels),
// on odd sizes and float16; attribute errors.
#include <gtest/gtest.h>

#include <cmath>

#include "support/node_runner.h"
#include "support/random.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(Lrn, MatchesFormula) {
  const Tensor x = random_floats({2, 5, 3}, 1, -2, 2);
  NodeCase c{"LRN", 13, "", {{"x", x}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "size", 4);  // window [c - 1, c + 2]
    ModelBuilder::attr_float(n, "alpha", 0.5f);
    ModelBuilder::attr_float(n, "bias", 2.f);
  };
  const Tensor y = run_node(c)[0];
  const float* in = x.data_as<float>();
  for (int n = 0; n < 2; ++n)
    for (int ch = 0; ch < 5; ++ch)
      for (int s = 0; s < 3; ++s) {
        double sq = 0;
        for (int i = ch - 1; i <= ch + 2; ++i)
          if (i >= 0 && i < 5) sq += std::pow(in[(n * 5 + i) * 3 + s], 2);
        const double want = in[(n * 5 + ch) * 3 + s] / std::pow(2 + 0.5 / 4 * sq, 0.75);
        EXPECT_NEAR(y.data_as<float>()[(n * 5 + ch) * 3 + s], want, 1e-6);
      }
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "size", 0); };
  EXPECT_NE(node_error(c).find("'size' must be >= 1"), std::string::npos);
}

TEST(MeanVarianceNormalization, DefaultAxesAndCustomAxes) {
  const Tensor x = random_floats({2, 3, 2, 3}, 2, -2, 2);
  NodeCase c{"MeanVarianceNormalization", 13, "", {{"x", x}}};
  const Tensor y = run_node(c)[0];
  for (int ch = 0; ch < 3; ++ch) {  // default axes [0, 2, 3]: statistics per channel
    double sum = 0, sq = 0;
    for (int n = 0; n < 2; ++n)
      for (int s = 0; s < 6; ++s) {
        const double v = x.data_as<float>()[(n * 3 + ch) * 6 + s];
        sum += v;
        sq += v * v;
      }
    const double m = sum / 12, sd = std::sqrt(sq / 12 - m * m);
    for (int n = 0; n < 2; ++n)
      for (int s = 0; s < 6; ++s) {
        const int at = (n * 3 + ch) * 6 + s;
        EXPECT_NEAR(y.data_as<float>()[at], (x.data_as<float>()[at] - m) / (sd + 1e-9), 1e-5);
      }
  }
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_ints(n, "axes", {1, 2, 3}); };
  const Tensor z = run_node(c)[0];
  double mean0 = 0;
  for (int i = 0; i < 18; ++i) mean0 += z.data_as<float>()[i];
  EXPECT_NEAR(mean0, 0, 1e-5);  // per sample: zero mean
}

TEST(LpNormalization, L1AndL2) {
  NodeCase c{"LpNormalization", 1, "", {{"x", tensor_of<float>({2, 2}, {3, 4, -1, 1})}}};
  EXPECT_EQ(values_of<float>(run_node(c)[0]),
            (std::vector<float>{0.6f, 0.8f, -1 / std::sqrt(2.f), 1 / std::sqrt(2.f)}));
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "p", 1);
    ModelBuilder::attr_int(n, "axis", 0);
  };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{0.75f, 0.8f, -0.25f, 0.2f}));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "p", 3); };
  EXPECT_NE(node_error(c).find("'p' must be 1 or 2"), std::string::npos);
}

TEST(GroupNormalization, PerGroupAndPerChannelScale) {
  const Tensor x = random_floats({1, 4, 3}, 3, -2, 2);
  auto expect_group_norm = [&](const Tensor& y, const std::vector<float>& scale, bool per_channel) {
    for (int g = 0; g < 2; ++g) {
      double sum = 0, sq = 0;
      for (int i = 0; i < 6; ++i) sum += x.data_as<float>()[g * 6 + i];
      const double m = sum / 6;
      for (int i = 0; i < 6; ++i) sq += std::pow(x.data_as<float>()[g * 6 + i] - m, 2);
      for (int i = 0; i < 6; ++i) {
        const float s = scale[per_channel ? g * 2 + i / 3 : g];
        EXPECT_NEAR(y.data_as<float>()[g * 6 + i],
                    (x.data_as<float>()[g * 6 + i] - m) / std::sqrt(sq / 6 + 1e-5) * s + 1, 1e-5);
      }
    }
  };
  auto groups = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "num_groups", 2); };
  NodeCase g18{"GroupNormalization",
               18,
               "",
               {{"x", x}, {"scale", tensor_of<float>({2}, {2, 3})}, {"bias", tensor_of<float>({2}, {1, 1})}}};
  g18.attrs = groups;
  expect_group_norm(run_node(g18)[0], {2, 3}, false);
  NodeCase g21{
      "GroupNormalization",
      21,
      "",
      {{"x", x}, {"scale", tensor_of<float>({4}, {1, 2, 3, 4})}, {"bias", tensor_of<float>({4}, {1, 1, 1, 1})}}};
  g21.attrs = groups;
  expect_group_norm(run_node(g21)[0], {1, 2, 3, 4}, true);
  g21.inputs[1].second = tensor_of<float>({2}, {1, 2});
  EXPECT_NE(node_error(g21).find("expected [4] (one per channel, opset 21)"), std::string::npos) << node_error(g21);
  g21.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "num_groups", 3); };
  EXPECT_NE(node_error(g21).find("num_groups 3 does not divide C = 4"), std::string::npos);
}
