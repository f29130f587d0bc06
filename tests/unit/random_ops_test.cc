// Random generators: seeded nodes repeat exactly, unseeded runs differ, the moments of large
// samples fall within 6 standard errors, Bernoulli follows p, Multinomial follows the softmax;
// dtype and shape attributes; never constant-folded.
#include <gtest/gtest.h>

#include <cmath>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {
void seed(onnx::NodeProto& n, float s) { ModelBuilder::attr_float(n, "seed", s); }
double mean_of(const Tensor& t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    m += t.dtype() == DType::kFloat64 ? t.data_as<double>()[i] : t.data_as<float>()[i];
  return m / t.numel();
}
}  // namespace

TEST(RandomOps, UniformMomentsSeedAndShape) {
  NodeCase c{"RandomUniform", 1, "", {}, {"y"}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_ints(n, "shape", {200, 100});
    ModelBuilder::attr_float(n, "low", 2);
    ModelBuilder::attr_float(n, "high", 4);
    seed(n, 7);
  };
  const Tensor a = run_node(c)[0], b = run_node(c)[0];
  ASSERT_EQ(a.shape(), (Shape{200, 100}));
  EXPECT_EQ(values_of<float>(a), values_of<float>(b));  // seeded: repeatable
  EXPECT_NEAR(mean_of(a), 3.0, 6 * (2 / std::sqrt(12.0)) / std::sqrt(20000.0));
  for (float v : values_of<float>(a)) ASSERT_TRUE(v >= 2 && v < 4);
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_ints(n, "shape", {64}); };
  EXPECT_NE(values_of<float>(run_node(c)[0]), values_of<float>(run_node(c)[0]));  // unseeded: fresh
}

TEST(RandomOps, NormalLikeTakesShapeAndDtype) {
  NodeCase c{"RandomNormalLike", 1, "", {{"x", Tensor::zeros(DType::kInt32, {100, 100})}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "dtype", static_cast<int>(DType::kFloat64));
    ModelBuilder::attr_float(n, "mean", -1);
    ModelBuilder::attr_float(n, "scale", 3);
    seed(n, 1);
  };
  const Tensor y = run_node(c)[0];
  ASSERT_EQ(y.dtype(), DType::kFloat64);
  double m = mean_of(y), var = 0;
  for (double v : values_of<double>(y)) var += (v - m) * (v - m);
  var /= y.numel();
  EXPECT_NEAR(m, -1, 6 * 3 / 100.0);
  EXPECT_NEAR(var, 9, 6 * 9 * std::sqrt(2.0 / 10000));
  c.attrs = {};  // int32 input and no dtype: no float type to produce
  EXPECT_NE(node_error(c).find("is not a float type"), std::string::npos) << node_error(c);
}

TEST(RandomOps, BernoulliFollowsP) {
  Tensor p = Tensor::allocate(DType::kFloat32, {3, 4000});
  for (int64_t i = 0; i < 4000; ++i) {
    p.data_as<float>()[i] = 0.f;
    p.data_as<float>()[4000 + i] = 1.f;
    p.data_as<float>()[8000 + i] = 0.3f;
  }
  NodeCase c{"Bernoulli", 15, "", {{"p", p}}};
  c.constant_inputs = true;  // constant input: the node must still not be folded
  c.optimize = true;
  c.attrs = [](onnx::NodeProto& n) { seed(n, 3); };
  const auto y = values_of<float>(run_node(c)[0]);
  double ones = 0;
  for (int64_t i = 0; i < 4000; ++i) {
    ASSERT_EQ(y[i], 0.f);
    ASSERT_EQ(y[4000 + i], 1.f);
    ones += y[8000 + i];
  }
  EXPECT_NEAR(ones / 4000, 0.3, 6 * std::sqrt(0.21 / 4000));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "dtype", static_cast<int>(DType::kBool)); };
  EXPECT_EQ(run_node(c)[0].dtype(), DType::kBool);
}

TEST(RandomOps, MultinomialFollowsTheSoftmax) {
  // log-probabilities log(0.2), log(0.8) (unnormalised by a constant).
  NodeCase c{"Multinomial", 7, "", {{"x", tensor_of<float>({1, 2}, {std::log(0.2f) + 5, std::log(0.8f) + 5})}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "sample_size", 5000);
    ModelBuilder::attr_int(n, "dtype", static_cast<int>(DType::kInt64));
    seed(n, 11);
  };
  const Tensor y = run_node(c)[0];
  ASSERT_EQ(y.shape(), (Shape{1, 5000}));
  double ones = 0;
  for (int64_t v : values_of<int64_t>(y)) {
    ASSERT_TRUE(v == 0 || v == 1);
    ones += v;
  }
  EXPECT_NEAR(ones / 5000, 0.8, 6 * std::sqrt(0.16 / 5000));
}
