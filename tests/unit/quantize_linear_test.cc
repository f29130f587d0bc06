// QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear: the optimised kernels against the
// reference on awkward sizes (0, 1, odd, around the 2^14 chunk and the threading threshold),
// per tensor and per axis, every quantized type; rounding ties, saturation, NaN and infinities;
// blocked scales by hand; and the errors for mistyped zero points and misfitting scales.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/onnx/quant/quantize.h"
#include "unit/quant_cases.h"

using namespace pointrt;
using namespace pointrt::test;
using namespace pointrt::quant;

namespace {

const int64_t kSizes[] = {0, 1, 7, 16383, 16385, 70001};

// x with ties (k + 0.5), values beyond every range, infinities and NaN mixed in.
Tensor awkward_floats(Shape s, uint32_t seed) {
  Tensor t = random_floats(s, -70000.f, 70000.f, seed);
  float* d = t.data_as<float>();
  const float specials[] = {0.5f,
                            1.5f,
                            -0.5f,
                            -2.5f,
                            2.5f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::nanf(""),
                            0.f,
                            -0.f,
                            127.5f,
                            255.5f};
  for (int64_t i = 0; i < t.numel(); i += 3) d[i] = specials[(i / 3) % 12] * (i % 2 ? 1.f : 0.37f);
  for (int64_t i = 1; i < t.numel(); i += 5) d[i] = static_cast<float>(i % 601) * 0.5f - 150.f;
  return t;
}

template <typename T>
Tensor zero_points(Shape s, uint32_t seed) {
  int64_t lo, hi;
  quantized_range(DTypeOf<T>::value, lo, hi);
  return random_ints<T>(s, static_cast<int>(std::max<int64_t>(lo, -1000)),
                        static_cast<int>(std::min<int64_t>(hi, 1000)), seed);
}

template <typename T>
void expect_quantize_matches(const Shape& x_shape, int64_t axis, bool per_axis, uint32_t seed) {
  Tensor x = awkward_floats(x_shape, seed);
  const int64_t ax = axis < 0 ? axis + static_cast<int64_t>(x_shape.size()) : axis;
  Shape ps = per_axis ? Shape{x_shape[ax]} : Shape{};
  Tensor scale = random_floats(ps, 0.05f, 3.f, seed + 1);
  Tensor zp = zero_points<T>(ps, seed + 2);
  QuantMapping m = quant_mapping(x_shape, ps, &ps, axis, 0, {"x", "s", "z"}, "test");
  Tensor fast = Tensor::allocate(DTypeOf<T>::value, x_shape), ref = Tensor::allocate(DTypeOf<T>::value, x_shape);
  quantize_linear(x, scale, &zp, m, fast);
  quantize_linear_ref(x, scale, &zp, m, ref);
  for (int64_t i = 0; i < x.numel(); ++i)
    ASSERT_EQ(fast.data_as<T>()[i], ref.data_as<T>()[i]) << "element " << i << " x " << x.data_as<float>()[i];
}

template <typename T>
void expect_dequantize_matches(const Shape& x_shape, int64_t axis, bool per_axis, uint32_t seed) {
  int64_t lo, hi;
  quantized_range(DTypeOf<T>::value, lo, hi);
  Tensor x = random_ints<T>(x_shape, static_cast<int>(lo), static_cast<int>(hi), seed);
  const int64_t ax = axis < 0 ? axis + static_cast<int64_t>(x_shape.size()) : axis;
  Shape ps = per_axis ? Shape{x_shape[ax]} : Shape{1};
  Tensor scale = random_floats(ps, 0.001f, 3.f, seed + 1);
  Tensor zp = zero_points<T>(ps, seed + 2);
  QuantMapping m = quant_mapping(x_shape, ps, &ps, axis, 0, {"x", "s", "z"}, "test");
  Tensor fast = Tensor::allocate(DType::kFloat32, x_shape), ref = Tensor::allocate(DType::kFloat32, x_shape);
  dequantize_linear(x, scale, &zp, m, fast);
  dequantize_linear_ref(x, scale, &zp, m, ref);
  for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(fast.data_as<float>()[i], ref.data_as<float>()[i]) << i;
}

}  // namespace

TEST(QuantizeLinear, OptimisedMatchesReferencePerTensor) {
  for (int64_t n : kSizes) {
    expect_quantize_matches<uint8_t>({n}, 1, false, 1);
    expect_quantize_matches<int8_t>({n}, 1, false, 2);
    expect_quantize_matches<uint16_t>({n}, 1, false, 3);
    expect_quantize_matches<int16_t>({n}, 1, false, 4);
  }
}

