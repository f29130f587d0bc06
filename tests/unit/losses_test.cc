// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against sums written out by hand
// (ONNX's numpy reference semantics): reductions, weights, ignore_index, extra dims, int32
// targets, the log_prob output, and the errors.
#include <gtest/gtest.h>

#include <cmath>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {
void reduction(onnx::NodeProto& n, const char* r) { ModelBuilder::attr_string(n, "reduction", r); }
}  // namespace

TEST(NllLoss, ReductionsWeightsAndIgnoreIndex) {
  // input [2, 3], targets [2, 0].
  const Tensor x = tensor_of<float>({2, 3}, {0.1f, 0.2f, 0.7f, 0.5f, 0.3f, 0.2f});
  NodeCase c{"NegativeLogLikelihoodLoss", 13, "", {{"x", x}, {"t", tensor_of<int64_t>({2}, {2, 0})}}};
  EXPECT_FLOAT_EQ(run_node(c)[0].data_as<float>()[0], -(0.7f + 0.5f) / 2);
  c.attrs = [](onnx::NodeProto& n) { reduction(n, "none"); };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{-0.7f, -0.5f}));
  c.inputs.push_back({"w", tensor_of<float>({3}, {1, 2, 4})});
  c.attrs = [](onnx::NodeProto& n) { reduction(n, "mean"); };
  EXPECT_FLOAT_EQ(run_node(c)[0].data_as<float>()[0], -(0.7f * 4 + 0.5f * 1) / 5);  // divided by the weights
  c.attrs = [](onnx::NodeProto& n) {
    reduction(n, "sum");
    ModelBuilder::attr_int(n, "ignore_index", 2);
  };
  EXPECT_FLOAT_EQ(run_node(c)[0].data_as<float>()[0], -0.5f);
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "ignore_index", 0); };  // mean of one
  EXPECT_FLOAT_EQ(run_node(c)[0].data_as<float>()[0], -0.7f);
}

TEST(NllLoss, ExtraDimsInt32TargetsAndErrors) {
  // input [1, 2, 2] (N, C, d1), target [1, 2].
  NodeCase c{"NegativeLogLikelihoodLoss",
             13,
             "",
             {{"x", tensor_of<double>({1, 2, 2}, {1, 2, 3, 4})}, {"t", tensor_of<int32_t>({1, 2}, {1, 0})}}};
  c.attrs = [](onnx::NodeProto& n) { reduction(n, "none"); };
  const Tensor y = run_node(c)[0];
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  EXPECT_EQ(values_of<double>(y), (std::vector<double>{-3, -2}));
  c.inputs[1].second = tensor_of<int32_t>({1, 2}, {1, 2});
  EXPECT_NE(node_error(c).find("holds 2 at flat position 1, outside [0, 1]"), std::string::npos) << node_error(c);
  c.inputs[1].second = tensor_of<int32_t>({2}, {1, 0});
  EXPECT_NE(node_error(c).find("has shape [2], expected [1, 2]"), std::string::npos) << node_error(c);
  c.attrs = [](onnx::NodeProto& n) { reduction(n, "average"); };
  EXPECT_NE(node_error(c).find("attribute 'reduction' is 'average'"), std::string::npos) << node_error(c);
}

TEST(SoftmaxCrossEntropy, LossAndLogProb) {
  const Tensor x = tensor_of<float>({2, 2}, {0, 0, 1, 3});
  NodeCase c{"SoftmaxCrossEntropyLoss", 13, "", {{"x", x}, {"t", tensor_of<int64_t>({2}, {0, 1})}}, {"loss", "logp"}};
  const auto r = run_node(c);
  const double lp00 = -std::log(2.0), lp11 = 3 - std::log(std::exp(1.0) + std::exp(3.0));
  EXPECT_NEAR(r[0].data_as<float>()[0], -(lp00 + lp11) / 2, 1e-6);
  EXPECT_NEAR(r[1].data_as<float>()[3], lp11, 1e-6);
  EXPECT_NEAR(r[1].data_as<float>()[1], lp00, 1e-6);
  c.attrs = [](onnx::NodeProto& n) {
    reduction(n, "sum");
    ModelBuilder::attr_int(n, "ignore_index", 0);
  };
  c.inputs[1].second = tensor_of<int64_t>({2}, {0, 0});
  EXPECT_EQ(run_node(c)[0].data_as<float>()[0], 0.f);  // everything ignored: sum 0
}
