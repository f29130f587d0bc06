// CumSum (ONNX opsets 11..21): running sum along the axis given by the scalar input `axis`
// (int32 or int64, negative counts from the back).
//  exclusive = 1: element j holds the sum of the elements before j (the first is 0).
//  reverse = 1: sums run from the end of the axis towards its start.
// Sums accumulate in the element type, in axis order (as ONNX Runtime and numpy do).
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

void cumsum_optimized(const Tensor& x, int64_t axis, bool exclusive, bool reverse, Tensor& y);
void cumsum_reference(const Tensor& x, int64_t axis, bool exclusive, bool reverse, Tensor& y);

std::unique_ptr<OpKernel> make_cumsum_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
