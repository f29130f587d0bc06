// RNN/GRU/LSTM on oneDNN's recurrent primitives (see rnn_dnnl.h).
//
// Layouts: ONNX W/R are [D, G*H, K] with gates in ONNX order; oneDNN wants ldigo
// [1, D, K, G, H] with LSTM gates in order i f c o (ONNX i o f c; GRU z r h and RNN match), one
// bias per gate (Wb + Rb) in ldgo (linear-before-reset GRU: z, r, Wbh, Rbh) and LSTM peepholes
// in order i f o (ONNX i o f). X, Y and the states map onto tnc/ntc and ldnc directly except Y
// of a bidirectional layout-0 node ([T, N, 2H] in oneDNN, [T, 2, N, H] in ONNX) and the states of
// layout 1 ([N, D, H]), which are copied.
#include "ops/onnx/rnn/rnn_dnnl.h"

#include <cstring>

#include "ops/onnx/nn/dnnl_common.h"

namespace pointrt::rnn {

using dnnl::memory;
using Tag = memory::format_tag;

struct DnnlRnn::Weights {
  std::vector<float> layer, iter, bias, peephole;  // ldigo, ldigo, ldgo, ldgo
};

struct DnnlRnn::Plan {
  dnnl::rnn_primitive_desc_base pd;
  dnnl::primitive prim;
  memory packed_layer, packed_iter;  // from constant weights; empty otherwise
};

namespace {

// ONNX gate index of oneDNN gate g.
int onnx_gate(Cell cell, int g) {
  static const int lstm[4] = {0, 2, 3, 1};
  return cell == Cell::kLstm ? lstm[g] : g;
}

DnnlRnn::Weights convert_weights(const RnnAttributes& a, const Tensor& w, const Tensor& r, const Tensor* b,
                                 const Tensor* p) {
  const int64_t D = w.dim(0), G = gate_count(a.cell), H = r.dim(2), I = w.dim(2);
  DnnlRnn::Weights out;
  auto ldigo = [&](const float* src, int64_t K, std::vector<float>& dst) {
    dst.resize(D * K * G * H);
    for (int64_t d = 0; d < D; ++d)
      for (int64_t k = 0; k < K; ++k)
        for (int64_t g = 0; g < G; ++g)
          for (int64_t h = 0; h < H; ++h)
            dst[((d * K + k) * G + g) * H + h] = src[(d * G * H + onnx_gate(a.cell, g) * H + h) * K + k];
  };
  ldigo(w.data_as<float>(), I, out.layer);
  ldigo(r.data_as<float>(), H, out.iter);
  const bool lbr = a.cell == Cell::kGru && a.linear_before_reset;
  const int64_t GB = lbr ? 4 : G;
  out.bias.assign(D * GB * H, 0.0f);
  if (b)
    for (int64_t d = 0; d < D; ++d) {
      const float* wb = b->data_as<float>() + d * 2 * G * H;
      const float* rb = wb + G * H;
      for (int64_t g = 0; g < G; ++g)
        for (int64_t h = 0; h < H; ++h) {
          const int64_t j = onnx_gate(a.cell, g) * H + h;
          out.bias[(d * GB + g) * H + h] = lbr && g == 2 ? wb[j] : wb[j] + rb[j];
        }
      if (lbr)
        for (int64_t h = 0; h < H; ++h) out.bias[(d * GB + 3) * H + h] = rb[2 * H + h];
    }
  if (p) {
    static const int order[3] = {0, 2, 1};  // oneDNN i f o <- ONNX i o f
    out.peephole.resize(D * 3 * H);
    for (int64_t d = 0; d < D; ++d)
      for (int g = 0; g < 3; ++g)
        std::memcpy(&out.peephole[(d * 3 + g) * H], p->data_as<float>() + (d * 3 + order[g]) * H, H * sizeof(float));
  }
  return out;
}

memory::desc f32(const memory::dims& dims, Tag tag) { return memory::desc(dims, memory::data_type::f32, tag); }

// [N, D, H] <-> [D, N, H] (layout 1 states against oneDNN's ldnc).
void swap_leading(const float* src, float* dst, int64_t A, int64_t B, int64_t H) {
  for (int64_t i = 0; i < A; ++i)
    for (int64_t j = 0; j < B; ++j) std::memcpy(dst + (j * A + i) * H, src + (i * B + j) * H, H * sizeof(float));
}

}  // namespace

DnnlRnn::~DnnlRnn() = default;

std::unique_ptr<DnnlRnn> DnnlRnn::create(const KernelInit& init, const RnnAttributes& a) {
  if (a.has_clip || a.input_forget) return nullptr;
  std::unique_ptr<DnnlRnn> r(new DnnlRnn());
  r->attrs_ = a;
  if (a.cell == Cell::kRnn) {
    const Activation& f = a.activation(0, 0);
    if (a.num_directions() == 2 && (a.activation(1, 0).kind != f.kind || a.activation(1, 0).alpha != f.alpha))
      return nullptr;
    switch (f.kind) {
      case ActivationKind::kTanh: r->algorithm_ = static_cast<int>(dnnl::algorithm::eltwise_tanh); break;
      case ActivationKind::kSigmoid: r->algorithm_ = static_cast<int>(dnnl::algorithm::eltwise_logistic); break;
      case ActivationKind::kRelu: r->algorithm_ = static_cast<int>(dnnl::algorithm::eltwise_relu); break;
      case ActivationKind::kLeakyRelu:
        r->algorithm_ = static_cast<int>(dnnl::algorithm::eltwise_relu);
        r->relu_alpha_ = f.alpha;
        break;
      default: return nullptr;
    }
  } else if (!a.default_activations()) {
    return nullptr;
  }
  const Value* x = init.input_value(0);
  if (x && x->dtype != DType::kUndefined && x->dtype != DType::kFloat32) return nullptr;
  const bool lstm = a.cell == Cell::kLstm;
  r->peepholes_ = lstm && init.has_input(7);
  // oneDNN takes an LSTM's two initial (and two final) states together or not at all.
  r->has_h0_ = init.has_input(5) || (lstm && init.has_input(6));
  r->has_c0_ = lstm && r->has_h0_;
  auto wanted = [&](size_t i) { return i < init.node.outputs.size() && init.node.outputs[i] >= 0; };
  r->want_y_h_ = wanted(1) || (lstm && wanted(2));
  r->want_y_c_ = lstm && r->want_y_h_;
  const Tensor *w = init.constant_input(1), *rw = init.constant_input(2);
  const Tensor *b = init.constant_input(3), *p = init.constant_input(7);
  const bool constant = w && rw && (b || !init.has_input(3)) && (p || !r->peepholes_);
  if (constant && w->dtype() == DType::kFloat32 && w->rank() == 3 && rw->rank() == 3 &&
      rw->dim(1) == gate_count(a.cell) * rw->dim(2) && w->dim(1) == rw->dim(1) && w->dim(0) == a.num_directions() &&
      rw->dim(0) == w->dim(0) && (a.hidden_size < 0 || a.hidden_size == rw->dim(2)) &&
      (!b || b->shape() == Shape{w->dim(0), 2 * w->dim(1)}) && (!p || p->shape() == Shape{w->dim(0), 3 * rw->dim(2)}))
    r->constant_ = std::make_unique<Weights>(convert_weights(a, *w, *rw, b, r->peepholes_ ? p : nullptr));
  return r;
}

std::shared_ptr<DnnlRnn::Plan> DnnlRnn::make_plan(const RnnDims& d) const {
  const memory::dim T = d.seq, N = d.batch, I = d.input, H = d.hidden, D = d.dirs;
  const memory::dim G = gate_count(attrs_.cell), GB = attrs_.linear_before_reset ? 4 : G;
  const Tag seq_tag = attrs_.layout == 0 ? Tag::tnc : Tag::ntc;
  const memory::desc src_layer = f32({T, N, I}, seq_tag), dst_layer = f32({T, N, D * H}, seq_tag);
  const memory::desc state = f32({1, D, N, H}, Tag::ldnc), none;
  const memory::desc w_layer = f32({1, D, I, G, H}, Tag::any), w_iter = f32({1, D, H, G, H}, Tag::any);
  const memory::desc bias = f32({1, D, GB, H}, Tag::ldgo);
  const memory::desc h0 = has_h0_ ? state : none, yh = want_y_h_ ? state : none;
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto dir = attrs_.direction == Direction::kForward   ? dnnl::rnn_direction::unidirectional_left2right
                   : attrs_.direction == Direction::kReverse ? dnnl::rnn_direction::unidirectional_right2left
                                                             : dnnl::rnn_direction::bidirectional_concat;
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto& eng = nn::cpu_engine();
  auto plan = std::make_shared<Plan>();
  if (attrs_.cell == Cell::kLstm) {
    const memory::desc c0 = has_c0_ ? state : none, yc = want_y_c_ ? state : none;
    const memory::desc peep = peepholes_ ? f32({1, D, 3, H}, Tag::ldgo) : none;
    dnnl::lstm_forward::primitive_desc pd(
        dnnl::lstm_forward::desc(prop, dir, src_layer, h0, c0, w_layer, w_iter, peep, bias, dst_layer, yh, yc), attr,
        eng);
    plan->pd = pd;
    plan->prim = dnnl::lstm_forward(pd);
  } else if (attrs_.cell == Cell::kGru && attrs_.linear_before_reset) {
    dnnl::lbr_gru_forward::primitive_desc pd(
        dnnl::lbr_gru_forward::desc(prop, dir, src_layer, h0, w_layer, w_iter, bias, dst_layer, yh), attr, eng);
    plan->pd = pd;
    plan->prim = dnnl::lbr_gru_forward(pd);
  } else if (attrs_.cell == Cell::kGru) {
    dnnl::gru_forward::primitive_desc pd(
        dnnl::gru_forward::desc(prop, dir, src_layer, h0, w_layer, w_iter, bias, dst_layer, yh), attr, eng);
    plan->pd = pd;
    plan->prim = dnnl::gru_forward(pd);
  } else {
    dnnl::vanilla_rnn_forward::primitive_desc pd(
        dnnl::vanilla_rnn_forward::desc(prop, static_cast<dnnl::algorithm>(algorithm_), dir, src_layer, h0, w_layer,
                                        w_iter, bias, dst_layer, yh, dnnl::rnn_flags::undef, relu_alpha_),
        attr, eng);
    plan->pd = pd;
    plan->prim = dnnl::vanilla_rnn_forward(pd);
  }
  if (constant_) {
    plan->packed_layer = memory(plan->pd.weights_layer_desc(), eng);
    plan->packed_iter = memory(plan->pd.weights_iter_desc(), eng);
    nn::reorder_memory(f32({1, D, I, G, H}, Tag::ldigo), constant_->layer.data(), plan->packed_layer.get_desc(),
                       plan->packed_layer.get_data_handle());
    nn::reorder_memory(f32({1, D, H, G, H}, Tag::ldigo), constant_->iter.data(), plan->packed_iter.get_desc(),
                       plan->packed_iter.get_data_handle());
  }
  return plan;
}

std::shared_ptr<DnnlRnn::Plan> DnnlRnn::plan_for(const RnnDims& d) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Shape key = nn::plan_key({d.seq, d.batch, d.input, d.hidden});
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  std::shared_ptr<Plan> plan;
  try {
    plan = make_plan(d);
  } catch (const dnnl::error&) {
    plan = nullptr;  // oneDNN declines these sizes: the GEMM kernel serves them (remembered)
  }
  plans_[key] = plan;
  return plan;
}

