// RNN/GRU/LSTM, the GEMM-based float32 kernel: per direction, one GEMM projects the inputs of
// every step (X W^T, [T*N, G*H]); each step then runs one GEMM for the recurrence (H R^T, [N, G*H];
// GRU without linear_before_reset needs a second one for (r . H) Rh^T) and the gate arithmetic on
// contiguous blocks of H, where sigmoid and tanh use the vectorised exp of the elementwise family.
// Every attribute is served here, so this is the fallback of the oneDNN path (rnn_dnnl.cc).
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "ops/onnx/elementwise/elementwise.h"
#include "ops/onnx/reduce/matmul.h"
#include "ops/onnx/rnn/rnn.h"
#include "ops/onnx/rnn/rnn_packed.h"

namespace pointrt::rnn {
namespace {

// v = act(v) on n contiguous elements.
void activate(const Activation& act, float* v, int64_t n) {
  for (int64_t b = 0; b < n; b += 256) {
    const int64_t len = std::min<int64_t>(256, n - b);
    float* p = v + b;
    if (act.kind == ActivationKind::kSigmoid) {
      elementwise::fast_exp_block(p, p, len, -1.0f);
      for (int64_t i = 0; i < len; ++i) p[i] = 1.0f / (1.0f + p[i]);
    } else if (act.kind == ActivationKind::kTanh) {
      elementwise::fast_tanh_block(p, p, len);
    } else {
      for (int64_t i = 0; i < len; ++i) p[i] = act(p[i]);
    }
  }
}

class DirectionRunner {
 public:
  DirectionRunner(KernelContext& ctx, const RnnAttributes& a, const RnnDims& d, const RnnTensors& io, int dir,
                  const float* xs, const PackedProducts* packed)
      : ctx_(ctx),
        a_(a),
        d_(d),
        io_(io),
        packed_(packed),
        dir_(dir),
        H_(d.hidden),
        N_(d.batch),
        GH_(gate_count(a.cell) * d.hidden) {
    w_ = io.w->data_as<float>() + dir * GH_ * d.input;
    r_ = io.r->data_as<float>() + dir * GH_ * H_;
    p_ = io.p ? io.p->data_as<float>() + dir * 3 * H_ : nullptr;
    xw_ = float_scratch(ctx, xw_holder_, d.seq * N_ * GH_);
    hr_ = float_scratch(ctx, hr_holder_, N_ * GH_);
    h_ = float_scratch(ctx, h_holder_, N_ * H_);
    c_ = float_scratch(ctx, c_holder_, N_ * H_);
    rh_ = float_scratch(ctx, rh_holder_, N_ * H_);
    bias_ = float_scratch(ctx, bias_holder_, GH_ + H_);
    rbh_ = bias_ + GH_;
    // (Projecting a few steps at a time, to keep the rows in cache, measured no faster.)
    product(0, xs, w_, d.seq * N_, GH_, d.input, xw_, GH_);
    prepare_bias();
    load_state(io.h0, h_);
    load_state(io.c0, c_);
    std::fill(rh_, rh_ + N_ * H_, 0.0f);
  }

  void run() {
    int64_t max_len = 0;
    for (int64_t n = 0; n < N_; ++n) max_len = std::max(max_len, row_length(io_, d_, n));
    for (int64_t s = 0; s < max_len; ++s) step(s);
    finish();
  }

