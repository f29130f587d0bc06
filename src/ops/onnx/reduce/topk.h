// TopK (ONNX opsets 1..21).
//
// Outputs Values (input type) and Indices (int64), the axis (default -1) cut to k.
// opset < 10: k is an attribute; opset >= 10: K is a 1-element int64 input; opset >= 11 adds
// `largest` (default 1) and `sorted` (default 1).
// Order: by value (descending when largest, ascending otherwise); equal values by the lower
// index first (ONNX's rule). NaN counts as larger than every number (so it comes first when
// largest = 1 and last otherwise). Results are always sorted (allowed for sorted = 0).
// k < 0 or k > the axis size is an error.
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

void topk_optimized(const Tensor& x, int64_t axis, int64_t k, bool largest, Tensor& values, Tensor& indices);
void topk_reference(const Tensor& x, int64_t axis, int64_t k, bool largest, Tensor& values, Tensor& indices);

/// `k_from_input`: opset >= 10; `has_largest`: opset >= 11.
std::unique_ptr<OpKernel> make_topk_kernel(const KernelInit& init, bool k_from_input, bool has_largest);

}  // namespace pointrt::reduce