TEST(QuantizeLinear, OptimisedMatchesReferencePerAxis) {
  for (int64_t n : {1, 5, 17, 2049}) {
    expect_quantize_matches<uint8_t>({2, 3, n}, 1, true, 5);
    expect_quantize_matches<int8_t>({3, n, 2}, 0, true, 6);
    expect_quantize_matches<int16_t>({2, n, 3}, -2, true, 7);
    expect_quantize_matches<uint8_t>({n, 3}, -1, true, 8);  // inner size 1: the reference path
  }
  expect_quantize_matches<uint8_t>({0, 4, 3}, 1, true, 9);
}

TEST(QuantizeLinear, RoundsTiesToEvenAndSaturates) {
  Tensor x = tensor_of<float>({8}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 1000.f, -1000.f, std::nanf("")});
  Tensor s = scalar_of(1.f);
  QuantMapping m;
  Tensor y = Tensor::allocate(DType::kUInt8, {8}), z = scalar_int<uint8_t>(10);
  quantize_linear(x, s, &z, m, y);
  EXPECT_EQ(values_of<uint8_t>(y), (std::vector<uint8_t>{10, 12, 12, 10, 8, 255, 0, 0}));
  Tensor yi = Tensor::allocate(DType::kInt8, {8}), zi = scalar_int<int8_t>(0);
  quantize_linear(x, s, &zi, m, yi);
  EXPECT_EQ(values_of<int8_t>(yi), (std::vector<int8_t>{0, 2, 2, 0, -2, 127, -128, -128}));
}

TEST(DequantizeLinear, OptimisedMatchesReference) {
  for (int64_t n : kSizes) {
    expect_dequantize_matches<uint8_t>({n}, 1, false, 11);
    expect_dequantize_matches<int8_t>({n}, 1, false, 12);
    expect_dequantize_matches<uint16_t>({n}, 1, false, 13);
    expect_dequantize_matches<int16_t>({n}, 1, false, 14);
  }
  for (int64_t n : {1, 3, 33})
    for (int64_t axis : {0, 1, 2}) {
      expect_dequantize_matches<uint8_t>({3, n, 5}, axis, true, 15);
      expect_dequantize_matches<int8_t>({n, 2, 7}, axis, true, 16);
    }
}

TEST(DequantizeLinear, BlockedScalesByHand) {
  // x [2, 5] blocked by 2 along axis 1: blocks {0,1}, {2,3}, {4}.
  Tensor x = tensor_of<int8_t>({2, 5}, {1, 2, 3, 4, 5, -1, -2, -3, -4, -5});
  Tensor s = tensor_of<float>({2, 3}, {1, 10, 100, 2, 20, 200});
  Tensor z = tensor_of<int8_t>({2, 3}, {0, 1, 2, 0, -1, -2});
  QuantMapping m = quant_mapping({2, 5}, {2, 3}, &z.shape(), 1, 2, {"x", "s", "z"}, "test");
  Tensor y = Tensor::allocate(DType::kFloat32, {2, 5});
  dequantize_linear(x, s, &z, m, y);
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{1, 2, 20, 30, 300, -2, -4, -40, -60, -600}));
}

TEST(DynamicQuantizeLinear, OptimisedMatchesReference) {
  for (int64_t n : kSizes) {
    for (uint32_t seed : {21u, 22u}) {
      Tensor x = random_floats({n}, seed == 21 ? -3.f : 0.5f, 7.f, seed);
      Tensor y1 = Tensor::allocate(DType::kUInt8, {n}), y2 = Tensor::allocate(DType::kUInt8, {n});
      Tensor s1 = Tensor::allocate(DType::kFloat32, {}), s2 = Tensor::allocate(DType::kFloat32, {});
      Tensor z1 = Tensor::allocate(DType::kUInt8, {}), z2 = Tensor::allocate(DType::kUInt8, {});
      dynamic_quantize_linear(x, y1, s1, z1);
      dynamic_quantize_linear_ref(x, y2, s2, z2);
      ASSERT_EQ(s1.data_as<float>()[0], s2.data_as<float>()[0]);
      ASSERT_EQ(z1.data_as<uint8_t>()[0], z2.data_as<uint8_t>()[0]);
      ASSERT_EQ(values_of<uint8_t>(y1), values_of<uint8_t>(y2)) << n;
    }
  }
  // All zeros: scale 1 / 255, zero point 0.
  Tensor x = Tensor::zeros(DType::kFloat32, {4});
  auto out = run_mixed("DynamicQuantizeLinear", 11, {{"x", x}}, {}, 3);
  EXPECT_FLOAT_EQ(out[1].data_as<float>()[0], 1.f / 255.f);
  EXPECT_EQ(out[2].data_as<uint8_t>()[0], 0);
}

