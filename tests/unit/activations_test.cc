// Selu, Celu, ThresholdedRelu, Shrink, Softsign, Gelu, Mish and the trigonometric/hyperbolic
// functions: each session kernel against a double-precision formula written out here, on
// awkward sizes (0, 1, odd, around the float16 staging block of 1024), for float32, float64
// and float16; attribute defaults and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "support/node_runner.h"
#include "support/random.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

using Formula = std::function<double(double)>;

double element(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kFloat32) return t.data_as<float>()[i];
  if (t.dtype() == DType::kFloat64) return t.data_as<double>()[i];
  return half_to_float(t.data_as<uint16_t>()[i]);
}

// Runs `op` on random inputs in [lo, hi] and compares with `f` evaluated in double on the same
// (already rounded) inputs.
void check_against_formula(const std::string& op, int64_t opset, double lo, double hi, const Formula& f,
                           const std::function<void(onnx::NodeProto&)>& attrs = {}) {
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    const double tol = dtype == DType::kFloat16 ? 2e-3 : (dtype == DType::kFloat32 ? 2e-6 : 1e-13);
    for (int64_t n : {0, 1, 7, 1023, 1025}) {
      NodeCase c{op, opset, "", {{"x", random_values(dtype, {n}, static_cast<uint32_t>(n), lo, hi)}}};
      c.attrs = attrs;
      const Tensor y = run_node(c)[0];
      ASSERT_EQ(y.dtype(), dtype);
      ASSERT_EQ(y.numel(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double x = element(c.inputs[0].second, i), want = f(x);
        ASSERT_NEAR(element(y, i), want, tol * (1 + std::fabs(want))) << op << " " << dtype_name(dtype) << " x=" << x;
      }
    }
  }
}

}  // namespace

TEST(Activations, SeluCeluThresholdedReluSoftsign) {
  const double a = 1.67326319217681884765625, g = 1.05070102214813232421875;
  check_against_formula("Selu", 6, -4, 4, [&](double x) { return g * (x > 0 ? x : a * (std::exp(x) - 1)); });
  check_against_formula(
      "Selu", 6, -4, 4, [&](double x) { return 3.0 * (x > 0 ? x : 2.0 * (std::exp(x) - 1)); },
      [](onnx::NodeProto& n) {
        ModelBuilder::attr_float(n, "alpha", 2);
        ModelBuilder::attr_float(n, "gamma", 3);
      });
  check_against_formula("ThresholdedRelu", 10, -3, 3, [](double x) { return x > 1 ? x : 0; });
  check_against_formula("Softsign", 1, -10, 10, [](double x) { return x / (1 + std::fabs(x)); });
  // Celu is float32 only in ONNX; its formula at alpha = 2.
  NodeCase c{"Celu", 12, "", {{"x", tensor_of<float>({4}, {-2, -0.5f, 0, 3})}}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_float(n, "alpha", 2); };
  const Tensor y = run_node(c)[0];
  for (int i = 0; i < 4; ++i) {
    const double x = c.inputs[0].second.data_as<float>()[i];
    EXPECT_NEAR(y.data_as<float>()[i], std::max(0.0, x) + std::min(0.0, 2 * (std::exp(x / 2) - 1)), 1e-6);
  }
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_float(n, "alpha", 0); };
  EXPECT_NE(node_error(c).find("attribute 'alpha' must not be 0"), std::string::npos) << node_error(c);
}

TEST(Activations, ShrinkOnFloatsAndIntegers) {
  check_against_formula("Shrink", 9, -3, 3, [](double x) { return x < -0.5 ? x : (x > 0.5 ? x : 0); });
  NodeCase c{"Shrink", 9, "", {{"x", tensor_of<int32_t>({5}, {-3, -1, 0, 1, 3})}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_float(n, "lambd", 1.5f);
    ModelBuilder::attr_float(n, "bias", 1.5f);
  };
  // -3 + 1.5 = -1.5 -> -1 (truncation, as numpy's astype), 3 - 1.5 = 1.5 -> 1.
  EXPECT_EQ(values_of<int32_t>(run_node(c)[0]), (std::vector<int32_t>{-1, 0, 0, 0, 1}));
}

TEST(Activations, GeluExactAndTanhAndMish) {
  check_against_formula("Gelu", 20, -5, 5, [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
  check_against_formula(
      "Gelu", 20, -5, 5,
      [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); },
      [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "approximate", "tanh"); });
  check_against_formula("Mish", 18, -20, 20, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
  NodeCase c{"Gelu", 20, "", {{"x", iota_tensor({2})}}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "approximate", "erf"); };
  EXPECT_NE(node_error(c).find("attribute 'approximate' is 'erf'"), std::string::npos) << node_error(c);
}

TEST(Trigonometric, EachFunctionOnItsDomain) {
  check_against_formula("Tan", 7, -1.5, 1.5, [](double x) { return std::tan(x); });
  check_against_formula("Asin", 7, -1, 1, [](double x) { return std::asin(x); });
  check_against_formula("Acos", 7, -1, 1, [](double x) { return std::acos(x); });
  check_against_formula("Atan", 7, -10, 10, [](double x) { return std::atan(x); });
  check_against_formula("Sinh", 9, -5, 5, [](double x) { return std::sinh(x); });
  check_against_formula("Cosh", 9, -5, 5, [](double x) { return std::cosh(x); });
  check_against_formula("Asinh", 9, -10, 10, [](double x) { return std::asinh(x); });
  check_against_formula("Acosh", 9, 1, 10, [](double x) { return std::acosh(x); });
  check_against_formula("Atanh", 9, -0.99, 0.99, [](double x) { return std::atanh(x); });
  NodeCase outside{"Asin", 7, "", {{"x", tensor_of<float>({1}, {2})}}};
  EXPECT_TRUE(std::isnan(run_node(outside)[0].data_as<float>()[0]));
}
