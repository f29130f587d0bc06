// ArgMax / ArgMin (ONNX opsets 1..21).
//
// Output: int64 indices along `axis` (default 0), the axis kept as size 1 when keepdims = 1
// (default). Ties: the first (lowest) index, or the last one when select_last_index = 1
// (opset >= 12). A NaN never compares greater or smaller, so it is not selected unless it is
// the first element. Reducing an axis of size 0 is an error (there is no index to return).
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

/// y: int64 with the reduced shape (keepdims or not; the layout is the same).
void arg_reduce_optimized(const Tensor& x, int64_t axis, bool is_max, bool select_last, Tensor& y);
void arg_reduce_reference(const Tensor& x, int64_t axis, bool is_max, bool select_last, Tensor& y);

std::unique_ptr<OpKernel> make_arg_reduce_kernel(const KernelInit& init, bool is_max);

}  // namespace pointrt::reduce
