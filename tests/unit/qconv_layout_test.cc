// The QDQ pass's layout rule (quant_fusion.cc, rule 5): QConv outputs that only QConvs read stay
// channels-last, and a ReduceMax over the spatial axes of a QConv output becomes part of it. The
// integer results must not change: each graph is compared, element for element, with the same
// session where the intermediate values are observed (observed values keep the plain layout and
// stop the fusion across them), and the profile shows which nodes ran.
#include <gtest/gtest.h>

#include "unit/quant_cases.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

Tensor activation(DType t, const Shape& s, uint32_t seed) {
  return t == DType::kUInt8 ? random_ints<uint8_t>(s, 0, 255, seed) : random_ints<int8_t>(s, -128, 127, seed);
}
Tensor zero_point(DType t, int v) {
  return t == DType::kUInt8 ? scalar_int<uint8_t>(static_cast<uint8_t>(128 + v))
                            : scalar_int<int8_t>(static_cast<int8_t>(v));
}

// DQ(in) -> Conv(w: [out_c, in_c, k...]) [-> Relu] -> Q(scale, zp) -> `out`; the weights, their
// scales and the output parameters are initializers named after `out`.
void qdq_conv(ModelBuilder& b, DType act, const std::string& in, const std::string& in_params, const std::string& out,
              Shape w, bool relu, uint32_t seed, std::vector<int64_t> pads = {}) {
  const int64_t m = w[0];
  b.initializer(out + "_w", random_ints<int8_t>(w, -100, 100, seed));
  b.initializer(out + "_ws", random_floats({m}, 0.002f, 0.01f, seed + 1));
  b.initializer(out + "_wz", Tensor::zeros(DType::kInt8, {m}));
  b.initializer(out + "_s", scalar_of(0.05f + 0.01f * static_cast<float>(seed % 5)));
  b.initializer(out + "_z", zero_point(act, static_cast<int>(seed % 7) - 3));
  b.node("DequantizeLinear", {in, in_params + "_s", in_params + "_z"}, {out + "_dx"});
  ModelBuilder::attr_int(b.node("DequantizeLinear", {out + "_w", out + "_ws", out + "_wz"}, {out + "_dw"}), "axis", 0);
  auto& conv = b.node("Conv", {out + "_dx", out + "_dw"}, {out + "_c"});
  if (!pads.empty()) ModelBuilder::attr_ints(conv, "pads", pads);
  std::string last = out + "_c";
  if (relu) {
    b.node("Relu", {last}, {out + "_r"});
    last = out + "_r";
  }
  b.node("QuantizeLinear", {last, out + "_s", out + "_z"}, {out});
}

void input_params(ModelBuilder& b, DType act, const std::string& name) {
  b.initializer(name + "_s", scalar_of(0.031f));
  b.initializer(name + "_z", zero_point(act, 2));
}

std::vector<std::string> ops_run(const Session& s) {
  std::vector<std::string> ops;
  for (const NodeProfile& p : s.last_profile()) ops.push_back(p.op_type);
  return ops;
}

// Runs `m` twice, fused and with `observed` watched; returns both results and the op lists.
struct Runs {
  std::vector<Tensor> fused, plain;
  std::vector<std::string> fused_ops, plain_ops;
};
Runs run_both(const Model& m, const std::map<std::string, Tensor>& feeds, std::vector<std::string> observed) {
  SessionOptions fused, watched;
  fused.profile = watched.profile = true;
  watched.observe = std::move(observed);
  Session a(m, fused), b(m, watched);
  Runs r;
  r.fused = a.run(feeds);
  r.fused_ops = ops_run(a);
  r.plain = b.run(feeds);
  r.plain_ops = ops_run(b);
  return r;
}

void expect_same_bytes(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int differ = 0;
  for (size_t i = 0; i < got.nbytes(); ++i)
    differ += static_cast<const uint8_t*>(got.data())[i] != static_cast<const uint8_t*>(want.data())[i];
  EXPECT_EQ(differ, 0) << what << ": " << differ << " of " << got.nbytes() << " bytes differ";
}

