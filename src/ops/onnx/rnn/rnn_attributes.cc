// RNN/GRU/LSTM attribute decoding and the per-run input checks (the contract is in rnn.h).
#include <cctype>
#include <map>

#include "ops/onnx/rnn/rnn.h"

namespace pointrt::rnn {

int gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
int activation_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }
const char* cell_name(Cell cell) { return cell == Cell::kRnn ? "RNN" : cell == Cell::kGru ? "GRU" : "LSTM"; }

namespace {

struct ActivationSpec {
  ActivationKind kind;
  bool takes_alpha, takes_beta;
  float default_alpha, default_beta;
};

const std::map<std::string, ActivationSpec>& activation_specs() {
  static const std::map<std::string, ActivationSpec> specs = {
      {"relu", {ActivationKind::kRelu, false, false, 0, 0}},
      {"tanh", {ActivationKind::kTanh, false, false, 0, 0}},
      {"sigmoid", {ActivationKind::kSigmoid, false, false, 0, 0}},
      {"affine", {ActivationKind::kAffine, true, true, 1.0f, 0.0f}},
      {"leakyrelu", {ActivationKind::kLeakyRelu, true, false, 0.01f, 0}},
      {"thresholdedrelu", {ActivationKind::kThresholdedRelu, true, false, 1.0f, 0}},
      {"scaledtanh", {ActivationKind::kScaledTanh, true, true, 1.0f, 1.0f}},
      {"hardsigmoid", {ActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f}},
      {"elu", {ActivationKind::kElu, true, false, 1.0f, 0}},
      {"softsign", {ActivationKind::kSoftsign, false, false, 0, 0}},
      {"softplus", {ActivationKind::kSoftplus, false, false, 0, 0}},
  };
  return specs;
}

std::vector<std::string> default_activation_names(Cell cell) {
  if (cell == Cell::kRnn) return {"Tanh"};
  if (cell == Cell::kGru) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

std::vector<Activation> parse_activations(const Attributes& attrs, const std::string& where, Cell cell, int dirs) {
  const size_t per_dir = static_cast<size_t>(activation_count(cell));
  std::vector<std::string> names =
      attrs.has("activations") ? attrs.get_strings("activations") : default_activation_names(cell);
  if (names.size() == per_dir && dirs == 2) {
    const std::vector<std::string> forward = names;
    names.insert(names.end(), forward.begin(), forward.end());
  }
  if (names.size() != per_dir * dirs)
    fail(where, ": attribute 'activations' has ", names.size(), " functions; ", cell_name(cell), " with ", dirs,
         " direction(s) takes ", per_dir * dirs);
  const std::vector<float> alphas = attrs.get_floats("activation_alpha", {});
  const std::vector<float> betas = attrs.get_floats("activation_beta", {});
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> result;
  for (const std::string& name : names) {
    std::string key;
    for (char c : name) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto it = activation_specs().find(key);
    if (it == activation_specs().end())
      fail(where, ": activation '", name,
           "' is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, "
           "Softsign, Softplus");
    const ActivationSpec& s = it->second;
    Activation act;
    act.kind = s.kind;
    act.alpha = s.default_alpha;
    act.beta = s.default_beta;
    if (s.takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (s.takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    result.push_back(act);
  }
  return result;
}

}  // namespace

bool RnnAttributes::default_activations() const {
  for (int d = 0; d < num_directions(); ++d)
    for (int k = 0; k < activation_count(cell); ++k) {
      const bool sigmoid = cell != Cell::kRnn && k == 0;
      if (activation(d, k).kind != (sigmoid ? ActivationKind::kSigmoid : ActivationKind::kTanh)) return false;
    }
  return true;
}

RnnAttributes parse_rnn_attributes(const Attributes& attrs, const std::string& where, Cell cell) {
  RnnAttributes a;
  a.cell = cell;
  const std::string dir = attrs.get_string("direction", "forward");
  if (dir == "forward")
    a.direction = Direction::kForward;
  else if (dir == "reverse")
    a.direction = Direction::kReverse;
  else if (dir == "bidirectional")
    a.direction = Direction::kBidirectional;
  else
    fail(where, ": attribute 'direction' is '", dir, "'; expected forward, reverse or bidirectional");
  a.hidden_size = attrs.get_int("hidden_size", -1);
  if (attrs.has("hidden_size") && a.hidden_size <= 0)
    fail(where, ": attribute 'hidden_size' must be positive, got ", a.hidden_size);
  a.activations = parse_activations(attrs, where, cell, a.num_directions());
  a.has_clip = attrs.has("clip");
  a.clip = attrs.get_float("clip", 0.0f);
  if (a.has_clip && !(a.clip > 0.0f)) fail(where, ": attribute 'clip' must be positive, got ", a.clip);
  a.input_forget = cell == Cell::kLstm && attrs.get_int("input_forget", 0) != 0;
  a.linear_before_reset = cell == Cell::kGru && attrs.get_int("linear_before_reset", 0) != 0;
  a.layout = attrs.get_int("layout", 0);
  if (a.layout != 0 && a.layout != 1) fail(where, ": attribute 'layout' must be 0 or 1, got ", a.layout);
  return a;
}

namespace {

void expect_shape(KernelContext& ctx, const char* role, const Tensor& t, const Shape& want, DType dtype) {
  if (t.dtype() != dtype)
    fail(ctx.where(), ": input ", role, " has element type ", dtype_name(t.dtype()), "; expected ", dtype_name(dtype));
  if (t.shape() != want)
    fail(ctx.where(), ": input ", role, " has shape ", shape_to_string(t.shape()), "; expected ",
         shape_to_string(want));
}

const Tensor* optional_input(KernelContext& ctx, size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; }

}  // namespace

RnnDims bind_rnn_run(KernelContext& ctx, const RnnAttributes& a, RnnTensors& io) {
  io.x = &ctx.input(0);
  io.w = &ctx.input(1);
  io.r = &ctx.input(2);
  io.b = optional_input(ctx, 3);
  io.seq_lens = optional_input(ctx, 4);
  io.h0 = optional_input(ctx, 5);
  const bool lstm = a.cell == Cell::kLstm;
  io.c0 = lstm ? optional_input(ctx, 6) : nullptr;
  io.p = lstm ? optional_input(ctx, 7) : nullptr;
  const Tensor& x = *io.x;
  const DType dt = x.dtype();
  if (dt != DType::kFloat32 && dt != DType::kFloat64)
    fail(ctx.where(), ": input X has element type ", dtype_name(dt), "; expected float or double");
  if (x.rank() != 3) fail(ctx.where(), ": input X must be 3-D, got shape ", shape_to_string(x.shape()));
  RnnDims d;
  d.seq = x.dim(a.layout == 0 ? 0 : 1);
  d.batch = x.dim(a.layout == 0 ? 1 : 0);
  d.input = x.dim(2);
  d.dirs = a.num_directions();
  if (io.r->rank() != 3) fail(ctx.where(), ": input R must be 3-D, got shape ", shape_to_string(io.r->shape()));
  d.hidden = a.hidden_size > 0 ? a.hidden_size : io.r->dim(2);
  const int64_t G = gate_count(a.cell), H = d.hidden, D = d.dirs;
  expect_shape(ctx, "W", *io.w, {D, G * H, d.input}, dt);
  expect_shape(ctx, "R", *io.r, {D, G * H, H}, dt);
  if (io.b) expect_shape(ctx, "B", *io.b, {D, 2 * G * H}, dt);
  if (io.seq_lens) {
    expect_shape(ctx, "sequence_lens", *io.seq_lens, {d.batch}, DType::kInt32);
    const int32_t* lens = io.seq_lens->data_as<int32_t>();
    for (int64_t n = 0; n < d.batch; ++n)
      if (lens[n] < 0 || lens[n] > d.seq)
        fail(ctx.where(), ": input sequence_lens[", n, "] = ", lens[n], " is outside [0, ", d.seq, "] (T)");
  }
  const Shape state = a.layout == 0 ? Shape{D, d.batch, H} : Shape{d.batch, D, H};
  if (io.h0) expect_shape(ctx, "initial_h", *io.h0, state, dt);
  if (io.c0) expect_shape(ctx, "initial_c", *io.c0, state, dt);
  if (io.p) expect_shape(ctx, "P", *io.p, {D, 3 * H}, dt);
  const Shape y = a.layout == 0 ? Shape{d.seq, D, d.batch, H} : Shape{d.batch, d.seq, D, H};
  const size_t outs = ctx.num_outputs();
  auto wanted = [&](size_t i) { return i < outs && ctx.node().outputs[i] >= 0; };
  io.y = wanted(0) ? &ctx.output(0, dt, y) : nullptr;
  io.y_h = wanted(1) ? &ctx.output(1, dt, state) : nullptr;
  io.y_c = lstm && wanted(2) ? &ctx.output(2, dt, state) : nullptr;
  return d;
}

}  // namespace pointrt::rnn
