// The QDQ pass (registered by register_onnx_quant, run once at prepare, before the nn pass).
//
// A QDQ file (onnxruntime.quantization.quantize_static, QuantFormat.QDQ) keeps float operators
// between DequantizeLinear (DQ) and QuantizeLinear (Q) nodes. Every rule below needs constant,
// per-tensor activation scales and zero points (weights may be per output channel) and int8 or
// uint8 data, and rewrites only nodes whose intermediate values nobody else reads:
//
// 1. Conv:   Conv(DQ(x), DQ(w) [, DQ(b) | b]) [-> Relu] [-> Q]  =>  QConv(x, .., w, .., b_int32)
//    Without a final Q the QConv writes float32 (x_scale * w_scale * acc). A float bias is
//    quantized with x_scale * w_scale[m] (ONNX Runtime's quantizer stores it so already). A
//    QLinearConv with constant weights becomes a QConv too, so that rule 2 applies to QOperator
//    files.
// 2. Residual Add: Q([Relu](Add(DQ(QConv(..)), DQ(s)))) => QConv(.., s, s_scale, s_zero_point,
//    mid_scale, mid_zero_point) with ReLU, when s exists before the QConv runs: oneDNN's sum
//    post-op. The QConv's own output quantization (mid) is kept: the kernel rounds and clamps in
//    it before the sum, so the result rounds twice as ONNX Runtime's does.
// 3. MatMul / Gemm: like Conv, B a constant 2-D (Gemm: transA = 0, alpha = beta = 1, C [N] or
//    absent; transB = 1 weights are transposed here) => QMatMul.
// 4. MaxPool, Flatten, Reshape between a DQ and a Q with the same scale and zero point run on the
//    int8 data; ReduceMax/ReduceMin of DQ(x) with a positive scale become DQ(ReduceMax(x)) (the
//    maximum commutes with an increasing map).
// 5. Layouts, once the graph is fused: a ReduceMax over every spatial axis of a QConv's int8
//    output becomes part of the QConv (PointNet's max over points: the [C, points] tensor is never
//    written in the plain layout); a QConv output that only QConvs read, as x or as the residual
//    operand (or an int8 MaxPool whose output only QConvs read), stays channels-last, the layout
//    oneDNN's int8 convolutions compute in (a plain tensor between two of them costs two
//    reorders: 40% of int8 PointNet's time at 16384 points).
#include "ops/onnx/quant/quant_fusion.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "ops/onnx/nn/dnnl_common.h"
#include "ops/onnx/nn/nn_kernels.h"
#include "ops/onnx/quant/contrib_qlinear.h"
#include "ops/onnx/quant/qconv.h"

