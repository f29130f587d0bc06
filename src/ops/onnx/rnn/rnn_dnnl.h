// RNN/GRU/LSTM on oneDNN's recurrent primitives (vanilla RNN, LSTM with peepholes, GRU and
// linear-before-reset GRU), for the attribute sets they express (rnn.h RnnPath). Weights given as
// constants are put in oneDNN's gate order once at prepare time; a primitive and its packed
// weights are made per (T, N, thread count) on first use and kept (behind a mutex).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "ops/onnx/rnn/rnn.h"

namespace pointrt::rnn {

class DnnlRnn {
 public:
  /// nullptr when the attributes or the node's inputs do not fit a oneDNN primitive.
  static std::unique_ptr<DnnlRnn> create(const KernelInit& init, const RnnAttributes& a);
  ~DnnlRnn();
  /// False (nothing written) when this run does not fit: not float32, an empty dimension, or a
  /// sequence shorter than T.
  bool run(KernelContext& ctx, const RnnDims& d, const RnnTensors& io) const;
  /// oneDNN's implementation name for the run's sizes ("brgemm:avx512_core", ...), for tests.
  std::string impl_name(const RnnDims& d) const;

  struct Plan;
  struct Weights;

 private:
  DnnlRnn() = default;
  std::shared_ptr<Plan> plan_for(const RnnDims& d) const;  // nullptr when oneDNN declines
  std::shared_ptr<Plan> make_plan(const RnnDims& d) const;

  RnnAttributes attrs_;
  int algorithm_ = 0;  // dnnl::algorithm
  float relu_alpha_ = 0;
  bool peepholes_ = false, has_h0_ = false, has_c0_ = false, want_y_h_ = false, want_y_c_ = false;
  std::unique_ptr<Weights> constant_;  // W, R, B, P in oneDNN's layouts when all are constants
  mutable std::mutex mutex_;
  mutable std::map<Shape, std::shared_ptr<Plan>> plans_;
};

}  // namespace pointrt::rnn
