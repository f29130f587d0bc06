// MaxUnpool (ONNX 9, 11): the inverse scatter of MaxPool. X and I (int64, X's shape, flat
// positions in the output tensor as MaxPool's Indices) -> Y zero-filled with Y.flat[I[e]] = X[e].
// Output shape: input 2 output_shape when given, else per spatial dim
//   (D - 1) * stride + kernel - pad_begin - pad_end.
// An index outside the output is an error naming its position; repeated indices keep the last.
#pragma once

#include "ops/kernel.h"

namespace pointrt::nn {

void max_unpool_ref(const Tensor& x, const std::vector<int64_t>& indices, Tensor& y);
std::unique_ptr<OpKernel> make_max_unpool_kernel(const KernelInit& init);

}  // namespace pointrt::nn
