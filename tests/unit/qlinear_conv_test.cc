// ConvInteger / QLinearConv: the oneDNN int8 path (constant weights and scales) against the
// reference kernel (the same values fed at run time) on awkward shapes: 1D/2D/3D, odd channel
// counts, groups, strides, dilations, padding, uint8 weights with a zero point, per-channel
// scales and zero points, int8 and uint8 activations; and the errors of mistyped inputs.
#include <gtest/gtest.h>

#include "graph/onnx_import.h"
#include "ops/onnx/quant/qconv.h"
#include "unit/quant_cases.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group = 1;
  DType x_type = DType::kUInt8, w_type = DType::kInt8, y_type = DType::kUInt8;
  bool per_channel = false;
};

std::function<void(onnx::NodeProto&)> conv_attrs(const ConvCase& c) {
  return [c](onnx::NodeProto& n) {
    if (!c.strides.empty()) ModelBuilder::attr_ints(n, "strides", c.strides);
    if (!c.pads.empty()) ModelBuilder::attr_ints(n, "pads", c.pads);
    if (!c.dilations.empty()) ModelBuilder::attr_ints(n, "dilations", c.dilations);
    if (c.group != 1) ModelBuilder::attr_int(n, "group", c.group);
  };
}

Tensor ints_of(DType t, Shape s, uint32_t seed) {
  return t == DType::kUInt8 ? random_ints<uint8_t>(s, 0, 255, seed) : random_ints<int8_t>(s, -128, 127, seed);
}
Tensor zero_point_of(DType t, Shape s, uint32_t seed) {
  // uint8 weights centred on 128 so that w - zp fits int8 (oneDNN's path).
  return t == DType::kUInt8 ? random_ints<uint8_t>(s, 120, 136, seed) : random_ints<int8_t>(s, -5, 5, seed);
}

std::vector<MixedInput> qlinear_inputs(const ConvCase& c, uint32_t seed) {
  const int64_t m = c.w[0];
  Shape ch = c.per_channel ? Shape{m} : Shape{};
  Tensor w = c.w_type == DType::kUInt8 ? random_ints<uint8_t>(c.w, 0, 255, seed + 1)
                                       : random_ints<int8_t>(c.w, -120, 120, seed + 1);
  if (c.w_type == DType::kUInt8)  // keep w - zp within int8 for the packed path
    for (int64_t i = 0; i < w.numel(); ++i)
      w.data_as<uint8_t>()[i] = static_cast<uint8_t>(std::clamp<int>(w.data_as<uint8_t>()[i], 9, 247));
  return {{"x", ints_of(c.x_type, c.x, seed)},
          {"x_scale", scalar_of(0.02f), true},
          {"x_zp", zero_point_of(c.x_type, {}, seed + 2), false},
          {"w", w, true},
          {"w_scale", random_floats(ch, 0.001f, 0.02f, seed + 3), true},
          {"w_zp", zero_point_of(c.w_type, ch, seed + 4), true},
          {"y_scale", scalar_of(0.35f), true},
          {"y_zp", zero_point_of(c.y_type, {}, seed + 5), false},
          {"B", random_ints<int32_t>({m}, -3000, 3000, seed + 6), true}};
}

const std::vector<ConvCase>& cases() {
  static const std::vector<ConvCase> c = {
      {{1, 3, 9, 9}, {16, 3, 3, 3}, {}, {1, 1, 1, 1}, {}},
      {{2, 17, 7, 5}, {15, 17, 3, 3}, {2, 2}, {1, 0, 2, 1}, {}, 1, DType::kInt8, DType::kInt8, DType::kInt8, true},
      {{1, 32, 6, 6}, {32, 16, 3, 3}, {}, {2, 2, 2, 2}, {2, 2}, 2, DType::kUInt8, DType::kUInt8, DType::kUInt8, true},
      {{1, 64, 5, 5}, {33, 64, 1, 1}, {}, {}, {}, 1, DType::kUInt8, DType::kInt8, DType::kInt8},
      {{1, 5, 31}, {7, 5, 1}, {}, {}, {}, 1, DType::kInt8, DType::kUInt8, DType::kUInt8, true},
      {{1, 4, 3, 5, 4}, {6, 4, 2, 3, 2}, {1, 2, 1}, {0, 1, 0, 1, 1, 1}, {}},
      {{1, 1, 1, 1}, {1, 1, 1, 1}, {}, {}, {}},
  };
  return c;
}

}  // namespace

