// The nn graph pass (registered by register_onnx_nn, run once at prepare):
//
// 1. BatchNorm folding: Conv(X, W, B) -> BatchNormalization with constant W (and B) and constant
//    BN parameters, where the Conv output has no other reader, becomes one internal FusedConv with
//    W' = W * s and B' = (B - mean) * s + beta, s = scale / sqrt(var + eps), per output channel.
// 2. Residual Add: Add(conv_out, other) where conv_out has no other reader, both operands have the
//    same shape and `other` is computed before the Conv runs, becomes FusedConv(..., other) with a
//    oneDNN sum post-op. When `other` was freshly allocated by an nn kernel and nobody else reads
//    it, the conv accumulates into that buffer in place.
// 3. Relu after a Conv/FusedConv (possibly after the fused Add) becomes an eltwise post-op.
// 4. ReduceMax over every spatial axis of a conv output (PointNet's max over points): when the
//    conv is a pointwise Conv1d read only by the ReduceMax, the max becomes part of the FusedConv,
//    which then computes chunks of points and keeps a running max, so the [N, M, points] tensor
//    (64 MB for 1024 x 16384) is never written. Otherwise the ReduceMax becomes a GlobalMaxPool
//    (squeezing when keepdims = 0) so the conv output may stay blocked. A NaN among the values
//    is not guaranteed to propagate (as in ONNX Runtime's ReduceMax).
// 5. Layout: an edge between nn kernels (FusedConv/Conv, MaxPool, AveragePool, global pools)
//    travels in oneDNN's channel-blocked layout when its channel count is a multiple of the block
//    (dnnl_common.h). We chose attributes on the producer and consumers over a "chain" super-node
//    because each node stays a node: profiles, execution_plan() and errors still name the ONNX
//    node. The set of blocked edges is the largest one where every reader accepts blocked data:
//    pools need input and output in the same layout, a fused Add operand must match the conv's
//    output layout, global pools take blocked input and write [N, C, 1, 1] (same bytes in either
//    layout), and graph outputs and edges read by any other operator stay plain.
#include <algorithm>
#include <cmath>
#include <set>

#include "ops/onnx/nn/batchnorm.h"
#include "ops/onnx/nn/dnnl_common.h"
#include "ops/onnx/nn/nn_kernels.h"

