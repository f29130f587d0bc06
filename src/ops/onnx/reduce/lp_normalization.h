// LpNormalization (ONNX 1): y = x / ||x||_p along `axis` (default -1), p = 1 or 2 (default 2).
// A zero norm divides by zero (0/0 = NaN), as the ONNX reference does. Norms in double.
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

void lp_normalization_ref(const Tensor& x, int64_t outer, int64_t R, int64_t inner, int64_t p, Tensor& y);
std::unique_ptr<OpKernel> make_lp_normalization_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
