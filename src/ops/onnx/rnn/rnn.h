// RNN, GRU and LSTM (ai.onnx opsets 1-21): one-layer recurrent networks, the contract shared by
// the reference kernel (rnn_ref.cc, the oracle), the GEMM-based kernel (rnn.cc) and the oneDNN
// primitive path (rnn_dnnl.cc).
//
// Inputs (G = gates: RNN 1, GRU 3 in order z r h, LSTM 4 in order i o f c; D = 2 when
// direction = "bidirectional", else 1):
//   0 X             [T, N, I] (layout 0) or [N, T, I] (layout 1)
//   1 W             [D, G*H, I]     input weights
//   2 R             [D, G*H, H]     recurrence weights
//   3 B             [D, 2*G*H]      Wb then Rb; absent = 0
//   4 sequence_lens [N] int32, each in [0, T]; absent = T for every batch row
//   5 initial_h     [D, N, H] (layout 0) or [N, D, H]; absent = 0
//   6 initial_c     LSTM only, like initial_h
//   7 P             LSTM only, [D, 3*H] peepholes in order i o f; absent = 0
// Outputs (each optional):
//   0 Y   [T, D, N, H] (layout 0) or [N, T, D, H]: the hidden state of every step
//   1 Y_h [D, N, H] (layout 0) or [N, D, H]: the last hidden state
//   2 Y_c LSTM only, like Y_h: the last cell state
// Equations (f, g, h the activations; clip(x) bounds x to [-clip, clip] and is applied to every
// activation's input when the attribute is given; biases are Wb + Rb of the gate):
//   RNN:  Ht = f(Xt W^T + Ht-1 R^T + b)
//   GRU:  zt = f(Xt Wz^T + Ht-1 Rz^T + bz), rt = f(Xt Wr^T + Ht-1 Rr^T + br)
//         ht = g(Xt Wh^T + (rt . Ht-1) Rh^T + Rbh + Wbh)          linear_before_reset = 0
//         ht = g(Xt Wh^T + rt . (Ht-1 Rh^T + Rbh) + Wbh)          linear_before_reset != 0
//         Ht = (1 - zt) . ht + zt . Ht-1
//   LSTM: it = f(Xt Wi^T + Ht-1 Ri^T + Pi . Ct-1 + bi)
//         ft = f(Xt Wf^T + Ht-1 Rf^T + Pf . Ct-1 + bf)            (= 1 - it when input_forget)
//         ct = g(Xt Wc^T + Ht-1 Rc^T + bc),  Ct = ft . Ct-1 + it . ct
//         ot = f(Xt Wo^T + Ht-1 Ro^T + Po . Ct + bo),  Ht = ot . h(Ct)
// The reverse direction reads each batch row's own sequence backwards: step s of row n takes time
// sequence_lens[n] - 1 - s. Rules the specification leaves open, as ONNX Runtime does them:
// Y is 0 at times t >= sequence_lens[n]; Y_h/Y_c of a row whose length is 0 are 0; `clip` does not
// bound Ct before h. Activations are named case-insensitively; `activations` lists the functions
// of the forward direction then the reverse one (a list for one direction serves both);
// activation_alpha/activation_beta are consumed in that order by the functions that take them
// (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu); exhausted lists give the
// defaults of the ONNX operators of the same name (LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid
// 0.2/0.5, Elu 1, Affine 1/0, ScaledTanh 1/1). Opset 1's output_sequence is ignored: an output is
// produced when the node names it.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/kernel.h"

namespace pointrt::rnn {

enum class Cell { kRnn, kGru, kLstm };
enum class Direction { kForward, kReverse, kBidirectional };

enum class ActivationKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct Activation {
  ActivationKind kind = ActivationKind::kTanh;
  float alpha = 0, beta = 0;

