// The float8 codecs: every code decodes and re-encodes to itself (NaN to the format's NaN),
// decoding against the bit-field definition, encoding against a brute-force nearest-even search,
// the formats' largest values, round-to-nearest-even at midpoints (subnormal and normal),
// overflow with and without saturation, FNUZ's single zero; Cast through a session, float8
// initializers (raw and int32_data) and the comparison of float8 outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/float8.h"
#include "graph/tensor_proto.h"
#include "io/tensor_compare.h"
#include "onnx/onnx_pb.h"
#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {
const DType kFormats[] = {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ};
}

TEST(Float8, EveryCodeRoundTrips) {
  for (DType t : kFormats)
    for (int c = 0; c < 256; ++c) {
      const float v = float8_to_float(static_cast<uint8_t>(c), t);
      const uint8_t back = float_to_float8(v, t, false);
      if (std::isnan(v))
        EXPECT_TRUE(std::isnan(float8_to_float(back, t))) << dtype_name(t) << " " << c;
      else
        EXPECT_EQ(back, c) << dtype_name(t) << " code " << c << " value " << v;
    }
}

namespace {

struct Bits {
  int exp_bits, bias;
  bool fnuz;  // no infinities, no -0, NaN is 0x80
};
Bits bits_of(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN: return {4, 7, false};
    case DType::kFloat8E4M3FNUZ: return {4, 8, true};
    case DType::kFloat8E5M2: return {5, 15, false};
    default: return {5, 16, true};
  }
}

// The definition: sign, exponent field, mantissa field; subnormal when the exponent field is 0.
double decode_by_definition(int c, DType t) {
  const Bits b = bits_of(t);
  const int man_bits = 7 - b.exp_bits, e = (c & 0x7f) >> man_bits, m = c & ((1 << man_bits) - 1);
  const double sign = (c & 0x80) ? -1 : 1;
  if (b.fnuz && c == 0x80) return NAN;
  if (t == DType::kFloat8E4M3FN && (c & 0x7f) == 0x7f) return NAN;
  if (t == DType::kFloat8E5M2 && e == 31) return m == 0 ? sign * INFINITY : NAN;
  const double frac = static_cast<double>(m) / (1 << man_bits);
  return sign * (e == 0 ? std::ldexp(frac, 1 - b.bias) : std::ldexp(1 + frac, e - b.bias));
}

// The nearest finite code to v (|v| within the largest finite value), ties to the even code.
int nearest_code(float v, DType t) {
  int best = -1;
  double best_err = INFINITY;
  for (int c = 0; c < 256; ++c) {
    const double d = decode_by_definition(c, t);
    if (!std::isfinite(d) || (d == 0 && (c & 0x80))) continue;  // +0 only, as FNUZ has it
    if (d != 0 && std::signbit(d) != std::signbit(v)) continue;
    const double err = std::fabs(d - v);
    if (err < best_err || (err == best_err && (c & 1) == 0)) best = c, best_err = err;
  }
  return best;
}

}  // namespace

TEST(Float8, DecodeMatchesTheBitFieldDefinition) {
  for (DType t : kFormats)
    for (int c = 0; c < 256; ++c) {
      const double want = decode_by_definition(c, t);
      const float got = float8_to_float(static_cast<uint8_t>(c), t);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << dtype_name(t) << " " << c;
      else
        EXPECT_EQ(got, want) << dtype_name(t) << " code " << c;
    }
}

TEST(Float8, EncodeIsTheNearestEvenCode) {
  std::mt19937 rng(8);
  for (DType t : kFormats) {
    float max = 0;
    for (int c = 0; c < 128; ++c)
      if (std::isfinite(float8_to_float(static_cast<uint8_t>(c), t))) max = std::max(max, float8_to_float(c, t));
    std::uniform_real_distribution<float> log_mag(-22.f, std::log2(max));
    for (int i = 0; i < 3000; ++i) {
      float v = std::exp2(log_mag(rng)) * (i % 2 ? -1.f : 1.f);
      if (i % 5 == 0) {  // exact midpoints between neighbours
        const int c = static_cast<int>(rng() % 127);
        v = (float8_to_float(static_cast<uint8_t>(c), t) + float8_to_float(static_cast<uint8_t>(c + 1), t)) / 2;
        if (!std::isfinite(v)) continue;
      }
      const uint8_t got = float_to_float8(v, t, true);
      const int want = nearest_code(v, t);
      // A negative value that rounds to zero is -0 where the format has one.
      if (want == 0 && std::signbit(v) && !bits_of(t).fnuz)
        EXPECT_EQ(got, 0x80) << dtype_name(t) << " " << v;
      else
        EXPECT_EQ(got, want) << dtype_name(t) << " " << v;
    }
  }
}