TEST(QLinearConv, OneDnnMatchesReference) {
  uint32_t seed = 100;
  for (const ConvCase& c : cases()) {
    auto in = qlinear_inputs(c, seed += 10);
    std::map<std::string, Tensor> feeds;
    Model m = mixed_model("QLinearConv", 10, in, conv_attrs(c), 1, feeds);
    EXPECT_NE(quant::qconv_impl_name(*only_node_kernel(m), c.x), "reference") << shape_to_string(c.x);
    Tensor packed = run_mixed("QLinearConv", 10, in, conv_attrs(c))[0];
    Tensor ref = run_mixed("QLinearConv", 10, all_fed(in), conv_attrs(c))[0];
    ASSERT_EQ(packed.shape(), ref.shape());
    ASSERT_EQ(packed.dtype(), c.y_type);
    int differ = 0;
    for (int64_t i = 0; i < ref.numel(); ++i)
      differ += static_cast<const uint8_t*>(packed.data())[i] != static_cast<const uint8_t*>(ref.data())[i];
    EXPECT_EQ(differ, 0) << "x " << shape_to_string(c.x) << " w " << shape_to_string(c.w);
  }
}

TEST(ConvInteger, OneDnnMatchesReference) {
  uint32_t seed = 500;
  for (const ConvCase& c : cases()) {
    auto q = qlinear_inputs(c, seed += 10);
    // ConvInteger: x, w, x_zero_point, w_zero_point.
    std::vector<MixedInput> in = {q[0], q[3], q[2], q[5]};
    Tensor packed = run_mixed("ConvInteger", 10, in, conv_attrs(c))[0];
    Tensor ref = run_mixed("ConvInteger", 10, all_fed(in), conv_attrs(c))[0];
    ASSERT_EQ(packed.dtype(), DType::kInt32);
    EXPECT_EQ(values_of<int32_t>(packed), values_of<int32_t>(ref)) << shape_to_string(c.x);
  }
}

TEST(ConvInteger, HandComputed) {
  // x [1, 1, 2, 2] - 1, w [1, 1, 2, 2] - 2 (uint8), one output: sum (x - 1)(w - 2).
  auto y = run_mixed("ConvInteger", 10,
                     {{"x", tensor_of<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4})},
                      {"w", tensor_of<uint8_t>({1, 1, 2, 2}, {3, 2, 1, 5}), true},
                      {"xz", scalar_int<uint8_t>(1)},
                      {"wz", scalar_int<uint8_t>(2), true}})[0];
  EXPECT_EQ(values_of<int32_t>(y), (std::vector<int32_t>{0 * 1 + 1 * 0 + 2 * -1 + 3 * 3}));
}