// PointNet's encoder: x [B, 5, N] -> QConv+Relu -> QConv+Relu -> ReduceMax over points -> DQ.
Model pointnet_encoder(DType act, int64_t batch, int64_t points, int64_t opset, int64_t keepdims) {
  ModelBuilder b(opset);
  b.input("x", act, {batch, int64_t{5}, points});
  input_params(b, act, "x");
  qdq_conv(b, act, "x", "x", "h1", {6, 5, 1}, true, 11);
  qdq_conv(b, act, "h1", "h1", "h2", {19, 6, 1}, true, 12);
  if (opset >= 18) {
    b.initializer("axes", tensor_of<int64_t>({1}, {-1}));
    ModelBuilder::attr_int(b.node("ReduceMax", {"h2", "axes"}, {"m"}), "keepdims", keepdims);
  } else {
    auto& r = b.node("ReduceMax", {"h2"}, {"m"});
    ModelBuilder::attr_ints(r, "axes", {2});
    ModelBuilder::attr_int(r, "keepdims", keepdims);
  }
  b.node("DequantizeLinear", {"m", "h2_s", "h2_z"}, {"y"});
  b.output("y", DType::kFloat32);
  return b.load("pointnet_encoder.onnx");
}

}  // namespace

TEST(QConvLayout, MaxOverPointsFusesAndMatches) {
  for (DType act : {DType::kUInt8, DType::kInt8})
    for (int64_t points : {int64_t{1}, int64_t{37}, int64_t{1000}})
      for (int64_t opset : {int64_t{13}, int64_t{17}})
        for (int64_t keepdims : {int64_t{0}, int64_t{1}}) {
          const std::string what = std::string(dtype_name(act)) + " points " + std::to_string(points) + " opset " +
                                   std::to_string(opset) + " keepdims " + std::to_string(keepdims);
          const Model m = pointnet_encoder(act, 2, points, opset, keepdims);
          Runs r = run_both(m, {{"x", activation(act, {2, 5, points}, 21)}}, {"h1", "h2"});
          EXPECT_EQ(r.fused_ops, (std::vector<std::string>{"QConv", "QConv", "DequantizeLinear"})) << what;
          EXPECT_EQ(r.plain_ops, (std::vector<std::string>{"QConv", "QConv", "ReduceMax", "DequantizeLinear"})) << what;
          ASSERT_EQ(r.fused.size(), 1u);
          expect_same_bytes(r.fused[0], r.plain[0], what);
          EXPECT_EQ(r.fused[0].shape(), keepdims ? (Shape{2, 19, 1}) : (Shape{2, 19})) << what;
        }
}

// An empty batch: nothing to reduce, an empty result.
TEST(QConvLayout, MaxOverAnEmptyBatch) {
  const Model m = pointnet_encoder(DType::kInt8, 0, 37, 13, 0);
  Runs r = run_both(m, {{"x", Tensor::zeros(DType::kInt8, {0, 5, 37})}}, {"h1", "h2"});
  expect_same_bytes(r.fused[0], r.plain[0], "batch 0");
  EXPECT_EQ(r.fused[0].shape(), (Shape{0, 19}));
}