TEST(Float8, LimitsRoundingAndOverflow) {
  EXPECT_EQ(float8_to_float(0x7e, DType::kFloat8E4M3FN), 448.f);
  EXPECT_EQ(float8_to_float(0x7f, DType::kFloat8E4M3FNUZ), 240.f);
  EXPECT_EQ(float8_to_float(0x7b, DType::kFloat8E5M2), 57344.f);
  EXPECT_TRUE(std::isinf(float8_to_float(0x7c, DType::kFloat8E5M2)));
  EXPECT_EQ(float8_to_float(0x01, DType::kFloat8E4M3FN), std::ldexp(1.f, -9));  // smallest subnormal
  // 1.0625 lies halfway between 1.0 (0x38, even) and 1.125 (0x39): ties go to even.
  EXPECT_EQ(float_to_float8(1.0625f, DType::kFloat8E4M3FN, true), 0x38);
  EXPECT_EQ(float_to_float8(1.1875f, DType::kFloat8E4M3FN, true), 0x3a);               // between 0x39 and 0x3a: even
  EXPECT_EQ(float_to_float8(std::ldexp(1.5f, -9), DType::kFloat8E4M3FN, true), 0x02);  // subnormal tie -> even
  // Overflow: E4M3FN saturates to 448 or becomes NaN; E5M2 to 57344 or inf.
  EXPECT_EQ(float_to_float8(1000.f, DType::kFloat8E4M3FN, true), 0x7e);
  EXPECT_EQ(float_to_float8(-1000.f, DType::kFloat8E4M3FN, false), 0xff);
  EXPECT_EQ(float_to_float8(460.f, DType::kFloat8E4M3FN, false), 0x7e);  // rounds down to the max
  EXPECT_EQ(float_to_float8(INFINITY, DType::kFloat8E5M2, true), 0x7b);
  EXPECT_EQ(float_to_float8(INFINITY, DType::kFloat8E5M2, false), 0x7c);
  EXPECT_EQ(float_to_float8(61440.f, DType::kFloat8E5M2, false), 0x7c);  // the tie above max is even: inf
  EXPECT_EQ(float_to_float8(INFINITY, DType::kFloat8E4M3FNUZ, false), 0x80);
  EXPECT_EQ(float_to_float8(-0.f, DType::kFloat8E5M2FNUZ, false), 0x00);
  EXPECT_EQ(float_to_float8(-0.f, DType::kFloat8E5M2, false), 0x80);
  EXPECT_EQ(float_to_float8(NAN, DType::kFloat8E4M3FN, true), 0x7f);
}

TEST(Float8, CastThroughASession) {
  NodeCase c{"Cast", 19, "", {{"x", tensor_of<float>({4}, {0.5f, -3.1f, 1e6f, NAN})}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "to", static_cast<int>(DType::kFloat8E4M3FN));
    ModelBuilder::attr_int(n, "saturate", 0);
  };
  const Tensor y = run_node(c)[0];
  ASSERT_EQ(y.dtype(), DType::kFloat8E4M3FN);
  NodeCase back{"Cast", 19, "", {{"f8", y}}};
  back.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "to", 1); };
  const auto v = values_of<float>(run_node(back)[0]);
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_EQ(v[1], -3.f);          // 3.1 -> 3.0 in E4M3
  EXPECT_TRUE(std::isnan(v[2]));  // no saturation: overflow is NaN
  EXPECT_TRUE(std::isnan(v[3]));
}

TEST(Float8, InitializersRawAndTyped) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(static_cast<int>(DType::kFloat8E5M2));
  p.add_dims(3);
  for (int c : {0x3c, 0xc0, 0x7c}) p.add_int32_data(c);  // 1, -2, inf
  Tensor t = tensor_from_proto(p, ExternalDataRoots(), "test");
  ASSERT_EQ(t.dtype(), DType::kFloat8E5M2);
  EXPECT_EQ(values_of<uint8_t>(t), (std::vector<uint8_t>{0x3c, 0xc0, 0x7c}));
  p.clear_int32_data();
  p.set_raw_data(std::string("\x38\x40", 2));
  EXPECT_NE(
      error_text([&] { tensor_from_proto(p, ExternalDataRoots(), "test"); }).find("has 2 bytes of data, expected 3"),
      std::string::npos);
  for (int code = 17; code <= 22; ++code) EXPECT_EQ(static_cast<int>(dtype_from_onnx_code(code, "x")), code);
}

TEST(Float8, CompareDecodesAndIsExact) {
  Tensor a = Tensor::allocate(DType::kFloat8E5M2, {3}), b = Tensor::allocate(DType::kFloat8E5M2, {3});
  const uint8_t av[] = {0x3c, 0x7d, 0x7c}, bv[] = {0x3c, 0x7f, 0x7c};  // 1, NaN, inf vs 1, another NaN, inf
  std::copy(av, av + 3, a.data_as<uint8_t>());
  std::copy(bv, bv + 3, b.data_as<uint8_t>());
  EXPECT_TRUE(compare_tensors(a, b, 1e-7, 1e-3).ok);
  b.data_as<uint8_t>()[0] = 0x3d;  // 1.25: one code apart
  const CompareResult r = compare_tensors(a, b, 1, 1);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.worst_ref, 1.25);
}

TEST(Float8, CastBetweenFormatsAndErrors) {
  // E5M2 57344 -> E4M3FN: saturates to 448, or NaN without saturate.
  Tensor x = Tensor::allocate(DType::kFloat8E5M2, {2});
  x.data_as<uint8_t>()[0] = 0x7b;  // 57344
  x.data_as<uint8_t>()[1] = 0x3c;  // 1
  for (int sat : {1, 0}) {
    NodeCase c{"Cast", 19, "", {{"x", x}}};
    c.attrs = [sat](onnx::NodeProto& n) {
      ModelBuilder::attr_int(n, "to", static_cast<int>(DType::kFloat8E4M3FN));
      ModelBuilder::attr_int(n, "saturate", sat);
    };
    const Tensor y = run_node(c)[0];
    EXPECT_EQ(y.data_as<uint8_t>()[0], sat ? 0x7e : 0x7f);
    EXPECT_EQ(y.data_as<uint8_t>()[1], 0x38);
  }
  NodeCase s{"Cast", 19, "", {{"s", Tensor::allocate(DType::kString, {1})}}};
  s.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "to", static_cast<int>(DType::kFloat8E4M3FN)); };
  EXPECT_NE(node_error(s).find("node 'node0' (Cast): Cast from string to float8e4m3fn is not supported"),
            std::string::npos)
      << node_error(s);
}
