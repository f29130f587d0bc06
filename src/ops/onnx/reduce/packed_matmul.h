// A oneDNN matmul primitive with constant weights reordered once at prepare time, for MatMul and
// Gemm nodes whose B is an initializer and whose A has a shape fixed in the model.
#pragma once

#include <cstdint>
#include <memory>

namespace pointrt::reduce {

/// Y[M, N] = A[M, K] * W[K, N] (+ bias[N]) (+ beta * Y). A is row-major [M, K] ([K, M] when
/// trans_a), W [K, N] ([N, K] when trans_w); Y is row-major [M, N]. The weights and the bias are
/// copied at create(), so the caller's buffers need not outlive the call. run() is safe to call
/// from several threads at once.
class PackedMatmul {
 public:
  struct Spec {
    int64_t M = 0, K = 0, N = 0;
    bool trans_a = false;
    const float* weights = nullptr;
    bool trans_w = false;
    const float* bias = nullptr;  // [N] added to every row, or null
    bool accumulate = false;      // Y holds C on entry and is added with scale beta
    float beta = 1.0f;
  };
  /// Null when oneDNN declines or a dimension is not positive (the caller then takes its general path).
  static std::unique_ptr<PackedMatmul> create(const Spec& spec);
  ~PackedMatmul();

  /// a: [M, K] ([K, M] when trans_a); y: [M, N], holding C on entry when accumulate.
  void run(const float* a, float* y) const;

  int64_t M() const;
  int64_t K() const;
  bool accumulates() const;

 private:
  struct Impl;
  explicit PackedMatmul(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pointrt::reduce
