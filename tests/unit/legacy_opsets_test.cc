// Operator versions before opset 7 (ops/version_adapter.h, tensor/legacy.cc and the opset
// checks in the kernels): each as ONNX defines it, against hand-computed results, and the
// errors that the old semantics call for.
#include <gtest/gtest.h>

#include <cmath>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

void set_int(onnx::NodeProto& n, const char* name, int64_t v) { ModelBuilder::attr_int(n, name, v); }

}  // namespace

TEST(LegacyBroadcast, AxisAlignsBToTheMiddleOfA) {
  // A [2, 3, 4], B [3] at axis 1: B[j] is added along A's second dimension.
  NodeCase c{"Add", 6, "", {{"a", iota_tensor({2, 3, 4})}, {"b", tensor_of<float>({3}, {100, 200, 300})}}};
  c.attrs = [](onnx::NodeProto& n) {
    set_int(n, "broadcast", 1);
    set_int(n, "axis", 1);
  };
  auto y = run_node(c)[0];
  ASSERT_EQ(y.shape(), (Shape{2, 3, 4}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        EXPECT_EQ(y.data_as<float>()[(i * 3 + j) * 4 + k], (i * 3 + j) * 4 + k + 100.f * (j + 1));
}

TEST(LegacyBroadcast, DefaultAxisIsSuffixAndSizeOneRepeats) {
  NodeCase c{"Mul", 1, "", {{"a", iota_tensor({2, 3})}, {"b", tensor_of<float>({2, 1}, {2, 3})}}};
  c.attrs = [](onnx::NodeProto& n) {
    set_int(n, "broadcast", 1);
    ModelBuilder::attr_ints(n, "consumed_inputs", {0, 0});  // legacy in-place hint: ignored
  };
  auto y = run_node(c)[0];
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{0, 2, 4, 9, 12, 15}));
}

TEST(LegacyBroadcast, ScalarAndPowAndComparisons) {
  NodeCase pow{"Pow", 6, "", {{"a", iota_tensor({2, 2}, 1)}, {"b", tensor_of<float>({1}, {2})}}};
  pow.attrs = [](onnx::NodeProto& n) { set_int(n, "broadcast", 1); };
  EXPECT_EQ(values_of<float>(run_node(pow)[0]), (std::vector<float>{1, 4, 9, 16}));
  NodeCase eq{
      "Equal", 1, "", {{"a", tensor_of<int64_t>({2, 2}, {1, 2, 3, 2})}, {"b", tensor_of<int64_t>({2}, {1, 2})}}};
  eq.attrs = [](onnx::NodeProto& n) { set_int(n, "broadcast", 1); };
  EXPECT_EQ(values_of<bool>(run_node(eq)[0]), (std::vector<bool>{true, true, false, true}));
}

TEST(LegacyBroadcast, Errors) {
  NodeCase c{"Sub", 6, "", {{"a", iota_tensor({2, 3})}, {"b", iota_tensor({3})}}};
  EXPECT_NE(node_error(c).find("must be equal unless broadcast = 1"), std::string::npos) << node_error(c);
  c.attrs = [](onnx::NodeProto& n) {
    set_int(n, "broadcast", 1);
    set_int(n, "axis", 0);
  };
  EXPECT_NE(node_error(c).find("does not match input 0 of shape [2, 3] at axis 0"), std::string::npos) << node_error(c);
  c.attrs = [](onnx::NodeProto& n) {
    set_int(n, "broadcast", 1);
    set_int(n, "axis", 2);
  };
  EXPECT_NE(node_error(c).find("axis 2 does not place input 1"), std::string::npos) << node_error(c);
  EXPECT_NE(node_error(c).find("node 'node0' (Sub)"), std::string::npos);
}

TEST(LegacyPRelu, OneSlopePerChannel) {
  NodeCase c{"PRelu", 6, "", {{"x", iota_tensor({1, 2, 2}, -2)}, {"s", tensor_of<float>({2}, {10, 100})}}};
  // x = [[-2, -1], [0, 1]]: channel 0 scales by 10, channel 1 by 100.
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{-20, -10, 0, 1}));
}

TEST(LegacyCast, TypeNameString) {
  NodeCase c{"Cast", 5, "", {{"x", tensor_of<float>({3}, {1.5f, -2.5f, 7})}}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "to", "INT32"); };
  auto y = run_node(c)[0];
  EXPECT_EQ(y.dtype(), DType::kInt32);
  EXPECT_EQ(values_of<int32_t>(y), (std::vector<int32_t>{1, -2, 7}));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "to", "float"); };
  EXPECT_NE(node_error(c).find("attribute 'to' is 'float', not a TensorProto data type name"), std::string::npos)
      << node_error(c);
}

TEST(LegacyDropout, IsTestSelectsInferenceOrTraining) {
  const Tensor x = iota_tensor({1000}, 1);
  NodeCase c{"Dropout", 6, "", {{"x", x}}, {"y", "mask"}};
  c.attrs = [](onnx::NodeProto& n) { set_int(n, "is_test", 1); };
  auto r = run_node(c);
  EXPECT_EQ(values_of<float>(r[0]), values_of<float>(x));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_float(n, "ratio", 0.25f); };  // is_test = 0: trains
  r = run_node(c);
  ASSERT_EQ(r[1].dtype(), DType::kFloat32);  // the mask has the input's type before opset 10
  int kept = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    const float m = r[1].data_as<float>()[i], v = r[0].data_as<float>()[i];
    ASSERT_TRUE(m == 0.f || m == 1.f);
    EXPECT_FLOAT_EQ(v, m * x.data_as<float>()[i] / 0.75f);
    kept += m == 1.f;
  }
  EXPECT_GT(kept, 650);  // 750 expected; far outside 5 sigma otherwise
  EXPECT_LT(kept, 850);
}