TEST(QuantizeLinear, NodeRunsPerAxisWithNegativeAxis) {
  Tensor x = tensor_of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = run_mixed(
      "QuantizeLinear", 13,
      {{"x", x}, {"s", tensor_of<float>({3}, {1, 2, 4}), true}, {"z", tensor_of<int8_t>({3}, {0, 1, -1}), true}},
      [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "axis", -1); })[0];
  EXPECT_EQ(y.dtype(), DType::kInt8);
  EXPECT_EQ(values_of<int8_t>(y), (std::vector<int8_t>{1, 2, 0, 4, 3, 1}));  // 2.5 -> 2, 1.5 -> 2
}

// ONNX Runtime's quantizer writes bias parameters as scale [1] and zero point [] (ONNX Runtime accepts it).
TEST(DequantizeLinear, ScaleOfOneElementWithScalarZeroPointIsPerTensor) {
  auto y = run_mixed("DequantizeLinear", 13,
                     {{"x", tensor_of<int8_t>({3}, {-4, 0, 7})},
                      {"s", tensor_of<float>({1}, {0.5f}), true},
                      {"z", scalar_int<int8_t>(1), true}})[0];
  EXPECT_EQ(values_of<float>(y), (std::vector<float>{-2.5f, -0.5f, 3.f}));
}

TEST(QuantizeLinear, ErrorsNameTheNodeAndTheValue) {
  Tensor x = random_floats({2, 3}, -1, 1, 1);
  // A float zero point.
  std::string e = error_text([&] {
    run_mixed("QuantizeLinear", 13, {{"x", x}, {"s", scalar_of(1.f)}, {"zp", scalar_of(0.f)}});
  });
  EXPECT_NE(e.find("node 'node0' (QuantizeLinear)"), std::string::npos) << e;
  EXPECT_NE(e.find("zero point 'zp' has element type float"), std::string::npos) << e;
  // A per-axis scale that does not fit the axis (constant: reported when the session is made).
  e = error_text([&] {
    run_mixed("QuantizeLinear", 13, {{"x", x}, {"s", tensor_of<float>({2}, {1, 1}), true}, {"", Tensor()}});
  });
  EXPECT_NE(e.find("scale 's' has 2 elements but x 'x' [2, 3] has 3 along axis 1"), std::string::npos) << e;
  // Zero point and scale of different shapes.
  e = error_text([&] {
    run_mixed("QuantizeLinear", 13,
              {{"x", x}, {"s", tensor_of<float>({3}, {1, 1, 1})}, {"zp", tensor_of<uint8_t>({1}, {0})}});
  });
  EXPECT_NE(e.find("zero point 'zp' has shape [1] but scale 's' has shape [3]"), std::string::npos) << e;
}

TEST(DequantizeLinear, ErrorsNameTheNodeAndTheValue) {
  Tensor x = random_ints<uint8_t>({4}, 0, 255, 3);
  std::string e = error_text([&] {
    run_mixed("DequantizeLinear", 13, {{"x", x}, {"s", scalar_of(0.1f)}, {"x_zp", scalar_int<int8_t>(3)}});
  });
  EXPECT_NE(e.find("node 'node0' (DequantizeLinear): zero point 'x_zp' has element type int8, but 'x' is uint8"),
            std::string::npos)
      << e;
  // int32 data needs a zero point of 0.
  e = error_text([&] {
    run_mixed("DequantizeLinear", 13,
              {{"x", tensor_of<int32_t>({2}, {1, 2})}, {"s", scalar_of(0.1f)}, {"zp", scalar_int<int32_t>(5)}});
  });
  EXPECT_NE(e.find("zero point 'zp' of int32 input 'x' must be 0, got 5"), std::string::npos) << e;
  // Blocked scales of the wrong shape.
  e = error_text([&] {
    run_mixed("DequantizeLinear", 21,
              {{"x", random_ints<int8_t>({2, 5}, -5, 5, 1)}, {"s", random_floats({2, 2}, 1, 2, 1)}},
              [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "block_size", 2); });
  });
  EXPECT_NE(e.find("blocks of 2 along axis 1 of x 'x' [2, 5] need [2, 3]"), std::string::npos) << e;
}