TEST(QLinearConv, WeightsThatDoNotFitInt8RunTheReference) {
  ConvCase c{{1, 2, 4, 4}, {3, 2, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, DType::kUInt8, DType::kUInt8, DType::kUInt8};
  auto in = qlinear_inputs(c, 7);
  in[3].value.data_as<uint8_t>()[0] = 255;
  in[5].value = scalar_int<uint8_t>(0);  // 255 - 0 does not fit int8
  std::map<std::string, Tensor> feeds;
  Model m = mixed_model("QLinearConv", 10, in, conv_attrs(c), 1, feeds);
  EXPECT_EQ(quant::qconv_impl_name(*only_node_kernel(m), c.x), "reference");
  EXPECT_EQ(values_of<uint8_t>(run_mixed("QLinearConv", 10, in, conv_attrs(c))[0]),
            values_of<uint8_t>(run_mixed("QLinearConv", 10, all_fed(in), conv_attrs(c))[0]));
}

TEST(QLinearConv, ErrorsNameTheNodeAndTheValue) {
  ConvCase c{{1, 2, 4, 4}, {3, 2, 3, 3}, {}, {}, {}};
  auto in = qlinear_inputs(c, 9);
  in[2].value = scalar_int<int8_t>(3);  // x is uint8
  std::string e = error_text([&] { run_mixed("QLinearConv", 10, in, conv_attrs(c)); });
  EXPECT_NE(e.find("node 'node0' (QLinearConv): zero point 'x_zp' has element type int8, but 'x' is uint8"),
            std::string::npos)
      << e;
  in = qlinear_inputs(c, 9);
  in[4].value = random_floats({2}, 0.1f, 0.2f, 1);  // two scales for three output channels
  e = error_text([&] { run_mixed("QLinearConv", 10, in, conv_attrs(c)); });
  EXPECT_NE(e.find("scale 'w_scale' has shape [2]; expected a scalar or [3]"), std::string::npos) << e;
  in = qlinear_inputs(c, 9);
  in[8].value = random_floats({3}, 0.1f, 0.2f, 1);  // float bias
  e = error_text([&] { run_mixed("QLinearConv", 10, in, conv_attrs(c)); });
  EXPECT_NE(e.find("bias 'B' has element type float32, expected int32"), std::string::npos) << e;
}

// A QDQ residual block, DQ -> Conv -> Q -> DQ, + DQ(r) -> Add -> Q: the QDQ pass makes it one
// QConv with a sum post-op. The convolution's own quantization is kept in the fused kernel, so the
// result rounds twice as ONNX defines it (and ONNX Runtime computes it): equal, element for
// element, to the unfused graph on the reference kernels.
TEST(QConv, FusedResidualRoundsLikeTheUnfusedGraph) {
  for (DType act : {DType::kUInt8, DType::kInt8}) {
    ModelBuilder b(13);
    const Shape xs_shape = {1, 5, 7, 6};
    b.input("x", act, {int64_t{1}, int64_t{5}, int64_t{7}, int64_t{6}});
    b.input("r", act, {int64_t{1}, int64_t{6}, int64_t{7}, int64_t{6}});
    auto zp = [&](int v) {
      return act == DType::kUInt8 ? scalar_int<uint8_t>(static_cast<uint8_t>(128 + v))
                                  : scalar_int<int8_t>(static_cast<int8_t>(v));
    };
    b.initializer("xs", scalar_of(0.031f));
    b.initializer("xz", zp(3));
    b.initializer("w", random_ints<int8_t>({6, 5, 3, 3}, -100, 100, 7));
    b.initializer("ws", random_floats({6}, 0.002f, 0.01f, 8));
    b.initializer("wz", Tensor::zeros(DType::kInt8, {6}));
    b.initializer("ms", scalar_of(0.047f));
    b.initializer("mz", zp(-2));
    b.initializer("rs", scalar_of(0.029f));
    b.initializer("rz", zp(1));
    b.initializer("ys", scalar_of(0.061f));
    b.initializer("yz", zp(-4));
    b.node("DequantizeLinear", {"x", "xs", "xz"}, {"dx"});
    auto& dw = b.node("DequantizeLinear", {"w", "ws", "wz"}, {"dw"});
    ModelBuilder::attr_int(dw, "axis", 0);
    ModelBuilder::attr_ints(b.node("Conv", {"dx", "dw"}, {"c"}), "pads", {1, 1, 1, 1});
    b.node("QuantizeLinear", {"c", "ms", "mz"}, {"cq"});
    b.node("DequantizeLinear", {"cq", "ms", "mz"}, {"cd"});
    b.node("DequantizeLinear", {"r", "rs", "rz"}, {"dr"});
    b.node("Add", {"cd", "dr"}, {"a"});
    b.node("QuantizeLinear", {"a", "ys", "yz"}, {"y"});
    b.output("y", act);
    const Model m = b.load("residual.onnx");
    const std::map<std::string, Tensor> feeds = {{"x", ints_of(act, xs_shape, 21)},
                                                 {"r", ints_of(act, {1, 6, 7, 6}, 22)}};
    SessionOptions plain, fused;
    plain.optimize = false;
    fused.profile = true;
    const Tensor want = Session(m, plain).run(feeds)[0];
    Session s(m, fused);
    const Tensor got = s.run(feeds)[0];
    std::vector<std::string> ops;
    for (const NodeProfile& p : s.last_profile()) ops.push_back(p.op_type);
    EXPECT_EQ(ops, (std::vector<std::string>{"QConv"})) << "the QDQ pass did not fuse the block";
    ASSERT_EQ(got.shape(), want.shape());
    ASSERT_EQ(got.dtype(), act);
    int differ = 0;
    for (int64_t i = 0; i < got.numel(); ++i)
      differ += static_cast<const uint8_t*>(got.data())[i] != static_cast<const uint8_t*>(want.data())[i];
    EXPECT_EQ(differ, 0) << dtype_name(act) << ": " << differ << " of " << got.numel() << " differ";
  }
}
