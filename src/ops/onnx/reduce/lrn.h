// LRN (ONNX 1, 13), local response normalisation across channels of X [N, C, ...]:
//   square_sum[n, c, ...] = sum of x[n, i, ...]^2 for i in [c - floor((size-1)/2), c + ceil((size-1)/2)] ∩ [0, C)
//   y = x / (bias + alpha / size * square_sum) ^ beta
// attributes: size (required, >= 1), alpha 1e-4, beta 0.75, bias 1. Sums in double.
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

struct LrnParams {
  int64_t size = 1;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.f;
};

/// x, y: float32 or float64 [N, C, S] (S = product of the spatial dims).
void lrn_ref(const Tensor& x, int64_t N, int64_t C, int64_t S, const LrnParams& p, Tensor& y);
std::unique_ptr<OpKernel> make_lrn_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