TEST(LegacyBatchNorm, IsTestOneIsInferenceZeroUsesBatchStatistics) {
  const Tensor x = tensor_of<float>({2, 1, 2}, {1, 2, 3, 6});  // one channel: mean 3, variance 3.5
  auto param = [](float v) { return tensor_of<float>({1}, {v}); };
  NodeCase c{"BatchNormalization",
             6,
             "",
             {{"x", x}, {"scale", param(2)}, {"b", param(1)}, {"mean", param(0)}, {"var", param(1)}}};
  c.attrs = [](onnx::NodeProto& n) {
    set_int(n, "is_test", 1);
    ModelBuilder::attr_float(n, "epsilon", 0.f);
  };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{3, 5, 7, 13}));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_float(n, "epsilon", 0.f); };
  c.outputs = {"y", "running_mean", "running_var", "saved_mean", "saved_var"};
  auto r = run_node(c);
  const float inv = 1.f / std::sqrt(3.5f);
  EXPECT_NEAR(r[0].data_as<float>()[0], 2 * (1 - 3) * inv + 1, 1e-5);
  EXPECT_NEAR(r[0].data_as<float>()[3], 2 * (6 - 3) * inv + 1, 1e-5);
  EXPECT_NEAR(r[1].data_as<float>()[0], 0.9f * 0 + 0.1f * 3, 1e-6);  // momentum 0.9
  EXPECT_NEAR(r[2].data_as<float>()[0], 0.9f * 1 + 0.1f * 3.5f, 1e-6);
  EXPECT_NEAR(r[3].data_as<float>()[0], 3, 1e-6);
  EXPECT_NEAR(r[4].data_as<float>()[0], 3.5f, 1e-6);
}

TEST(LegacyTensorOps, ReshapeAttributeSplitInputTileAxisPadPaddingsConcatDefaultAxis) {
  NodeCase reshape{"Reshape", 4, "", {{"x", iota_tensor({2, 3})}}};
  reshape.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_ints(n, "shape", {3, -1}); };
  EXPECT_EQ(run_node(reshape)[0].shape(), (Shape{3, 2}));

  NodeCase split{"Split", 1, "", {{"x", iota_tensor({5})}, {"split", tensor_of<float>({2}, {2, 3})}}, {"p", "q"}};
  auto parts = run_node(split);
  EXPECT_EQ(values_of<float>(parts[1]), (std::vector<float>{2, 3, 4}));
  split.inputs.pop_back();
  split.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_ints(n, "split", {4, 1}); };
  EXPECT_EQ(run_node(split)[0].shape(), (Shape{4}));
  split.inputs.push_back({"split", tensor_of<float>({2}, {2.5f, 2.5f})});
  EXPECT_NE(node_error(split).find("not both"), std::string::npos) << node_error(split);

  NodeCase tile{
      "Tile",
      5,
      "",
      {{"x", iota_tensor({2, 2})}, {"tiles", tensor_of<int64_t>({}, {3})}, {"axis", tensor_of<int64_t>({}, {1})}}};
  auto t = run_node(tile)[0];
  EXPECT_EQ(t.shape(), (Shape{2, 6}));
  EXPECT_EQ(values_of<float>(t), (std::vector<float>{0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3}));

  NodeCase pad{"Pad", 1, "", {{"x", iota_tensor({1, 2})}}};
  pad.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_ints(n, "paddings", {0, 1, 0, 2});
    ModelBuilder::attr_float(n, "value", 9);
  };
  EXPECT_EQ(values_of<float>(run_node(pad)[0]), (std::vector<float>{9, 0, 1, 9, 9}));

  NodeCase concat{"Concat", 3, "", {{"a", iota_tensor({1, 2})}, {"b", iota_tensor({1, 1}, 5)}}};
  EXPECT_EQ(values_of<float>(run_node(concat)[0]), (std::vector<float>{0, 1, 5}));
}

TEST(LegacyGemm, CBroadcastsOnlyWithTheAttribute) {
  NodeCase c{
      "Gemm", 6, "", {{"a", iota_tensor({2, 2})}, {"b", iota_tensor({2, 2})}, {"c", tensor_of<float>({2}, {1, 2})}}};
  EXPECT_NE(node_error(c).find("must be the output's [2, 2]"), std::string::npos) << node_error(c);
  c.attrs = [](onnx::NodeProto& n) { set_int(n, "broadcast", 1); };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{3, 5, 7, 13}));
}

TEST(LegacyUpsample, HeightAndWidthScales) {
  NodeCase c{"Upsample", 6, "", {{"x", iota_tensor({1, 1, 2, 2}, 1)}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_float(n, "height_scale", 2);
    ModelBuilder::attr_float(n, "width_scale", 1);
  };
  auto y = run_node(c)[0];
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 2}));
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_float(n, "height_scale", 1);
    ModelBuilder::attr_float(n, "width_scale", 2);
    ModelBuilder::attr_string(n, "mode", "bilinear");
  };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 1.5f, 2, 2, 3, 3.5f, 4, 4}));
}
