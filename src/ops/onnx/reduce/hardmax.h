// Hardmax (ONNX 1, 11, 13): 1 at the first maximum of each row, 0 elsewhere. Rows as Softmax
// (softmax_view): before opset 13 the input is flattened to 2-D at `axis` (default 1), from
// opset 13 one axis (default -1). NaN never wins; a row of NaNs has no maximum and stays 0.
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

/// x and y: float32 or float64, [outer, R, inner] in row-major order.
void hardmax_ref(const Tensor& x, int64_t outer, int64_t R, int64_t inner, Tensor& y);
std::unique_ptr<OpKernel> make_hardmax_kernel(const KernelInit& init, bool flatten_2d);

}  // namespace pointrt::reduce