  template <typename T>
  T operator()(T x) const {
    const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
    switch (kind) {
      case ActivationKind::kRelu: return x > T(0) ? x : T(0);
      case ActivationKind::kTanh: return std::tanh(x);
      case ActivationKind::kSigmoid: return T(1) / (T(1) + std::exp(-x));
      case ActivationKind::kAffine: return a * x + b;
      case ActivationKind::kLeakyRelu: return x >= T(0) ? x : a * x;
      case ActivationKind::kThresholdedRelu: return x >= a ? x : T(0);
      case ActivationKind::kScaledTanh: return a * std::tanh(b * x);
      case ActivationKind::kHardSigmoid: return std::min(std::max(a * x + b, T(0)), T(1));
      case ActivationKind::kElu: return x >= T(0) ? x : a * (std::exp(x) - T(1));
      case ActivationKind::kSoftsign: return x / (T(1) + std::fabs(x));
      case ActivationKind::kSoftplus: return std::log1p(std::exp(-std::fabs(x))) + std::max(x, T(0));
    }
    return x;
  }
};

/// Gates per direction: RNN 1, GRU 3, LSTM 4.
int gate_count(Cell cell);
/// Activation functions per direction: RNN 1 (f), GRU 2 (f, g), LSTM 3 (f, g, h).
int activation_count(Cell cell);
const char* cell_name(Cell cell);

/// The node's attributes, decoded and checked once at prepare time.
struct RnnAttributes {
  Cell cell = Cell::kLstm;
  Direction direction = Direction::kForward;
  int64_t hidden_size = -1;             // -1: taken from R's last dimension
  std::vector<Activation> activations;  // activation_count per direction, forward first
  bool has_clip = false;
  float clip = 0;
  bool input_forget = false;         // LSTM
  bool linear_before_reset = false;  // GRU
  int64_t layout = 0;

  int num_directions() const { return direction == Direction::kBidirectional ? 2 : 1; }
  bool reverse(int d) const { return direction == Direction::kReverse || d == 1; }
  const Activation& activation(int d, int k) const { return activations[d * activation_count(cell) + k]; }
  /// True when every activation is the cell's default (sigmoid/tanh; tanh for RNN).
  bool default_activations() const;
};

RnnAttributes parse_rnn_attributes(const Attributes& attrs, const std::string& where, Cell cell);

/// Sizes of one run, from the checked inputs.
struct RnnDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
};

/// The inputs of one run (nullptr = absent) and its outputs (undefined = not requested).
struct RnnTensors {
  const Tensor *x = nullptr, *w = nullptr, *r = nullptr, *b = nullptr, *seq_lens = nullptr, *h0 = nullptr,
               *c0 = nullptr, *p = nullptr;
  Tensor *y = nullptr, *y_h = nullptr, *y_c = nullptr;
};

/// Reads the inputs from `ctx`, checks every shape and dtype (and that each sequence length is in
/// [0, T]) with an error naming the node and the input, allocates the requested outputs.
RnnDims bind_rnn_run(KernelContext& ctx, const RnnAttributes& a, RnnTensors& io);

/// A float buffer of `count` elements for this run (from the run's allocator; lives as long as
/// `holder`).
inline float* float_scratch(KernelContext& ctx, Tensor& holder, int64_t count) {
  holder = ctx.temporary(static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float));
  return holder.data_as<float>();
}

/// Length of batch row n (T when sequence_lens is absent).
inline int64_t row_length(const RnnTensors& io, const RnnDims& d, int64_t n) {
  return io.seq_lens ? io.seq_lens->data_as<int32_t>()[n] : d.seq;
}

/// Element offsets of X(t, n, :), Y(t, dir, n, :) and a state tensor (initial_h, Y_h, ...) (dir, n, :).
inline int64_t x_offset(const RnnDims& d, int64_t layout, int64_t t, int64_t n) {
  return (layout == 0 ? t * d.batch + n : n * d.seq + t) * d.input;
}
inline int64_t y_offset(const RnnDims& d, int64_t layout, int64_t t, int64_t dir, int64_t n) {
  return (layout == 0 ? (t * d.dirs + dir) * d.batch + n : (n * d.seq + t) * d.dirs + dir) * d.hidden;
}
inline int64_t state_offset(const RnnDims& d, int64_t layout, int64_t dir, int64_t n) {
  return (layout == 0 ? dir * d.batch + n : n * d.dirs + dir) * d.hidden;
}

/// The oracle: every output computed row by row with plain loops, float32 or float64.
void rnn_reference(const RnnAttributes& a, const RnnDims& d, const RnnTensors& io);

/// The optimised float32 kernel: one GEMM for the input projection of every step, one per step
/// for the recurrence, vectorised gate arithmetic. Serves every attribute.
/// `packed` (may be null) serves the products when W and R are the graph's constants.
class PackedProducts;
void rnn_gemm(KernelContext& ctx, const RnnAttributes& a, const RnnDims& d, const RnnTensors& io,
              const PackedProducts* packed);

/// Which implementation a kernel runs: kAuto picks oneDNN's primitive where the attributes fit
/// (float32, default activations, no clip, no input_forget, every row of full length), else the
/// GEMM kernel; float64 always runs the reference. The others force one (for tests and benchmarks;
/// a forced kDnnl that does not fit falls back as kAuto does).
enum class RnnPath { kAuto, kReference, kGemm, kDnnl };

std::unique_ptr<OpKernel> make_rnn_kernel(const KernelInit& init, Cell cell, RnnPath path = RnnPath::kAuto);

}  // namespace pointrt::rnn
