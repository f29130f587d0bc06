// compare_tensors' tolerance rules and metrics, and reading Polygraphy's saved outputs.
#include <gtest/gtest.h>

#include <cmath>

#include "io/npy.h"
#include "io/reference_file.h"
#include "io/tensor_compare.h"
#include "support/model_builder.h"

using namespace pointrt;

namespace {

Tensor doubles(const std::vector<double>& v) {
  Tensor t = Tensor::allocate(DType::kFloat64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<double>()[i] = v[i];
  return t;
}

Tensor floats(const std::vector<float>& v) {
  Tensor t = Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<float>()[i] = v[i];
  return t;
}

std::string base64_encode(const std::string& bytes) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(digits[(v >> (6 * k)) & 63]);
  }
  if (i < bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= uint8_t(bytes[i + 1]) << 8;
    out.push_back(digits[(v >> 18) & 63]);
    out.push_back(digits[(v >> 12) & 63]);
    out += i + 1 < bytes.size() ? std::string(1, digits[(v >> 6) & 63]) + "=" : "==";
  }
  return out;
}

}  // namespace

TEST(TensorCompare, MagnitudeRuleIgnoresNoiseNearZeroThatTheElementwiseRuleFails) {
  Tensor ref = floats({100.f, 0.f, -50.f, 1e-6f});
  Tensor got = floats({100.f, 3e-5f, -50.f, 1e-6f});
  CompareOptions o;
  o.atol = 1e-5;
  o.rtol = 1e-3;
  CompareResult elementwise = compare_tensors(got, ref, o);
  EXPECT_FALSE(elementwise.ok);
  EXPECT_EQ(elementwise.mismatches, 1);
  EXPECT_EQ(elementwise.worst_index, 1);
  EXPECT_EQ(elementwise.worst_at, "[1]");
  o.tolerance = Tolerance::kMagnitude;
  CompareResult magnitude = compare_tensors(got, ref, o);
  EXPECT_TRUE(magnitude.ok) << magnitude.message;
  EXPECT_DOUBLE_EQ(magnitude.magnitude, 100.0);
  EXPECT_NEAR(magnitude.error_to_magnitude, 3e-7, 1e-12);
  EXPECT_NEAR(magnitude.cosine, 1.0, 1e-12);
  // Over the magnitude bound (1e-5 + 0.1) the count and the worst element are reported.
  got.data_as<float>()[2] = -49.5f;
  magnitude = compare_tensors(got, ref, o);
  EXPECT_FALSE(magnitude.ok);
  EXPECT_EQ(magnitude.mismatches, 1);
  EXPECT_EQ(magnitude.worst_at, "[2]");
  EXPECT_NE(magnitude.message.find("got -49.5, ref -50"), std::string::npos) << magnitude.message;
}

TEST(TensorCompare, Float64ReferenceIsComparedInFloat64WhenAllowed) {
  Tensor got = floats({1.f, 2.f});
  Tensor ref = doubles({1.0, 2.0 + 1e-12});
  EXPECT_FALSE(compare_tensors(got, ref, 0, 0).ok);  // strict: element types differ
  CompareOptions o;
  o.atol = 0;
  o.rtol = 0;
  o.any_float_reference = true;
  CompareResult r = compare_tensors(got, ref, o);
  EXPECT_FALSE(r.ok);  // 1e-12 is seen: nothing was rounded to float32
  EXPECT_NEAR(r.max_abs_error, 1e-12, 1e-15);
  EXPECT_NE(r.message.find("2.0000000000010001"), std::string::npos) << r.message;  // full precision
  EXPECT_NE(r.message.find("compared in float64"), std::string::npos);
  // Integers never match a float reference.
  Tensor ints = Tensor::zeros(DType::kInt64, {2});
  EXPECT_FALSE(compare_tensors(ints, ref, o).ok);
}

TEST(TensorCompare, CosineAndNonFiniteValues) {
  CompareOptions o;
  CompareResult opposite = compare_tensors(floats({1.f, -2.f}), floats({-1.f, 2.f}), o);
  EXPECT_NEAR(opposite.cosine, -1.0, 1e-12);
  CompareResult zeros = compare_tensors(floats({0.f, 0.f}), floats({0.f, 1.f}), o);
  EXPECT_EQ(zeros.cosine, 0.0);
  CompareResult nan_vs_nan = compare_tensors(floats({NAN, INFINITY}), floats({NAN, INFINITY}), o);
  EXPECT_TRUE(nan_vs_nan.ok);
  CompareResult inf_vs_finite = compare_tensors(floats({INFINITY, 1.f}), floats({1.f, 1.f}), o);
  EXPECT_FALSE(inf_vs_finite.ok);
  EXPECT_TRUE(std::isinf(inf_vs_finite.max_abs_error));
  EXPECT_EQ(compare_tensors(floats({}), floats({}), o).worst_index, -1);
}

TEST(ReferenceFile, ReadsPolygraphyRunResults) {
  Tensor y = test::iota_tensor({2, 3}, 0.5f);
  std::string encoded = base64_encode(npy_bytes(y));
  EXPECT_EQ(base64_decode(encoded, "t"), npy_bytes(y));
  // Newer Polygraphy wraps each array in a LazyNumpyArray ("values"); older ones store it bare.
  std::string text = R"({"lst": [["onnxrt-runner", [{"outputs": {"y": {"values": {"array": ")" + encoded +
                     R"(", "polygraphy_class": "ndarray"}, "polygraphy_class": "LazyNumpyArray"}, "z": {"array": ")" +
                     encoded + R"("}}, "runtime": 0.1, "runner_name": "onnxrt-runner",
                     "polygraphy_class": "IterationResult"}]]], "polygraphy_class": "RunResults"})";
  auto arrays = parse_polygraphy_json(text, "run.json");
  ASSERT_EQ(arrays.size(), 2u);
  EXPECT_TRUE(compare_tensors(arrays["y"], y, 0, 0).ok);
  EXPECT_TRUE(compare_tensors(arrays["z"], y, 0, 0).ok);
  EXPECT_THROW(parse_polygraphy_json(text, "run.json", "trt-runner"), Error);
  EXPECT_THROW(parse_polygraphy_json("{\"lst\": 3}", "bad.json"), Error);
  EXPECT_THROW(parse_polygraphy_json("not json", "bad.json"), Error);
  EXPECT_THROW(base64_decode("ab$d", "t"), Error);
}