namespace pointrt::nn {

namespace {

bool is_onnx(const Node& n, const char* op) { return n.domain.empty() && n.op_type == op && !n.removed; }
bool is_fused_conv(const Node& n) { return n.domain == kInternalDomain && n.op_type == "FusedConv" && !n.removed; }
bool is_conv_like(const Node& n) { return is_onnx(n, "Conv") || is_fused_conv(n); }

const Tensor* constant_f32(const Graph& g, int v) {
  if (v < 0 || !g.values[v].constant) return nullptr;
  const Tensor& t = *g.values[v].constant;
  return t.dtype() == DType::kFloat32 ? &t : nullptr;
}

void set_int(Node& n, const char* name, int64_t v) {
  n.attrs.items[name].kind = Attribute::Kind::kInt;
  n.attrs.items[name].i = v;
}

void make_fused(Node& n) {
  if (is_fused_conv(n)) return;
  n.op_type = "FusedConv";
  n.domain = kInternalDomain;
  n.opset = 1;
}

// Step 1.
bool fold_batch_norms(Graph& g) {
  bool changed = false;
  ValueReaders u = value_readers(g);
  for (size_t ci = 0; ci < g.nodes.size(); ++ci) {
    Node& conv = g.nodes[ci];
    if (!is_conv_like(conv) || conv.outputs.size() != 1 || conv.inputs.size() > 3) continue;
    if (conv.attrs.get_int(kAttrPostRelu, 0) || conv.attrs.get_int(kAttrSumInput, 0)) continue;
    int y = conv.outputs[0];
    if (u.sole_reader(y) < 0) continue;
    Node& bn = g.nodes[u.of(y)[0].node];
    if (!is_onnx(bn, "BatchNormalization") || u.of(y)[0].input != 0 || bn.inputs.size() < 5) continue;
    if (batch_norm_trains(bn.attrs, bn.opset)) continue;  // batch statistics: nothing to fold
    if (bn.opset < 9 && bn.attrs.get_int("spatial", 1) == 0) continue;
    bool extra_outputs = false;
    for (size_t k = 1; k < bn.outputs.size(); ++k)
      if (bn.outputs[k] >= 0 && (!u.of(bn.outputs[k]).empty() || u.graph_output[bn.outputs[k]])) extra_outputs = true;
    if (extra_outputs) continue;
    const Tensor* w = constant_f32(g, conv.inputs[1]);
    const Tensor* b = conv.inputs.size() > 2 ? constant_f32(g, conv.inputs[2]) : nullptr;
    bool has_b = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    if (!w || w->rank() < 3 || (has_b && !b)) continue;
    int64_t m = w->dim(0);
    const Tensor *scale = constant_f32(g, bn.inputs[1]), *beta = constant_f32(g, bn.inputs[2]),
                 *mean = constant_f32(g, bn.inputs[3]), *var = constant_f32(g, bn.inputs[4]);
    if (!scale || !beta || !mean || !var) continue;
    if (scale->numel() != m || beta->numel() != m || mean->numel() != m || var->numel() != m || (b && b->numel() != m))
      continue;
    float eps = bn.attrs.get_float("epsilon", 1e-5f);
    Tensor w2 = w->clone();
    Tensor b2 = Tensor::allocate(DType::kFloat32, {m});
    int64_t per = w->numel() / std::max<int64_t>(m, 1);
    for (int64_t c = 0; c < m; ++c) {
      float s = scale->data_as<float>()[c] / std::sqrt(var->data_as<float>()[c] + eps);
      float* wc = w2.data_as<float>() + c * per;
      for (int64_t i = 0; i < per; ++i) wc[i] *= s;
      float b0 = b ? b->data_as<float>()[c] : 0.f;
      b2.data_as<float>()[c] = (b0 - mean->data_as<float>()[c]) * s + beta->data_as<float>()[c];
    }
    int wid = add_constant(g, conv.name + "_W_bn", w2);
    int bid = add_constant(g, conv.name + "_B_bn", b2);
    Node& conv2 = g.nodes[ci];  // add_value does not move nodes, but stay explicit
    make_fused(conv2);
    conv2.inputs = {conv2.inputs[0], wid, bid};
    conv2.outputs = {bn.outputs[0]};
    g.values[bn.outputs[0]].producer = static_cast<int>(ci);
    bn.removed = true;
    changed = true;
    u = value_readers(g);
  }
  return changed;
}

bool same_shape(const Value& a, const Value& b) {
  if (!a.has_shape || !b.has_shape || a.shape.size() != b.shape.size()) return false;
  for (size_t i = 0; i < a.shape.size(); ++i) {
    const Dim &x = a.shape[i], &y = b.shape[i];
    if (x.is_fixed() != y.is_fixed()) return false;
    if (x.is_fixed() ? x.value != y.value : (x.symbol.empty() || x.symbol != y.symbol)) return false;
  }
  return true;
}

bool allocates_fresh_output(const Node& n) {
  return is_conv_like(n) || is_onnx(n, "MaxPool") || is_onnx(n, "AveragePool");
}

// Step 2.
bool fuse_residual_adds(Graph& g) {
  bool changed = false;
  ValueReaders u = value_readers(g);
  for (size_t ai = 0; ai < g.nodes.size(); ++ai) {
    Node& add = g.nodes[ai];
    if (!is_onnx(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1 || add.opset < 7) continue;
    int best = -1, best_other = -1;
    for (int k = 0; k < 2; ++k) {
      int c = add.inputs[k], o = add.inputs[1 - k];
      if (c < 0 || o < 0 || c == o) continue;
      int p = g.values[c].producer;
      if (p < 0 || !is_conv_like(g.nodes[p]) || g.nodes[p].outputs.size() != 1 || g.nodes[p].inputs.size() > 3)
        continue;
      const Node& conv = g.nodes[p];
      if (conv.attrs.get_int(kAttrPostRelu, 0) || conv.attrs.get_int(kAttrSumInput, 0)) continue;
      if (u.sole_reader(c) < 0 || !same_shape(g.values[c], g.values[o])) continue;
      if (g.values[c].dtype != DType::kFloat32 || g.values[o].dtype != DType::kFloat32) continue;
      int op = g.values[o].producer;
      if (op >= p) continue;  // `other` must exist before the conv runs
      if (p > best) {
        best = p;
        best_other = o;
      }
    }
    if (best < 0) continue;
    Node& conv = g.nodes[best];
    make_fused(conv);
    while (conv.inputs.size() < 3) conv.inputs.push_back(-1);
    conv.inputs.push_back(best_other);
    conv.attrs.items[kAttrSumInput].kind = Attribute::Kind::kInt;
    conv.attrs.items[kAttrSumInput].i = 1;
    int op = g.values[best_other].producer;
    bool in_place = op >= 0 && allocates_fresh_output(g.nodes[op]) && u.sole_reader(best_other) >= 0;
    if (in_place) {
      conv.attrs.items[kAttrSumInPlace].kind = Attribute::Kind::kInt;
      conv.attrs.items[kAttrSumInPlace].i = 1;
    }
    conv.outputs = {add.outputs[0]};
    g.values[add.outputs[0]].producer = best;
    add.removed = true;
    changed = true;
    u = value_readers(g);
  }
  return changed;
}

// Step 3.
bool fuse_relus(Graph& g) {
  bool changed = false;
  ValueReaders u = value_readers(g);
  for (size_t ri = 0; ri < g.nodes.size(); ++ri) {
    Node& relu = g.nodes[ri];
    if (!is_onnx(relu, "Relu") || relu.inputs.size() != 1 || relu.outputs.size() != 1) continue;
    int v = relu.inputs[0];
    int p = v >= 0 ? g.values[v].producer : -1;
    if (p < 0 || !is_conv_like(g.nodes[p]) || u.sole_reader(v) < 0 || g.values[v].dtype != DType::kFloat32) continue;
    Node& conv = g.nodes[p];
    if (conv.attrs.get_int(kAttrPostRelu, 0)) continue;
    make_fused(conv);
    conv.attrs.items[kAttrPostRelu].kind = Attribute::Kind::kInt;
    conv.attrs.items[kAttrPostRelu].i = 1;
    conv.outputs = {relu.outputs[0]};
    g.values[relu.outputs[0]].producer = p;
    relu.removed = true;
    changed = true;
    u = value_readers(g);
  }
  return changed;
}

bool is_window_pool(const Node& n) {
  return (is_onnx(n, "MaxPool") || is_onnx(n, "AveragePool")) && (n.outputs.size() < 2 || n.outputs[1] < 0);
}
bool is_global_pool(const Node& n) { return is_onnx(n, "GlobalAveragePool") || is_onnx(n, "GlobalMaxPool"); }

// A Conv1d with a constant [M, C, 1] kernel, group 1, stride 1, no padding and no fused Add.
bool pointwise_conv_1d(const Graph& g, const Node& conv) {
  if (conv.inputs.size() < 2 || conv.inputs.size() > 3 || conv.attrs.get_int(kAttrSumInput, 0)) return false;
  const Tensor* w = constant_f32(g, conv.inputs[1]);
  if (!w || w->rank() != 3 || w->dim(2) != 1) return false;
  if (conv.inputs.size() == 3 && conv.inputs[2] >= 0 && !constant_f32(g, conv.inputs[2])) return false;
  if (conv.attrs.get_int("group", 1) != 1) return false;
  for (int64_t s : conv.attrs.get_ints("strides", {}))
    if (s != 1) return false;
  for (int64_t p : conv.attrs.get_ints("pads", {}))
    if (p != 0) return false;
  return true;
}

// Step 4.
bool reduce_max_to_global_pool(Graph& g) {
  bool changed = false;
  for (auto& n : g.nodes) {
    if (!is_onnx(n, "ReduceMax") || n.inputs.empty() || n.inputs[0] < 0 || n.outputs.size() != 1) continue;
    if (n.opset < 7 || n.opset > 21) continue;  // GlobalMaxPool's table range at the same opset
    int v = n.inputs[0];
    int p = g.values[v].producer;
    if (p < 0 || !is_conv_like(g.nodes[p])) continue;
    const Value& x = g.values[v];
    if (x.dtype != DType::kFloat32 || !x.has_shape || x.shape.size() < 3 || x.shape.size() > 5) continue;
    int64_t rank = static_cast<int64_t>(x.shape.size());
    std::vector<int64_t> axes;
    if (n.opset < 18) {
      if (!n.attrs.has("axes")) continue;  // all axes
      axes = n.attrs.get_ints("axes");
    } else {
      if (n.inputs.size() < 2 || n.inputs[1] < 0 || !g.values[n.inputs[1]].constant) continue;
      const Tensor& a = *g.values[n.inputs[1]].constant;
      if (a.dtype() != DType::kInt64) continue;
      axes.assign(a.data_as<int64_t>(), a.data_as<int64_t>() + a.numel());
    }
    for (auto& a : axes) a = a < 0 ? a + rank : a;
    std::sort(axes.begin(), axes.end());
    std::vector<int64_t> spatial;
    for (int64_t i = 2; i < rank; ++i) spatial.push_back(i);
    if (axes != spatial) continue;
    bool keepdims = n.attrs.get_int("keepdims", 1) != 0;
    changed = true;
    Node& conv = g.nodes[p];
    if (rank == 3 && pointwise_conv_1d(g, conv) && value_readers(g).sole_reader(v) >= 0) {
      // Fold the max into the conv itself: it then runs over chunks of points and never
      // writes the [N, M, points] tensor.
      make_fused(conv);
      set_int(conv, kAttrGlobalMax, 1);
      if (!keepdims) set_int(conv, kAttrSqueeze, 1);
      conv.outputs = {n.outputs[0]};
      g.values[n.outputs[0]].producer = p;
      n.removed = true;
      continue;
    }
    n.op_type = "GlobalMaxPool";
    n.inputs = {v};
    n.attrs.items.clear();
    if (!keepdims) set_int(n, kAttrSqueeze, 1);
  }
  return changed;
}

// Step 5.
bool choose_blocked_edges(Graph& g) {
  ValueReaders u = value_readers(g);
  std::vector<char> blocked(g.values.size(), 0);
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    int p = val.producer;
    if (p < 0 || u.graph_output[v] || val.constant || u.of(v).empty()) continue;
    const Node& n = g.nodes[p];
    if (n.removed || n.outputs.empty() || n.outputs[0] != static_cast<int>(v)) continue;
    if (!is_conv_like(n) && !is_window_pool(n)) continue;
    if (val.dtype != DType::kFloat32 || !val.has_shape) continue;
    size_t rank = val.shape.size();
    int64_t channels = rank >= 2 && val.shape[1].is_fixed() ? val.shape[1].value : -1;
    if (channels < 0 && is_conv_like(n) && n.inputs.size() > 1 && n.inputs[1] >= 0 && g.values[n.inputs[1]].constant)
      channels = g.values[n.inputs[1]].constant->dim(0);
    if (!blockable(rank, channels)) continue;
    blocked[v] = 1;
  }
  // Drop edges until every reader and producer constraint holds.
  for (bool again = true; again;) {
    again = false;
    for (size_t v = 0; v < g.values.size(); ++v) {
      if (!blocked[v]) continue;
      bool ok = true;
      for (auto [ni, k] : u.of(v)) {
        const Node& q = g.nodes[ni];
        int out = q.outputs.empty() ? -1 : q.outputs[0];
        if (is_conv_like(q) && k == 0) continue;
        if (is_fused_conv(q) && k == 3 && out >= 0 && blocked[out]) continue;
        if (is_window_pool(q) && k == 0 && out >= 0 && blocked[out]) continue;
        if (is_global_pool(q) && k == 0) continue;
        ok = false;
        break;
      }
      const Node& p = g.nodes[g.values[v].producer];
      if (ok && is_window_pool(p) && !(p.inputs[0] >= 0 && blocked[p.inputs[0]])) ok = false;
      if (ok && is_fused_conv(p) && p.attrs.get_int(kAttrSumInput, 0) && !(p.inputs[3] >= 0 && blocked[p.inputs[3]]))
        ok = false;
      if (!ok) {
        blocked[v] = 0;
        again = true;
      }
    }
  }
  bool changed = false;
  for (auto& n : g.nodes) {
    if (n.removed) continue;
    bool reader = is_conv_like(n) || is_window_pool(n) || is_global_pool(n);
    if (!reader) continue;
    if (!n.inputs.empty() && n.inputs[0] >= 0 && blocked[n.inputs[0]]) {
      set_int(n, kAttrSrcBlocked, 1);
      changed = true;
    }
    if (!n.outputs.empty() && n.outputs[0] >= 0 && blocked[n.outputs[0]]) {
      set_int(n, kAttrDstBlocked, 1);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

int add_constant(Graph& g, const std::string& base, const Tensor& t) {
  std::string name = base;
  for (int i = 1; g.find_value(name) >= 0; ++i) name = str_cat(base, "_", i);
  int id = g.add_value(name);
  Value& v = g.values[id];
  v.dtype = t.dtype();
  v.has_shape = true;
  for (int64_t d : t.shape()) v.shape.push_back(Dim{d, ""});
  v.constant = t;
  return id;
}

bool fuse_conv_batchnorm_relu(Graph& g) {
  bool changed = fold_batch_norms(g);
  changed = fuse_residual_adds(g) || changed;
  changed = fuse_relus(g) || changed;
  changed = reduce_max_to_global_pool(g) || changed;
  changed = choose_blocked_edges(g) || changed;
  return changed;
}

}  // namespace pointrt::nn
