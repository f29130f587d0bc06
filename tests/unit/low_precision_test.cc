// float16/bfloat16 on float32-only kernels (runtime/low_precision.h): the pass's rewrite, results
// against the float32 model on the same (float16-representable) values, the pointrt operators
// with float16 features and uint32 indices, and the feed type errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "core/half.h"
#include "graph/ir.h"
#include "graph/onnx_import.h"
#include "ops/kernel.h"
#include "pointrt/pointrt.h"
#include "runtime/low_precision.h"
#include "support/expect_error.h"
#include "support/model_builder.h"

namespace pointrt {
namespace {

using test::expect_error;
using test::ModelBuilder;

// Random float32 values that float16 and bfloat16 both represent exactly (8 significant bits).
Tensor half_exact(const Shape& s, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  Tensor t = Tensor::allocate(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data_as<float>()[i] = half_to_float(float_to_half(bfloat16_to_float(float_to_bfloat16(u(rng)))));
  return t;
}

Tensor as_type(const Tensor& f32, DType t) {
  if (t == DType::kFloat32) return f32;
  Tensor h = Tensor::allocate(t, f32.shape());
  float32_to_half(f32, h);
  return h;
}

// x [1, 2, 6, 7] -> Conv(3x3, pad 1) -> BatchNormalization -> Relu -> Conv(1x1) -> y, all of type t.
Model conv_chain(DType t) {
  ModelBuilder b;
  b.input("x", t, {int64_t{1}, int64_t{2}, int64_t{6}, int64_t{7}});
  b.initializer("w1", as_type(half_exact({4, 2, 3, 3}, 1), t));
  b.initializer("b1", as_type(half_exact({4}, 2), t));
  b.initializer("scale", as_type(half_exact({4}, 3, 0.5f, 1.5f), t));
  b.initializer("shift", as_type(half_exact({4}, 4), t));
  b.initializer("mean", as_type(half_exact({4}, 5), t));
  b.initializer("var", as_type(half_exact({4}, 6, 0.5f, 2.f), t));
  b.initializer("w2", as_type(half_exact({3, 4, 1, 1}, 7), t));
  ModelBuilder::attr_ints(b.node("Conv", {"x", "w1", "b1"}, {"c1"}), "pads", {1, 1, 1, 1});
  b.node("BatchNormalization", {"c1", "scale", "shift", "mean", "var"}, {"bn"});
  b.node("Relu", {"bn"}, {"r"});
  b.node("Conv", {"r", "w2"}, {"y"});
  b.output("y", t);
  return b.load("conv_chain.onnx");
}

TEST(LowPrecision, ConvChainMatchesFloat32WithinHalfPrecision) {
  const Tensor x = half_exact({1, 2, 6, 7}, 11);
  const Tensor expect = Session(conv_chain(DType::kFloat32)).run({{"x", x}})[0];
  for (DType t : {DType::kFloat16, DType::kBFloat16})
    for (bool optimize : {true, false}) {
      SessionOptions o;
      o.optimize = optimize;
      Session s(conv_chain(t), o);
      const Tensor y = s.run({{"x", as_type(x, t)}})[0];
      ASSERT_EQ(y.dtype(), t);
      ASSERT_EQ(y.shape(), expect.shape());
      const Tensor got = to_float32(y);
      // Rounded at most twice (Relu runs natively in float16, the output is rounded): 2 ulps.
      const float ulp = t == DType::kFloat16 ? 1.f / 1024 : 1.f / 128;
      for (int64_t i = 0; i < got.numel(); ++i) {
        const float e = expect.data_as<float>()[i];
        ASSERT_NEAR(got.data_as<float>()[i], e, 2 * ulp * std::max(1.f, std::fabs(e)))
            << dtype_name(t) << " optimize " << optimize << " at " << i;
      }
    }
}

TEST(LowPrecision, SingleConvIsTheRoundedFloat32Result) {
  auto model = [](DType t) {
    ModelBuilder b;
    b.input("x", t, {int64_t{2}, int64_t{3}, int64_t{5}, int64_t{5}});
    b.initializer("w", as_type(half_exact({4, 3, 3, 3}, 21), t));
    b.node("Conv", {"x", "w"}, {"y"});
    b.output("y", t);
    return b.load();
  };
  const Tensor x = half_exact({2, 3, 5, 5}, 22);
  const Tensor y32 = Session(model(DType::kFloat32)).run({{"x", x}})[0];
  const Tensor y16 = Session(model(DType::kFloat16)).run({{"x", as_type(x, DType::kFloat16)}})[0];
  const Tensor expect = as_type(y32, DType::kFloat16);
  ASSERT_EQ(y16.dtype(), DType::kFloat16);
  ASSERT_EQ(y16.shape(), expect.shape());
  EXPECT_EQ(0, std::memcmp(y16.data(), expect.data(), expect.nbytes()));
}

TEST(LowPrecision, PassKeepsFloat32BetweenFloat32Kernels) {
  Graph g = conv_chain(DType::kFloat16).impl()->graph;
  ASSERT_TRUE(compute_low_precision_in_float32(g, op_table()));
  int widening = 0, narrowing = 0;
  for (const Node& n : g.nodes) {
    if (n.op_type != "Cast") continue;
    (n.attrs.get_int("to") == static_cast<int64_t>(DType::kFloat32) ? widening : narrowing)++;
  }
  // x and the seven initializers widen; Conv1 -> BatchNormalization stays float32 (no pair), the
  // float16 Relu reads a rounded value and the second Conv widens it again; y is rounded.
  EXPECT_EQ(widening, 9);
  EXPECT_EQ(narrowing, 2);
  const Node* bn = nullptr;
  const Node* conv1 = nullptr;
  for (const Node& n : g.nodes) {
    if (n.op_type == "BatchNormalization") bn = &n;
    if (n.op_type == "Conv" && !conv1) conv1 = &n;
  }
  ASSERT_TRUE(bn && conv1);
  EXPECT_EQ(bn->inputs[0], conv1->outputs[0]);
  EXPECT_EQ(g.values[conv1->outputs[0]].dtype, DType::kFloat32);
  // Running the pass again changes nothing: every float32 kernel now reads float32.
  EXPECT_FALSE(compute_low_precision_in_float32(g, op_table()));
}

TEST(LowPrecision, Bfloat16OnAFloat16Kernel) {
  // Abs has a float16 kernel but no bfloat16 one: bfloat16 runs through float32.
  ModelBuilder b;
  b.input("x", DType::kBFloat16, {int64_t{7}});
  b.node("Abs", {"x"}, {"y"});
  b.output("y", DType::kBFloat16);
  const Tensor x = as_type(half_exact({7}, 31), DType::kBFloat16);
  const Tensor y = Session(b.load()).run({{"x", x}})[0];
  ASSERT_EQ(y.dtype(), DType::kBFloat16);
  for (int64_t i = 0; i < 7; ++i)
    EXPECT_EQ(y.data_as<uint16_t>()[i], static_cast<uint16_t>(x.data_as<uint16_t>()[i] & 0x7fff));
}

Model gather_points_model(DType features, DType index) {
  ModelBuilder b;
  b.add_opset("pointrt", 1);
  b.input("features", features, {int64_t{2}, int64_t{3}, int64_t{5}});
  b.input("idx", index, {int64_t{2}, int64_t{4}});
  b.node("GatherPoints", {"features", "idx"}, {"out"}, "pointrt");
  b.output("out", features);
  return b.load("gather.onnx");
}

Tensor indices(DType t, const std::vector<int64_t>& v, const Shape& s) {
  Tensor r = Tensor::allocate(t, s);
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DType::kUInt32) r.data_as<uint32_t>()[i] = static_cast<uint32_t>(v[i]);
    if (t == DType::kInt32) r.data_as<int32_t>()[i] = static_cast<int32_t>(v[i]);
    if (t == DType::kInt64) r.data_as<int64_t>()[i] = v[i];
  }
  return r;
}

TEST(LowPrecision, PointrtOperatorTakesFloat16FeaturesAndUint32Indices) {
  const Tensor f = half_exact({2, 3, 5}, 41);
  const std::vector<int64_t> idx = {4, 0, 2, 2, 1, 3, 0, 4};
  const Tensor expect = Session(gather_points_model(DType::kFloat32, DType::kInt32))
                            .run({{"features", f}, {"idx", indices(DType::kInt32, idx, {2, 4})}})[0];
  for (DType it : {DType::kInt32, DType::kInt64, DType::kUInt32}) {
    Session s(gather_points_model(DType::kFloat16, it));
    const Tensor y = s.run({{"features", as_type(f, DType::kFloat16)}, {"idx", indices(it, idx, {2, 4})}})[0];
    ASSERT_EQ(y.dtype(), DType::kFloat16) << dtype_name(it);
    const Tensor got = to_float32(y);
    ASSERT_EQ(got.shape(), expect.shape());
    EXPECT_EQ(0, std::memcmp(got.data(), expect.data(), expect.nbytes())) << dtype_name(it);
  }
  // A uint32 index above INT32_MAX is reported as it is, not wrapped to a negative number.
  Session s(gather_points_model(DType::kFloat32, DType::kUInt32));
  const std::vector<int64_t> bad = {0, 1, 4000000000LL, 2, 0, 1, 2, 3};
  expect_error(
      [&] {
        s.run({{"features", f}, {"idx", indices(DType::kUInt32, bad, {2, 4})}});
      },
      {"GatherPoints", "index 4000000000 at [0, 2]", "out of range [0, 5)"});
}

TEST(LowPrecision, FeedOfTheOtherFloatTypeIsAnError) {
  Session s16(gather_points_model(DType::kFloat16, DType::kInt32));
  const Tensor f = half_exact({2, 3, 5}, 51);
  const Tensor idx = indices(DType::kInt32, {0, 1, 2, 3, 4, 3, 2, 1}, {2, 4});
  expect_error(
      [&] {
        s16.run({{"features", f}, {"idx", idx}});
      },
      {"gather.onnx", "input 'features' expects element type float16, got float32"});
  Session s32(gather_points_model(DType::kFloat32, DType::kInt32));
  expect_error(
      [&] {
        s32.run({{"features", as_type(f, DType::kFloat16)}, {"idx", idx}});
      },
      {"gather.onnx", "input 'features' expects element type float32, got float16"});
}

TEST(LowPrecision, OperatorListSaysWhatRunsThroughFloat32) {
  bool conv = false;
  for (const OpSupport& o : supported_ops())
    if (o.domain.empty() && o.op_type == "Conv") {
      conv = true;
      EXPECT_NE(std::find(o.types.begin(), o.types.end(), DType::kFloat16), o.types.end());
      EXPECT_NE(o.note.find("float16/bfloat16 computed in float32"), std::string::npos) << o.note;
    }
  EXPECT_TRUE(conv);
}

}  // namespace
}  // namespace pointrt