 private:
  // y[M, N] (rows ldy apart) = x[M, K] w^T with w [N, K]; `part` names the product for the cache.
  void product(int part, const float* x, const float* w, int64_t M, int64_t N, int64_t K, float* y, int64_t ldy) {
    const PackedProduct* p = packed_ ? packed_->get(dir_, part, w, M, N, K, ldy) : nullptr;
    if (p)
      p->run(ctx_, x, y);
    else
      reduce::gemm<float>(false, true, M, N, K, 1.0f, x, K, w, K, 0.0f, y, ldy);
  }
  void prepare_bias() {
    const float* b = io_.b ? io_.b->data_as<float>() + dir_ * 2 * GH_ : nullptr;
    for (int64_t j = 0; j < GH_; ++j) bias_[j] = b ? b[j] + b[GH_ + j] : 0.0f;
    // GRU with linear_before_reset keeps Rbh inside r . (H Rh^T + Rbh).
    if (a_.cell == Cell::kGru && a_.linear_before_reset)
      for (int64_t j = 0; j < H_; ++j) {
        bias_[2 * H_ + j] = b ? b[2 * H_ + j] : 0.0f;
        rbh_[j] = b ? b[GH_ + 2 * H_ + j] : 0.0f;
      }
  }
  void load_state(const Tensor* t, float* dst) const {
    for (int64_t n = 0; n < N_; ++n) {
      float* row = dst + n * H_;
      if (t)
        std::memcpy(row, t->data_as<float>() + state_offset(d_, a_.layout, dir_, n), H_ * sizeof(float));
      else
        std::fill(row, row + H_, 0.0f);
    }
  }
  // Time index of step s for row n, or -1 when the row is done.
  int64_t time_of(int64_t s, int64_t n) const {
    const int64_t len = row_length(io_, d_, n);
    if (s >= len) return -1;
    return a_.reverse(dir_) ? len - 1 - s : s;
  }
  void clip(float* v, int64_t n) const {
    if (!a_.has_clip) return;
    for (int64_t i = 0; i < n; ++i) v[i] = std::min(std::max(v[i], -a_.clip), a_.clip);
  }
  void act(int k, float* v) const {
    clip(v, H_);
    activate(a_.activation(dir_, k), v, H_);
  }
  const float* projected(int64_t t, int64_t n) const { return xw_ + (t * N_ + n) * GH_; }
  // g[0, cols) += X_t W^T + bias for row n.
  void add_input(float* g, int64_t t, int64_t n, int64_t cols) const {
    const float* x = projected(t, n);
    for (int64_t j = 0; j < cols; ++j) g[j] += x[j] + bias_[j];
  }
  bool parallel_rows() const { return N_ > 1 && N_ * GH_ >= 4096 && omp_get_max_threads() > 1; }

  void step(int64_t s) {
    const bool gru_split = a_.cell == Cell::kGru && !a_.linear_before_reset;
    const int64_t cols = gru_split ? 2 * H_ : GH_;
    if (s == 0 && !io_.h0)
      std::fill(hr_, hr_ + N_ * GH_, 0.0f);  // H0 = 0
    else
      product(1, h_, r_, N_, cols, H_, hr_, GH_);
    if (gru_split) {
#pragma omp parallel for if (parallel_rows())
      for (int64_t n = 0; n < N_; ++n) gru_reset_gates(s, n);
      product(2, rh_, r_ + 2 * H_ * H_, N_, H_, H_, hr_ + 2 * H_, GH_);
    }
#pragma omp parallel for if (parallel_rows())
    for (int64_t n = 0; n < N_; ++n) {
      const int64_t t = time_of(s, n);
      if (t < 0) continue;
      float* g = hr_ + n * GH_;
      if (a_.cell == Cell::kRnn) rnn_row(g, t, n);
      if (a_.cell == Cell::kGru) gru_row(g, t, n, gru_split);
      if (a_.cell == Cell::kLstm) lstm_row(g, t, n);
      if (io_.y)
        std::memcpy(io_.y->data_as<float>() + y_offset(d_, a_.layout, t, dir_, n), h_ + n * H_, H_ * sizeof(float));
    }
  }

  void rnn_row(float* g, int64_t t, int64_t n) {
    add_input(g, t, n, H_);
    act(0, g);
    std::memcpy(h_ + n * H_, g, H_ * sizeof(float));
  }

  // GRU without linear_before_reset, first half: z and r, then r . H into rh_ for the second GEMM.
  void gru_reset_gates(int64_t s, int64_t n) {
    const int64_t t = time_of(s, n);
    if (t < 0) return;
    float* g = hr_ + n * GH_;
    add_input(g, t, n, 2 * H_);
    act(0, g);
    act(0, g + H_);
    const float *r = g + H_, *h = h_ + n * H_;
    for (int64_t j = 0; j < H_; ++j) rh_[n * H_ + j] = r[j] * h[j];
  }

