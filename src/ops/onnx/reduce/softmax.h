// Softmax / LogSoftmax (ONNX opsets 1..21).
//
// Opset < 13: the input is seen as a 2-D matrix [prod(dims[:axis]), prod(dims[axis:])]
//   (axis default 1) and each row is normalised over all its elements.
// Opset >= 13: normalised along the single axis `axis` (default -1); other axes independent.
// Both are a [outer, R, inner] view (old form: inner = 1). Computed stably: subtract the
// maximum, exponentiate, divide by the sum (sum accumulated in double);
// LogSoftmax = x - max - log(sum). An axis of size 0 gives an empty output.
#pragma once

#include "ops/kernel.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {

void softmax_optimized(const Tensor& x, int64_t outer, int64_t R, int64_t inner, bool log, Tensor& y);
void softmax_reference(const Tensor& x, int64_t outer, int64_t R, int64_t inner, bool log, Tensor& y);

/// The [outer, R, inner] view of shape x for `axis` (`flatten_2d`: the opset < 13 form, inner = 1);
/// shared by Softmax, LogSoftmax and Hardmax.
detail::AxisSplit softmax_view(const Shape& x, int64_t axis, bool flatten_2d, const std::string& where);

/// `flatten_2d` selects the opset < 13 semantics.
std::unique_ptr<OpKernel> make_softmax_kernel(const KernelInit& init, bool log, bool flatten_2d);

}  // namespace pointrt::reduce
