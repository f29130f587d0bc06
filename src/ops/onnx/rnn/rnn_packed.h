// The GEMMs of the RNN/GRU/LSTM GEMM kernel with constant weights: a oneDNN matmul primitive per
// (direction, product, rows, thread count) whose weights are reordered into oneDNN's blocked layout
// once, so that the per-step product (a few rows against G*H x H weights) does not repack the
// weights on every call as a plain sgemm does.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ops/kernel.h"

namespace pointrt::rnn {

/// y[M, N] (rows ldy apart) = x[M, K] * w^T for a constant w [N, K] (rows K apart, as ONNX
/// stores W and R). Thread-safe; the scratchpad comes from the run's allocator.
class PackedProduct {
 public:
  /// nullptr when oneDNN declines.
  static std::unique_ptr<PackedProduct> create(const float* w, int64_t M, int64_t N, int64_t K, int64_t ldy);
  ~PackedProduct();
  void run(KernelContext& ctx, const float* x, float* y) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The PackedProducts of one kernel, made on first use for each key and kept.
class PackedProducts {
 public:
  /// `w` must stay alive and unchanged (a graph constant). nullptr when oneDNN declines.
  const PackedProduct* get(int dir, int part, const float* w, int64_t M, int64_t N, int64_t K, int64_t ldy) const;

 private:
  mutable std::mutex mutex_;
  mutable std::map<std::vector<int64_t>, std::unique_ptr<PackedProduct>> products_;
};

}  // namespace pointrt::rnn