  void gru_row(float* g, int64_t t, int64_t n, bool split) {
    float *z = g, *r = g + H_, *hh = g + 2 * H_, *h = h_ + n * H_;
    const float* x = projected(t, n);
    if (split) {  // z, r done; hh holds (r . H) Rh^T
      for (int64_t j = 0; j < H_; ++j) hh[j] += x[2 * H_ + j] + bias_[2 * H_ + j];
    } else {
      add_input(g, t, n, 2 * H_);
      act(0, z);
      act(0, r);
      for (int64_t j = 0; j < H_; ++j) hh[j] = x[2 * H_ + j] + bias_[2 * H_ + j] + r[j] * (hh[j] + rbh_[j]);
    }
    act(1, hh);
    for (int64_t j = 0; j < H_; ++j) h[j] = (1.0f - z[j]) * hh[j] + z[j] * h[j];
  }

  void lstm_row(float* g, int64_t t, int64_t n) {
    add_input(g, t, n, GH_);
    float *i = g, *o = g + H_, *f = g + 2 * H_, *cand = g + 3 * H_, *c = c_ + n * H_, *h = h_ + n * H_;
    if (p_)
      for (int64_t j = 0; j < H_; ++j) i[j] += p_[j] * c[j], f[j] += p_[2 * H_ + j] * c[j];
    act(0, i);
    if (a_.input_forget)
      for (int64_t j = 0; j < H_; ++j) f[j] = 1.0f - i[j];
    else
      act(0, f);
    act(1, cand);
    for (int64_t j = 0; j < H_; ++j) c[j] = f[j] * c[j] + i[j] * cand[j];
    if (p_)
      for (int64_t j = 0; j < H_; ++j) o[j] += p_[H_ + j] * c[j];
    act(0, o);
    std::memcpy(cand, c, H_ * sizeof(float));  // h(Ct), not clipped
    activate(a_.activation(dir_, 2), cand, H_);
    for (int64_t j = 0; j < H_; ++j) h[j] = o[j] * cand[j];
  }

  void finish() const {
    for (int64_t n = 0; n < N_; ++n) {
      const int64_t len = row_length(io_, d_, n);
      if (io_.y)
        for (int64_t t = len; t < d_.seq; ++t) {
          float* y = io_.y->data_as<float>() + y_offset(d_, a_.layout, t, dir_, n);
          std::fill(y, y + H_, 0.0f);
        }
      auto final_state = [&](Tensor* out, const float* state) {
        if (!out) return;
        float* dst = out->data_as<float>() + state_offset(d_, a_.layout, dir_, n);
        if (len == 0)
          std::fill(dst, dst + H_, 0.0f);
        else
          std::memcpy(dst, state + n * H_, H_ * sizeof(float));
      };
      final_state(io_.y_h, h_);
      final_state(io_.y_c, c_);
    }
  }

  KernelContext& ctx_;
  const RnnAttributes& a_;
  const RnnDims& d_;
  const RnnTensors& io_;
  const PackedProducts* packed_;
  const int dir_;
  const int64_t H_, N_, GH_;
  const float *w_, *r_, *p_;
  float *xw_, *hr_, *h_, *c_, *rh_, *bias_, *rbh_;
  Tensor xw_holder_, hr_holder_, h_holder_, c_holder_, rh_holder_, bias_holder_;
};

}  // namespace

void rnn_gemm(KernelContext& ctx, const RnnAttributes& a, const RnnDims& d, const RnnTensors& io,
              const PackedProducts* packed) {
  // X as [T, N, I]: layout 1 is transposed once so that every step's rows are contiguous.
  const float* xs = io.x->data_as<float>();
  Tensor xs_holder;
  if (a.layout == 1 && d.seq > 1 && d.batch > 1) {
    float* t = float_scratch(ctx, xs_holder, d.seq * d.batch * d.input);
    for (int64_t s = 0; s < d.seq; ++s)
      for (int64_t n = 0; n < d.batch; ++n)
        std::memcpy(t + (s * d.batch + n) * d.input, xs + x_offset(d, 1, s, n), d.input * sizeof(float));
    xs = t;
  }
  for (int dir = 0; dir < d.dirs; ++dir) DirectionRunner(ctx, a, d, io, dir, xs, packed).run();
}

}  // namespace pointrt::rnn