bool DnnlRnn::run(KernelContext& ctx, const RnnDims& d, const RnnTensors& io) const {
  if (io.x->dtype() != DType::kFloat32 || d.seq == 0 || d.batch == 0 || d.input == 0) return false;
  if (io.seq_lens)
    for (int64_t n = 0; n < d.batch; ++n)
      if (io.seq_lens->data_as<int32_t>()[n] != d.seq) return false;
  std::shared_ptr<Plan> plan = plan_for(d);
  if (!plan) return false;
  const auto& eng = nn::cpu_engine();
  const int64_t T = d.seq, N = d.batch, H = d.hidden, D = d.dirs;
  Weights per_run;
  const Weights* w = constant_.get();
  if (!w) {
    per_run = convert_weights(attrs_, *io.w, *io.r, io.b, io.p);
    w = &per_run;
  }
  std::unordered_map<int, memory> args;
  Tensor holders[8];
  auto bind = [&](int arg, const memory::desc& md, const void* p) {
    args[arg] = memory(md, eng, const_cast<void*>(p));
  };
  bind(DNNL_ARG_SRC_LAYER, plan->pd.src_layer_desc(), io.x->data());
  // Layout-1 states are [N, D, H]: copied to and from oneDNN's [1, D, N, H].
  // An absent state that oneDNN still takes (an LSTM given only one of initial_h/initial_c) is 0.
  auto state_in = [&](int arg, bool bound, const Tensor* t, Tensor& holder) {
    if (!bound) return;
    if (t && attrs_.layout == 0) return bind(arg, plan->pd.src_iter_desc(), t->data());
    float* s = float_scratch(ctx, holder, D * N * H);
    if (t)
      swap_leading(t->data_as<float>(), s, N, D, H);
    else
      std::fill(s, s + D * N * H, 0.0f);
    bind(arg, plan->pd.src_iter_desc(), s);
  };
  state_in(DNNL_ARG_SRC_ITER, has_h0_, io.h0, holders[0]);
  state_in(DNNL_ARG_SRC_ITER_C, has_c0_, io.c0, holders[1]);
  if (constant_) {
    args[DNNL_ARG_WEIGHTS_LAYER] = plan->packed_layer;
    args[DNNL_ARG_WEIGHTS_ITER] = plan->packed_iter;
  } else {
    const memory::desc wl = plan->pd.weights_layer_desc(), wi = plan->pd.weights_iter_desc();
    const int64_t G = gate_count(attrs_.cell), I = d.input;
    float* pl = float_scratch(ctx, holders[2], static_cast<int64_t>(wl.get_size() / sizeof(float)) + 1);
    float* pi = float_scratch(ctx, holders[3], static_cast<int64_t>(wi.get_size() / sizeof(float)) + 1);
    nn::reorder_memory(f32({1, D, I, G, H}, Tag::ldigo), w->layer.data(), wl, pl);
    nn::reorder_memory(f32({1, D, H, G, H}, Tag::ldigo), w->iter.data(), wi, pi);
    bind(DNNL_ARG_WEIGHTS_LAYER, wl, pl);
    bind(DNNL_ARG_WEIGHTS_ITER, wi, pi);
  }
  bind(DNNL_ARG_BIAS, plan->pd.bias_desc(), w->bias.data());
  if (peepholes_) bind(DNNL_ARG_WEIGHTS_PEEPHOLE, plan->pd.weights_peephole_desc(), w->peephole.data());
  const bool y_direct = io.y && (attrs_.layout == 1 || D == 1);
  float* y = y_direct ? io.y->data_as<float>() : float_scratch(ctx, holders[4], T * N * D * H);
  bind(DNNL_ARG_DST_LAYER, plan->pd.dst_layer_desc(), y);
  // Final states oneDNN writes but the node does not want go to scratch.
  auto state_out = [&](int arg, bool bound, Tensor* t, Tensor& holder) -> float* {
    if (!bound) return nullptr;
    float* s = t && attrs_.layout == 0 ? t->data_as<float>() : float_scratch(ctx, holder, D * N * H);
    bind(arg, plan->pd.dst_iter_desc(), s);
    return s;
  };
  float* yh = state_out(DNNL_ARG_DST_ITER, want_y_h_, io.y_h, holders[5]);
  float* yc = state_out(DNNL_ARG_DST_ITER_C, want_y_c_, io.y_c, holders[6]);
  nn::RunBuffers buffers(ctx);
  nn::execute_with_scratchpad(plan->prim, plan->pd, args, buffers);
  if (io.y && !y_direct)  // [T, N, 2H] -> [T, 2, N, H]
    for (int64_t t = 0; t < T; ++t)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t dir = 0; dir < D; ++dir)
          std::memcpy(io.y->data_as<float>() + ((t * D + dir) * N + n) * H, y + ((t * N + n) * D + dir) * H,
                      H * sizeof(float));
  if (attrs_.layout == 1) {
    if (yh && io.y_h) swap_leading(yh, io.y_h->data_as<float>(), D, N, H);
    if (yc && io.y_c) swap_leading(yc, io.y_c->data_as<float>(), D, N, H);
  }
  return true;
}

std::string DnnlRnn::impl_name(const RnnDims& d) const {
  std::shared_ptr<Plan> plan = plan_for(d);
  return plan ? plan->pd.impl_info_str() : "declined";
}

}  // namespace pointrt::rnn
