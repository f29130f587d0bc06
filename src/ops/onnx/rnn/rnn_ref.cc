// The RNN/GRU/LSTM oracle: each (direction, batch row) is run on its own with plain dot products
// in double precision, the equations of rnn.h written out one gate at a time.
#include <vector>

#include "ops/onnx/rnn/rnn.h"

namespace pointrt::rnn {
namespace {

template <typename T>
class RowRunner {
 public:
  RowRunner(const RnnAttributes& a, const RnnDims& d, const RnnTensors& io, int dir)
      : a_(a), d_(d), io_(io), dir_(dir), H_(d.hidden), I_(d.input), G_(gate_count(a.cell)) {
    w_ = io.w->data_as<T>() + dir * G_ * H_ * I_;
    r_ = io.r->data_as<T>() + dir * G_ * H_ * H_;
    b_ = io.b ? io.b->data_as<T>() + dir * 2 * G_ * H_ : nullptr;
    p_ = io.p ? io.p->data_as<T>() + dir * 3 * H_ : nullptr;
  }

  void run(int64_t n) {
    std::vector<double> h(H_, 0.0), c(H_, 0.0);
    load_state(io_.h0, n, h);
    load_state(io_.c0, n, c);
    const int64_t len = row_length(io_, d_, n);
    for (int64_t s = 0; s < len; ++s) {
      const int64_t t = a_.reverse(dir_) ? len - 1 - s : s;
      x_ = io_.x->data_as<T>() + x_offset(d_, a_.layout, t, n);
      if (a_.cell == Cell::kRnn) step_rnn(h);
      if (a_.cell == Cell::kGru) step_gru(h);
      if (a_.cell == Cell::kLstm) step_lstm(h, c);
      if (io_.y) store(io_.y->data_as<T>() + y_offset(d_, a_.layout, t, dir_, n), h);
    }
    if (io_.y)
      for (int64_t t = len; t < d_.seq; ++t) store(io_.y->data_as<T>() + y_offset(d_, a_.layout, t, dir_, n), {});
    if (len == 0) std::fill(h.begin(), h.end(), 0.0), std::fill(c.begin(), c.end(), 0.0);
    if (io_.y_h) store(io_.y_h->data_as<T>() + state_offset(d_, a_.layout, dir_, n), h);
    if (io_.y_c) store(io_.y_c->data_as<T>() + state_offset(d_, a_.layout, dir_, n), c);
  }

 private:
  void load_state(const Tensor* t, int64_t n, std::vector<double>& v) const {
    if (!t) return;
    const T* src = t->data_as<T>() + state_offset(d_, a_.layout, dir_, n);
    for (int64_t j = 0; j < H_; ++j) v[j] = src[j];
  }
  void store(T* dst, const std::vector<double>& v) const {
    for (int64_t j = 0; j < H_; ++j) dst[j] = v.empty() ? T(0) : static_cast<T>(v[j]);
  }
  // Row `row` (of G*H) of X_t W^T, of v R^T, and the two biases.
  double xw(int64_t row) const {
    double s = 0;
    for (int64_t i = 0; i < I_; ++i) s += static_cast<double>(x_[i]) * static_cast<double>(w_[row * I_ + i]);
    return s;
  }
  double hr(int64_t row, const std::vector<double>& v) const {
    double s = 0;
    for (int64_t k = 0; k < H_; ++k) s += v[k] * static_cast<double>(r_[row * H_ + k]);
    return s;
  }
  double wb(int64_t row) const { return b_ ? static_cast<double>(b_[row]) : 0.0; }
  double rb(int64_t row) const { return b_ ? static_cast<double>(b_[G_ * H_ + row]) : 0.0; }
  double peephole(int gate, int64_t j) const { return p_ ? static_cast<double>(p_[gate * H_ + j]) : 0.0; }
  double act(int k, double v) const {
    if (a_.has_clip) v = std::min(std::max(v, -static_cast<double>(a_.clip)), static_cast<double>(a_.clip));
    return a_.activation(dir_, k)(v);
  }

  void step_rnn(std::vector<double>& h) const {
    std::vector<double> next(H_);
    for (int64_t j = 0; j < H_; ++j) next[j] = act(0, xw(j) + hr(j, h) + wb(j) + rb(j));
    h = next;
  }

  void step_gru(std::vector<double>& h) const {
    std::vector<double> z(H_), r(H_), rh(H_), next(H_);
    for (int64_t j = 0; j < H_; ++j) {
      z[j] = act(0, xw(j) + hr(j, h) + wb(j) + rb(j));
      r[j] = act(0, xw(H_ + j) + hr(H_ + j, h) + wb(H_ + j) + rb(H_ + j));
      rh[j] = r[j] * h[j];
    }
    for (int64_t j = 0; j < H_; ++j) {
      const int64_t row = 2 * H_ + j;
      const double pre = a_.linear_before_reset ? xw(row) + r[j] * (hr(row, h) + rb(row)) + wb(row)
                                                : xw(row) + hr(row, rh) + rb(row) + wb(row);
      next[j] = (1.0 - z[j]) * act(1, pre) + z[j] * h[j];
    }
    h = next;
  }

  void step_lstm(std::vector<double>& h, std::vector<double>& c) const {
    // Gate rows in W/R/B: i [0, H), o [H, 2H), f [2H, 3H), c [3H, 4H); peepholes i, o, f.
    for (int64_t j = 0; j < H_; ++j) {
      auto pre = [&](int64_t gate) {
        return xw(gate * H_ + j) + hr(gate * H_ + j, h) + wb(gate * H_ + j) + rb(gate * H_ + j);
      };
      const double i = act(0, pre(0) + peephole(0, j) * c[j]);
      const double f = a_.input_forget ? 1.0 - i : act(0, pre(2) + peephole(2, j) * c[j]);
      const double cand = act(1, pre(3));
      const double cell = f * c[j] + i * cand;
      const double o = act(0, pre(1) + peephole(1, j) * cell);
      next_h_[j] = o * act_h(cell);
      next_c_[j] = cell;
    }
    h = next_h_;
    c = next_c_;
  }
  double act_h(double v) const { return a_.activation(dir_, 2)(v); }  // no clip on Ct

  const RnnAttributes& a_;
  const RnnDims& d_;
  const RnnTensors& io_;
  const int dir_;
  const int64_t H_, I_, G_;
  const T *w_, *r_, *b_, *p_, *x_ = nullptr;
  mutable std::vector<double> next_h_ = std::vector<double>(H_), next_c_ = std::vector<double>(H_);
};

template <typename T>
void reference_typed(const RnnAttributes& a, const RnnDims& d, const RnnTensors& io) {
  for (int dir = 0; dir < d.dirs; ++dir) {
    RowRunner<T> runner(a, d, io, dir);
    for (int64_t n = 0; n < d.batch; ++n) runner.run(n);
  }
}

}  // namespace

void rnn_reference(const RnnAttributes& a, const RnnDims& d, const RnnTensors& io) {
  if (io.x->dtype() == DType::kFloat64)
    reference_typed<double>(a, d, io);
  else
    reference_typed<float>(a, d, io);
}

}  // namespace pointrt::rnn