namespace pointrt::quant {

namespace {

bool is_op(const Node& n, const char* op) { return !n.removed && n.domain.empty() && n.op_type == op; }
const Tensor* constant(const Graph& g, int v) {
  return v >= 0 && g.values[v].constant ? &*g.values[v].constant : nullptr;
}
bool is_int8(DType t) { return t == DType::kInt8 || t == DType::kUInt8; }

// A DequantizeLinear or QuantizeLinear node's data (x or y), scale and zero point.
struct Quantized {
  int node = -1, data = -1, scale = -1, zero_point = -1;
  bool per_tensor = true;
};

// The quantization parameters of node `ni` (a DQ or Q) when they are constant and float32.
std::optional<Quantized> params_of(const Graph& g, int ni, bool dequantize) {
  const Node& n = g.nodes[ni];
  if (!is_op(n, dequantize ? "DequantizeLinear" : "QuantizeLinear") || n.inputs.size() < 2 ||
      (!dequantize && n.outputs.empty()))
    return std::nullopt;
  if (n.attrs.get_int("block_size", 0) != 0) return std::nullopt;
  Quantized q{ni, dequantize ? n.inputs[0] : n.outputs[0], n.inputs[1], n.inputs.size() > 2 ? n.inputs[2] : -1};
  if (q.data < 0) return std::nullopt;  // an omitted data input or output (malformed)
  const Tensor* s = constant(g, q.scale);
  const Tensor* z = constant(g, q.zero_point);
  if (!s || s->dtype() != DType::kFloat32 || (q.zero_point >= 0 && !z) || !is_int8(g.values[q.data].dtype))
    return std::nullopt;
  q.per_tensor = s->numel() == 1;
  if (z && (z->dtype() != g.values[q.data].dtype || z->shape() != s->shape())) return std::nullopt;
  return q;
}

// v = DQ(x) with per-tensor parameters (activations).
std::optional<Quantized> dequantized(const Graph& g, int v, bool per_tensor_only = true) {
  if (v < 0 || g.values[v].producer < 0) return std::nullopt;
  auto q = params_of(g, g.values[v].producer, true);
  if (!q || (per_tensor_only && !q->per_tensor)) return std::nullopt;
  return q;
}

// The Q that is v's only reader, per tensor.
std::optional<Quantized> quantized_by(const Graph& g, const ValueReaders& r, int v) {
  int ni = r.sole_reader(v);
  if (ni < 0 || g.nodes[ni].inputs[0] != v) return std::nullopt;
  auto q = params_of(g, ni, false);
  if (!q || !q->per_tensor) return std::nullopt;
  return q;
}

float scalar(const Graph& g, int v) { return constant(g, v)->data_as<float>()[0]; }
int32_t zero_point_value(const Graph& g, int v) {
  const Tensor* z = constant(g, v);
  if (!z) return 0;
  return z->dtype() == DType::kUInt8 ? z->data_as<uint8_t>()[0] : z->data_as<int8_t>()[0];
}
bool same_params(const Graph& g, const Quantized& a, const Quantized& b) {
  return g.values[a.data].dtype == g.values[b.data].dtype && scalar(g, a.scale) == scalar(g, b.scale) &&
         zero_point_value(g, a.zero_point) == zero_point_value(g, b.zero_point);
}

// The int32 bias of a fused node: DQ(int32) whose scale equals x_scale * w_scale (as ONNX
// Runtime's quantizer writes it), or a float32 constant quantized here. -1 when neither fits.
int int32_bias(Graph& g, int b, float x_scale, Tensor w_scale, int64_t channels, const std::string& name) {
  if (b < 0) return -2;  // absent
  std::vector<float> want(channels);
  for (int64_t m = 0; m < channels; ++m) want[m] = x_scale * w_scale.data_as<float>()[w_scale.numel() == 1 ? 0 : m];
  const Node* dq = g.values[b].producer >= 0 ? &g.nodes[g.values[b].producer] : nullptr;
  if (dq && is_op(*dq, "DequantizeLinear") && dq->inputs.size() >= 2) {
    const Tensor *q = constant(g, dq->inputs[0]), *s = constant(g, dq->inputs[1]);
    const Tensor* z = dq->inputs.size() > 2 ? constant(g, dq->inputs[2]) : nullptr;
    if (!q || !s || q->dtype() != DType::kInt32 || q->numel() != channels || s->dtype() != DType::kFloat32) return -1;
    for (int64_t i = 0; z && i < z->numel(); ++i)
      if (z->data_as<int32_t>()[i] != 0) return -1;
    for (int64_t m = 0; m < channels; ++m)
      if (s->data_as<float>()[s->numel() == 1 ? 0 : m] != want[m]) return -1;
    return dq->inputs[0];
  }
  const Tensor* f = constant(g, b);
  if (!f || f->dtype() != DType::kFloat32 || f->numel() != channels) return -1;
  Tensor q = Tensor::allocate(DType::kInt32, {channels});
  for (int64_t m = 0; m < channels; ++m) {
    const double v = std::nearbyint(static_cast<double>(f->data_as<float>()[m]) / want[m]);
    if (!(std::fabs(v) < 2147483647.0)) return -1;
    q.data_as<int32_t>()[m] = static_cast<int32_t>(v);
  }
  return nn::add_constant(g, name + "_bias_int32", q);
}

// Removes DQ nodes whose outputs nobody reads any more (before constant folding computes them).
void drop_unread_dequantize(Graph& g) {
  ValueReaders r = value_readers(g);
  for (auto& n : g.nodes)
    if (is_op(n, "DequantizeLinear") && !n.outputs.empty() && n.outputs[0] >= 0 && r.of(n.outputs[0]).empty() &&
        !r.graph_output[n.outputs[0]])
      n.removed = true;
}

void set_int(Node& n, const char* name, int64_t v) { n.attrs.items[name] = Attribute::make_int(v); }

// The epilogue of a fused node: an optional Relu, then an optional Q, both sole readers.
struct Epilogue {
  int relu = -1;               // Relu node
  std::optional<Quantized> q;  // output quantization
  int output = -1;             // the value the fused node writes
};
Epilogue epilogue_of(const Graph& g, const ValueReaders& r, int y) {
  Epilogue e;
  e.output = y;
  int ri = r.sole_reader(y);
  if (ri >= 0 && is_op(g.nodes[ri], "Relu") && !g.nodes[ri].outputs.empty()) {
    e.relu = ri;
    e.output = g.nodes[ri].outputs[0];
  }
  e.q = quantized_by(g, r, e.output);
  if (e.q) e.output = e.q->data;
  return e;
}

// Turns node `ni` into an internal fused node reading `inputs` and writing the epilogue's value.
void rewrite_as(Graph& g, int ni, const char* op, std::vector<int> inputs, const Epilogue& e) {
  Node& n = g.nodes[ni];
  n.op_type = op;
  n.domain = kInternalDomain;
  n.opset = 1;
  if (!e.q) set_int(n, kAttrFloatOutput, 1);
  if (e.relu >= 0) {
    set_int(n, nn::kAttrPostRelu, 1);
    g.nodes[e.relu].removed = true;
  }
  if (e.q && e.q->node >= 0) g.nodes[e.q->node].removed = true;
  n.inputs = std::move(inputs);
  n.outputs = {e.output};
  g.values[e.output].producer = ni;
}

// A zero point input for a fused node: the Q's own, or a zero constant of its type when it has none.
int zero_point_input(Graph& g, const Quantized& q) {
  if (q.zero_point >= 0) return q.zero_point;
  return nn::add_constant(g, g.values[q.data].name + "_zero_point", Tensor::zeros(g.values[q.data].dtype, {}));
}

// Per-output-channel weight parameters must be along axis 0 (Conv) or the given axis.
bool weight_axis_ok(const Graph& g, const Quantized& w, int64_t axis, int64_t channels) {
  if (w.per_tensor) return true;
  const Node& dq = g.nodes[w.node];
  int64_t a = dq.attrs.get_int("axis", 1);
  const int64_t rank = static_cast<int64_t>(constant(g, w.data)->rank());
  if (a < 0) a += rank;
  return a == axis && constant(g, w.scale)->numel() == channels;
}

// Rule 1.
bool fuse_conv(Graph& g, const ValueReaders& r, int ci) {
  Node& conv = g.nodes[ci];
  if (!is_op(conv, "Conv") || conv.inputs.size() < 2 || conv.outputs.size() != 1) return false;
  auto x = dequantized(g, conv.inputs[0]);
  auto w = dequantized(g, conv.inputs[1], false);
  if (!x || !w || !constant(g, w->data) || constant(g, w->data)->rank() < 3) return false;
  const int64_t m = constant(g, w->data)->dim(0);
  if (!weight_axis_ok(g, *w, 0, m)) return false;
  const int bias = int32_bias(g, conv.inputs.size() > 2 ? conv.inputs[2] : -1, scalar(g, x->scale),
                              *constant(g, w->scale), m, conv.name);
  if (bias == -1) return false;
  Epilogue e = epilogue_of(g, r, conv.outputs[0]);
  const int y_zp = e.q ? zero_point_input(g, *e.q) : -1;
  rewrite_as(g, ci, "QConv",
             {x->data, x->scale, x->zero_point, w->data, w->scale, w->zero_point, e.q ? e.q->scale : -1, y_zp,
              bias < 0 ? -1 : bias},
             e);
  return true;
}

// Rule 1 for QOperator files: a QLinearConv with constant weights and scales is a QConv.
bool adopt_qlinear_conv(Graph& g, int ci) {
  Node& n = g.nodes[ci];
  if (!is_op(n, "QLinearConv") || n.inputs.size() < 8) return false;
  for (int i : {1, 3, 4, 6})
    if (!constant(g, n.inputs[i])) return false;
  n.op_type = "QConv";
  n.domain = kInternalDomain;
  n.opset = 1;
  return true;
}

// The QConv whose quantized output `q.data` only `add` reads: through the DequantizeLinear q.node
// (QDQ), or directly (q.node < 0: a QLinearAdd operand).
int residual_conv(const Graph& g, const ValueReaders& r, const Quantized& q, int add) {
  const int p = g.values[q.data].producer;
  if (p < 0) return -1;
  if (q.node >= 0 ? r.sole_reader(q.data) != q.node || r.sole_reader(g.nodes[q.node].outputs[0]) != add
                  : r.sole_reader(q.data) != add)
    return -1;
  const Node& c = g.nodes[p];
  if (c.removed || c.domain != kInternalDomain || c.op_type != "QConv" || c.inputs.size() > 9) return -1;
  if (c.attrs.get_int(kAttrFloatOutput, 0) || c.attrs.get_int(nn::kAttrPostRelu, 0)) return -1;
  return p;
}

// The two quantized operands and the quantized result of an Add between DQs and a Q, or of a
// com.microsoft QLinearAdd.
struct QuantizedAdd {
  Quantized a, b;
  Epilogue out;
};
std::optional<QuantizedAdd> quantized_add(const Graph& g, const ValueReaders& r, int ai) {
  const Node& n = g.nodes[ai];
  if (n.outputs.empty()) return std::nullopt;
  if (!n.removed && n.domain == kMicrosoftDomain && n.op_type == "QLinearAdd" && n.inputs.size() >= 7) {
    for (int i : {1, 4, 6})
      if (!constant(g, n.inputs[i]) || constant(g, n.inputs[i])->numel() != 1) return std::nullopt;
    for (int i : {2, 5, 7})
      if (i < static_cast<int>(n.inputs.size()) && n.inputs[i] >= 0 && !constant(g, n.inputs[i])) return std::nullopt;
    auto zp = [&](int i) { return i < static_cast<int>(n.inputs.size()) ? n.inputs[i] : -1; };
    Epilogue e;
    e.q = Quantized{-1, n.outputs[0], n.inputs[6], zp(7)};
    e.output = n.outputs[0];
    return QuantizedAdd{{-1, n.inputs[0], n.inputs[1], zp(2)}, {-1, n.inputs[3], n.inputs[4], zp(5)}, e};
  }
  if (!is_op(n, "Add") || n.inputs.size() != 2 || n.opset < 7 || n.inputs[0] == n.inputs[1]) return std::nullopt;
  auto a = dequantized(g, n.inputs[0]), b = dequantized(g, n.inputs[1]);
  if (!a || !b) return std::nullopt;
  Epilogue e = epilogue_of(g, r, n.outputs[0]);
  if (!e.q) return std::nullopt;
  return QuantizedAdd{*a, *b, e};
}

// Rule 2.
bool fuse_residual(Graph& g, const ValueReaders& r, int ai) {
  auto add = quantized_add(g, r, ai);
  if (!add) return false;
  // Same shapes (the sum post-op does not broadcast).
  const Value &va = g.values[add->a.data], &vb = g.values[add->b.data];
  if (!va.has_shape || !vb.has_shape || va.shape.size() != vb.shape.size()) return false;
  for (size_t d = 0; d < va.shape.size(); ++d)
    if (!va.shape[d].is_fixed() || va.shape[d].value != vb.shape[d].value) return false;
  int best = -1;
  const Quantized *mine = nullptr, *other = nullptr;
  for (auto [m, o] : {std::pair{&add->a, &add->b}, std::pair{&add->b, &add->a}}) {
    const int p = residual_conv(g, r, *m, ai);
    if (p > best && g.values[o->data].producer < p) best = p, mine = m, other = o;
  }
  if (best < 0) return false;
  const int y_zp = zero_point_input(g, *add->out.q);
  std::vector<int> in = g.nodes[best].inputs;
  in.resize(9, -1);
  // The convolution's own output quantization stays as (mid_scale, mid_zp): the kernel rounds in
  // it before the sum, as ONNX Runtime does (QLinearConv, then QLinearAdd).
  const int mid_scale = in[6];
  int mid_zp = in[7];
  if (mid_zp < 0)
    mid_zp = nn::add_constant(g, g.nodes[best].name + "_mid_zero_point", Tensor::zeros(DType::kUInt8, {}));
  in[6] = add->out.q->scale;
  in[7] = y_zp;
  in.insert(in.end(), {other->data, other->scale, other->zero_point, mid_scale, mid_zp});
  if (mine->node >= 0) g.nodes[mine->node].removed = true;
  set_int(g.nodes[best], nn::kAttrSumInput, 1);
  g.nodes[ai].removed = true;
  rewrite_as(g, best, "QConv", in, add->out);
  return true;
}

// A new constant: the 2-D int8/uint8 constant v transposed.
int transposed_constant(Graph& g, int v) {
  const Tensor bt = *constant(g, v);
  Tensor t = Tensor::allocate(bt.dtype(), {bt.dim(1), bt.dim(0)});
  const auto* src = static_cast<const uint8_t*>(bt.data());
  auto* dst = static_cast<uint8_t*>(t.data());
  for (int64_t i = 0; i < bt.dim(0); ++i)
    for (int64_t j = 0; j < bt.dim(1); ++j) dst[j * bt.dim(0) + i] = src[i * bt.dim(1) + j];
  return nn::add_constant(g, g.values[v].name + "_t", t);
}

// Rule 3 for QOperator files: a com.microsoft QGemm (transA = 0, alpha = 1, constant B and
// scales, C an int32 [N] constant or absent) is a QMatMul.
bool adopt_qgemm(Graph& g, int ni) {
  Node& n = g.nodes[ni];
  if (n.removed || n.domain != kMicrosoftDomain || n.op_type != "QGemm" || n.inputs.size() < 6) return false;
  if (n.attrs.get_int("transA", 0) || n.attrs.get_float("alpha", 1.f) != 1.f) return false;
  auto in = [&](int i) { return i < static_cast<int>(n.inputs.size()) ? n.inputs[i] : -1; };
  const Tensor* b = constant(g, in(3));
  if (!b || b->rank() != 2 || !constant(g, in(1)) || !constant(g, in(4)) || (in(5) >= 0 && !constant(g, in(5))))
    return false;
  const bool trans_b = n.attrs.get_int("transB", 0) != 0;
  const int64_t cols = trans_b ? b->dim(0) : b->dim(1);
  const Tensor* c = constant(g, in(6));
  if ((in(6) >= 0 && (!c || c->dtype() != DType::kInt32 || c->numel() != cols)) || (in(7) >= 0 && !constant(g, in(7))))
    return false;
  const bool quantized = in(7) >= 0;
  int y_zp = in(8);
  if (quantized && y_zp < 0) y_zp = nn::add_constant(g, n.name + "_y_zero_point", Tensor::zeros(DType::kUInt8, {}));
  const int bq = trans_b ? transposed_constant(g, in(3)) : in(3);
  Node& m = g.nodes[ni];
  m.inputs = {in(0), in(1), in(2), bq, in(4), in(5), quantized ? in(7) : -1, quantized ? y_zp : -1, in(6)};
  m.op_type = "QMatMul";
  m.domain = kInternalDomain;
  m.opset = 1;
  for (const char* at : {"transA", "transB", "alpha"}) m.attrs.items.erase(at);
  if (!quantized) set_int(m, kAttrFloatOutput, 1);
  return true;
}

// Rule 3.
bool fuse_matmul(Graph& g, const ValueReaders& r, int ni) {
  Node& n = g.nodes[ni];
  const bool gemm = is_op(n, "Gemm");
  if (!(gemm || is_op(n, "MatMul")) || n.inputs.size() < 2 || n.outputs.size() != 1) return false;
  if (gemm && (n.opset < 7 || n.attrs.get_int("transA", 0) || n.attrs.get_float("alpha", 1.f) != 1.f ||
               n.attrs.get_float("beta", 1.f) != 1.f))
    return false;
  auto a = dequantized(g, n.inputs[0]);
  auto b = dequantized(g, n.inputs[1], false);
  if (!a || !b || !constant(g, b->data) || constant(g, b->data)->rank() != 2) return false;
  const Value& av = g.values[n.inputs[0]];
  if (gemm && (!av.has_shape || av.shape.size() != 2)) return false;
  const bool trans_b = gemm && n.attrs.get_int("transB", 0) != 0;
  const Tensor bt = *constant(g, b->data);
  const int64_t cols = trans_b ? bt.dim(0) : bt.dim(1);
  if (!weight_axis_ok(g, *b, trans_b ? 0 : 1, cols)) return false;
  const int c = gemm && n.inputs.size() > 2 ? n.inputs[2] : -1;
  const int bias = int32_bias(g, c, scalar(g, a->scale), *constant(g, b->scale), cols, n.name);
  if (bias == -1) return false;
  const int bq = trans_b ? transposed_constant(g, b->data) : b->data;  // QMatMul takes B as [K, N]
  Epilogue e = epilogue_of(g, r, n.outputs[0]);
  const int y_zp = e.q ? zero_point_input(g, *e.q) : -1;
  for (const char* at : {"transA", "transB", "alpha", "beta"}) g.nodes[ni].attrs.items.erase(at);
  rewrite_as(g, ni, "QMatMul",
             {a->data, a->scale, a->zero_point, bq, b->scale, b->zero_point, e.q ? e.q->scale : -1, y_zp,
              bias < 0 ? -1 : bias},
             e);
  return true;
}

// Rule 4: MaxPool, Flatten and Reshape between a DQ and a Q with the same parameters.
bool int8_passthrough(Graph& g, const ValueReaders& r, int ni) {
  Node& n = g.nodes[ni];
  const bool pool = is_op(n, "MaxPool") && n.opset >= 12 && (n.outputs.size() == 1 || n.outputs[1] < 0);
  if ((!pool && !is_op(n, "Flatten") && !is_op(n, "Reshape")) || n.inputs.empty() || n.outputs.empty()) return false;
  auto x = dequantized(g, n.inputs[0]);
  auto q = quantized_by(g, r, n.outputs[0]);
  if (!x || !q || !same_params(g, *x, *q)) return false;
  n.inputs[0] = x->data;
  n.outputs[0] = q->data;
  g.values[q->data].producer = ni;
  g.nodes[q->node].removed = true;
  return true;
}

// Rule 4: ReduceMax/ReduceMin(DQ(x)) => DQ(ReduceMax(x)). The DQ node (earlier) becomes the
// reduction and the reduction the DQ, so that the node order stays topological.
bool reduce_before_dequantize(Graph& g, const ValueReaders& r, int ni) {
  const Node& n = g.nodes[ni];
  if (!(is_op(n, "ReduceMax") || is_op(n, "ReduceMin")) || n.opset < 12 || n.outputs.size() != 1 || n.inputs.empty() ||
      n.outputs[0] < 0)
    return false;
  auto x = dequantized(g, n.inputs[0]);
  if (!x || scalar(g, x->scale) <= 0.f || r.sole_reader(n.inputs[0]) != ni) return false;
  const int y = n.outputs[0], dq = x->node;
  const int reduced = g.add_value(g.values[y].name + "_quantized");
  g.values[reduced].dtype = g.values[x->data].dtype;
  g.values[reduced].has_shape = g.values[y].has_shape;
  g.values[reduced].shape = g.values[y].shape;
  std::swap(g.nodes[dq], g.nodes[ni]);
  g.nodes[dq].inputs[0] = x->data;  // the reduction, at the DQ's place
  g.nodes[dq].outputs[0] = reduced;
  g.nodes[ni].inputs[0] = reduced;  // the DQ, at the reduction's place
  g.nodes[ni].outputs[0] = y;
  g.values[reduced].producer = dq;
  g.values[y].producer = ni;
  return true;
}

bool is_qconv(const Node& n) { return !n.removed && n.domain == kInternalDomain && n.op_type == "QConv"; }

// True when ReduceMax node `n` (axes constant) reduces exactly the axes 2 .. rank-1.
bool reduces_spatial_axes(const Graph& g, const Node& n, size_t rank) {
  std::vector<int64_t> axes;
  if (n.opset >= 18) {
    const Tensor* a = n.inputs.size() > 1 ? constant(g, n.inputs[1]) : nullptr;
    if (!a || a->dtype() != DType::kInt64) return false;
    axes.assign(a->data_as<int64_t>(), a->data_as<int64_t>() + a->numel());
  } else {
    axes = n.attrs.get_ints("axes", {});
  }
  std::vector<char> seen(rank, 0);
  for (int64_t a : axes) {
    if (a < 0) a += static_cast<int64_t>(rank);
    if (a < 2 || a >= static_cast<int64_t>(rank)) return false;
    seen[a] = 1;
  }
  return std::count(seen.begin() + 2, seen.end(), 1) == static_cast<std::ptrdiff_t>(rank - 2);
}

bool writes_int8_activation(const Graph& g, const Node& n) {
  if (!is_qconv(n) || n.outputs.size() != 1 || n.outputs[0] < 0 || n.attrs.get_int(kAttrFloatOutput, 0) != 0 ||
      n.attrs.get_int(kAttrGlobalMax, 0) != 0)
    return false;
  const Value& y = g.values[n.outputs[0]];
  return y.has_shape && y.shape.size() >= 3 && y.shape.size() <= 5;
}

// Rule 5: the maximum over points.
bool fuse_global_max(Graph& g, const ValueReaders& r, int ci) {
  if (!writes_int8_activation(g, g.nodes[ci])) return false;
  const int y = g.nodes[ci].outputs[0], ri = r.sole_reader(y);
  if (ri < 0 || !is_op(g.nodes[ri], "ReduceMax") || g.nodes[ri].opset < 12 || g.nodes[ri].outputs.size() != 1 ||
      g.nodes[ri].inputs[0] != y || !reduces_spatial_axes(g, g.nodes[ri], g.values[y].shape.size()))
    return false;
  Node& reduce = g.nodes[ri];
  Node& conv = g.nodes[ci];
  set_int(conv, kAttrGlobalMax, 1);
  set_int(conv, kAttrGlobalMaxKeepdims, reduce.attrs.get_int("keepdims", 1));
  conv.outputs[0] = reduce.outputs[0];
  g.values[conv.outputs[0]].producer = ci;
  reduce.removed = true;
  return true;
}

// An int8 MaxPool (rule 4 runs it on the int8 data) that can keep the channels-last layout.
bool channels_last_pool(const Graph& g, const Node& n) {
  if (!is_op(n, "MaxPool") || n.opset < 12 || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.empty() ||
      n.outputs[0] < 0 || (n.outputs.size() > 1 && n.outputs[1] >= 0))
    return false;
  const Value& x = g.values[n.inputs[0]];
  return is_int8(x.dtype) && x.has_shape && x.shape.size() == 4;
}

// True when v has readers, is no graph output, and each reader can read it channels-last: a QConv
// as x or as the residual operand, or a MaxPool marked in `pools`.
bool readers_take_channels_last(const Graph& g, const ValueReaders& r, int v, const std::vector<char>& pools) {
  if (r.graph_output[v] || r.of(v).empty()) return false;
  for (const auto& reader : r.of(v)) {
    const int ri = reader.node;
    const Node& c = g.nodes[ri];
    for (size_t slot = 0; slot < c.inputs.size(); ++slot)
      if (c.inputs[slot] == v && !(is_qconv(c) ? slot == 0 || slot == kQConvSumInput : slot == 0 && pools[ri]))
        return false;
  }
  return true;
}

// Tells each QConv reader of v that v arrives channels-last; marks MaxPool readers in `pools`.
void read_channels_last(Graph& g, const ValueReaders& r, int v, std::vector<char>& pools) {
  for (const auto& reader : r.of(v)) {
    const int ri = reader.node;
    Node& c = g.nodes[ri];
    if (!is_qconv(c)) {
      pools[ri] = 1;
      continue;
    }
    if (c.inputs[0] == v) set_int(c, kAttrSrcNhwc, 1);
    if (static_cast<int>(c.inputs.size()) > kQConvSumInput && c.inputs[kQConvSumInput] == v)
      set_int(c, kAttrSumNhwc, 1);
  }
}

// Rule 5: channels-last between QConvs, and through the int8 MaxPools between them (ResNet's stem).
bool chain_channels_last(Graph& g) {
  const ValueReaders r = value_readers(g);
  const std::vector<char> none(g.nodes.size(), 0);
  std::vector<char> pool_ok(g.nodes.size(), 0), pool_cl(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    pool_ok[i] = channels_last_pool(g, g.nodes[i]) && readers_take_channels_last(g, r, g.nodes[i].outputs[0], none);
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!writes_int8_activation(g, g.nodes[i]) || g.nodes[i].attrs.get_int(kAttrDstNhwc, 0) != 0) continue;
    const int y = g.nodes[i].outputs[0];
    if (!readers_take_channels_last(g, r, y, pool_ok)) continue;
    set_int(g.nodes[i], kAttrDstNhwc, 1);
    read_channels_last(g, r, y, pool_cl);
    changed = true;
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (pool_cl[i]) {  // its input is channels-last; only QConvs read its output (pool_ok), so no pool is marked
      set_int(g.nodes[i], nn::kAttrInt8Nhwc, 1);
      read_channels_last(g, r, g.nodes[i].outputs[0], pool_cl);
    }
  return changed;
}

}  // namespace

bool fuse_qdq(Graph& g) {
  // Every rule starts from a DequantizeLinear, a QLinear*/QGemm to adopt or an int8 kernel (Q*):
  // without any, nothing to do (a float graph of 16k nodes paid 4 ms of reader indexes).
  if (std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) {
        return !n.removed && (n.op_type.rfind('Q', 0) == 0 || n.op_type.find("Quantize") != std::string::npos);
      }))
    return false;
  bool changed = false;
  // Convolutions and products first; residual Adds need their QConv; then what runs on int8.
  for (int stage = 0; stage < 3; ++stage) {
    ValueReaders r = value_readers(g);
    for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
      if (g.nodes[i].removed) continue;
      bool c = false;
      if (stage == 0)
        c = fuse_conv(g, r, i) || adopt_qlinear_conv(g, i) || fuse_matmul(g, r, i) || adopt_qgemm(g, i);
      else if (stage == 1)
        c = fuse_residual(g, r, i);
      else
        c = int8_passthrough(g, r, i) || reduce_before_dequantize(g, r, i);
      if (c) {
        changed = true;
        r = value_readers(g);
      }
    }
  }
  if (changed) drop_unread_dequantize(g);
  ValueReaders r = value_readers(g);
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (fuse_global_max(g, r, i)) {
      changed = true;
      r = value_readers(g);
    }
  return chain_channels_last(g) || changed;
}

}  // namespace pointrt::quant