// A residual block between two convolutions (the residual operand is also the first
// convolution's input) and a 1x1 convolution whose output is the graph's: the values between
// the QConvs travel channels-last, the graph output stays plain.
TEST(QConvLayout, ResidualChainMatchesThePlainLayout) {
  for (DType act : {DType::kUInt8, DType::kInt8})
    for (Shape hw : {Shape{1, 1}, Shape{7, 6}, Shape{17, 16}}) {
      const std::string what = std::string(dtype_name(act)) + " " + shape_to_string(hw);
      ModelBuilder b(13);
      b.input("x", act, {int64_t{1}, int64_t{5}, hw[0], hw[1]});
      input_params(b, act, "x");
      qdq_conv(b, act, "x", "x", "a", {6, 5, 3, 3}, true, 31, {1, 1, 1, 1});
      qdq_conv(b, act, "a", "a", "bm", {6, 6, 3, 3}, false, 32, {1, 1, 1, 1});  // its own Q, then + a
      b.initializer("b_s", scalar_of(0.07f));
      b.initializer("b_z", zero_point(act, -1));
      b.node("DequantizeLinear", {"bm", "bm_s", "bm_z"}, {"bm_d"});
      b.node("DequantizeLinear", {"a", "a_s", "a_z"}, {"a_d"});
      b.node("Add", {"bm_d", "a_d"}, {"sum"});
      b.node("Relu", {"sum"}, {"sum_r"});
      b.node("QuantizeLinear", {"sum_r", "b_s", "b_z"}, {"b"});
      qdq_conv(b, act, "b", "b", "c", {7, 6, 1, 1}, false, 33);
      b.output("c", act);
      const Model m = b.load("residual_chain.onnx");
      Runs r = run_both(m, {{"x", activation(act, {1, 5, hw[0], hw[1]}, 41)}}, {"a", "b"});
      EXPECT_EQ(r.fused_ops, (std::vector<std::string>{"QConv", "QConv", "QConv"})) << what;
      EXPECT_EQ(r.plain_ops, r.fused_ops) << what;
      expect_same_bytes(r.fused[0], r.plain[0], what);
    }
}

// ResNet's stem: QConv -> int8 MaxPool -> QConv. The pool runs channels-last between the two
// convolutions (strides, padding, ceil mode, dilation).
TEST(QConvLayout, MaxPoolBetweenQConvsMatchesThePlainLayout) {
  struct Pool {
    std::vector<int64_t> kernel, strides, pads, dilations;
    int64_t ceil = 0;
  };
  const std::vector<Pool> pools = {
      {{3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 0}, {{2, 2}, {2, 2}, {}, {}, 1}, {{3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 0}};
  for (DType act : {DType::kUInt8, DType::kInt8})
    for (Shape hw : {Shape{1, 1}, Shape{7, 6}, Shape{17, 16}})
      for (size_t pi = 0; pi < pools.size(); ++pi) {
        const std::string what =
            std::string(dtype_name(act)) + " " + shape_to_string(hw) + " pool " + std::to_string(pi);
        const Pool& pc = pools[pi];
        if (pc.pads.empty() && hw[0] < pc.kernel[0]) continue;  // the window does not fit
        ModelBuilder b(13);
        b.input("x", act, {int64_t{2}, int64_t{5}, hw[0], hw[1]});
        input_params(b, act, "x");
        qdq_conv(b, act, "x", "x", "a", {17, 5, 3, 3}, true, 51, {1, 1, 1, 1});
        b.node("DequantizeLinear", {"a", "a_s", "a_z"}, {"a_d"});
        auto& pool = b.node("MaxPool", {"a_d"}, {"p_f"});
        ModelBuilder::attr_ints(pool, "kernel_shape", pc.kernel);
        ModelBuilder::attr_ints(pool, "strides", pc.strides);
        if (!pc.pads.empty()) ModelBuilder::attr_ints(pool, "pads", pc.pads);
        if (!pc.dilations.empty()) ModelBuilder::attr_ints(pool, "dilations", pc.dilations);
        if (pc.ceil) ModelBuilder::attr_int(pool, "ceil_mode", 1);
        b.node("QuantizeLinear", {"p_f", "a_s", "a_z"}, {"p"});
        qdq_conv(b, act, "p", "a", "c", {6, 17, 1, 1}, false, 52);
        b.output("c", act);
        const Model m = b.load("stem.onnx");
        Runs r = run_both(m, {{"x", activation(act, {2, 5, hw[0], hw[1]}, 61)}}, {"a", "p"});
        EXPECT_EQ(r.fused_ops, (std::vector<std::string>{"QConv", "MaxPool", "QConv"})) << what;
        EXPECT_EQ(r.plain_ops, r.fused_ops) << what;
        expect_same_bytes(r.fused[0], r.plain[0], what);
      }
}
