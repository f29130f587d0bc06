// Adagrad, Momentum (standard, nesterov) and Adam steps of ai.onnx.preview.training against
// their formulas worked out by hand for one element, two tensors in one node, T = 0 vs T > 0,
// and the input-count and shape errors.
#include <gtest/gtest.h>

#include <cmath>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {
const char kDomain[] = "ai.onnx.preview.training";
Tensor scalar(float v) { return tensor_of<float>({}, {v}); }
Tensor count(int64_t t) { return tensor_of<int64_t>({}, {t}); }
Tensor one(float v) { return tensor_of<float>({1}, {v}); }
}  // namespace

TEST(Optimizers, AdagradStep) {
  NodeCase c{"Adagrad",
             1,
             kDomain,
             {{"r", scalar(0.1f)}, {"t", count(2)}, {"x", one(1)}, {"g", one(-1)}, {"h", one(2)}},
             {"x_new", "h_new"}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_float(n, "decay_factor", 0.5f);
    ModelBuilder::attr_float(n, "norm_coefficient", 0.001f);
  };
  const auto r = run_node(c);
  const double gr = 0.001 - 1, h = 2 + gr * gr, rate = 0.1 / (1 + 2 * 0.5);
  EXPECT_NEAR(r[0].data_as<float>()[0], 1 - rate * gr / (std::sqrt(h) + 1e-6), 1e-6);
  EXPECT_NEAR(r[1].data_as<float>()[0], h, 1e-6);
}

TEST(Optimizers, MomentumStandardAndNesterovTwoTensors) {
  for (const char* mode : {"standard", "nesterov"}) {
    NodeCase c{"Momentum",
               1,
               kDomain,
               {{"r", scalar(0.1f)},
                {"t", count(0)},
                {"x1", one(1)},
                {"x2", tensor_of<float>({2}, {2, 3})},
                {"g1", one(-1)},
                {"g2", tensor_of<float>({2}, {1, 1})},
                {"v1", one(2)},
                {"v2", tensor_of<float>({2}, {0, 0})}},
               {"x1n", "x2n", "v1n", "v2n"}};
    c.attrs = [mode](onnx::NodeProto& n) {
      ModelBuilder::attr_float(n, "alpha", 0.9f);
      ModelBuilder::attr_float(n, "beta", 0.5f);
      ModelBuilder::attr_float(n, "norm_coefficient", 0.f);
      ModelBuilder::attr_string(n, "mode", mode);
    };
    const auto r = run_node(c);
    const double v = 0.9 * 2 + 1.0 * -1;  // T = 0: beta is replaced by 1
    const double x = mode[0] == 's' ? 1 - 0.1 * v : 1 - 0.1 * (-1 + 0.9 * v);
    EXPECT_NEAR(r[0].data_as<float>()[0], x, 1e-6) << mode;
    EXPECT_NEAR(r[2].data_as<float>()[0], v, 1e-6) << mode;
    EXPECT_EQ(r[1].shape(), (Shape{2}));
  }
}

TEST(Optimizers, AdamStepAndErrors) {
  NodeCase c{"Adam",
             1,
             kDomain,
             {{"r", scalar(0.1f)}, {"t", count(3)}, {"x", one(1)}, {"g", one(-1)}, {"v", one(2)}, {"h", one(0.5f)}},
             {"xn", "vn", "hn"}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_float(n, "norm_coefficient_post", 0.1f); };
  const auto r = run_node(c);
  const double v = 0.9 * 2 + 0.1 * -1, h = 0.999 * 0.5 + 0.001 * 1;
  const double rate = 0.1 * std::sqrt(1 - std::pow(0.999, 3)) / (1 - std::pow(0.9, 3));
  EXPECT_NEAR(r[0].data_as<float>()[0], 0.9 * (1 - rate * v / (std::sqrt(h) + 1e-6)), 1e-6);
  EXPECT_NEAR(r[1].data_as<float>()[0], v, 1e-6);
  EXPECT_NEAR(r[2].data_as<float>()[0], h, 1e-6);
  c.inputs[5].second = tensor_of<float>({2}, {1, 1});
  EXPECT_NE(node_error(c).find("but X (input 2) is float32 [1]"), std::string::npos) << node_error(c);
  c.inputs.pop_back();
  EXPECT_NE(node_error(c).find("takes R, T and 4 tensors per optimised tensor"), std::string::npos) << node_error(c);
}
