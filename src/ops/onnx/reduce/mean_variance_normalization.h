// MeanVarianceNormalization (ONNX 9, 13), as ONNX's function body defines it:
//   y = (x - mean) / (sqrt(mean(x^2) - mean^2) + 1e-9), the means over `axes` (default [0, 2, 3]).
// Statistics in double.
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

/// x, y: float32 or float64; `reduced[d]` marks the axes the means run over.
void mean_variance_normalization_ref(const Tensor& x, const std::vector<bool>& reduced, Tensor& y);
std::unique_ptr<OpKernel> make_mean_variance_normalization_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
