// EyeLike (opsets 9..21): Y has the shape of the 2-D input X [M, N] and the element type given by
// attribute `dtype` (an ONNX TensorProto data type; default: X's type). Y[i, j] = 1 where
// j - i == k (attribute, default 0; any value: a diagonal outside the matrix gives all zeros),
// else 0. X's values are not read. Types (X and Y): float16, float32, float64, every int and
// uint, bool. Errors: X not 2-D; `dtype` not one of those types.
// One kernel: zeros plus one diagonal is already the least work, so no separate fast kernel.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

/// The element types EyeLike takes and makes.
const std::vector<DType>& eye_like_types();
/// Output type from attribute `dtype` (absent: `input`); error naming the node when unsupported.
DType eye_like_output_type(const Attributes& attrs, DType input, const std::string& where);
/// y [M, N] (allocated, a type of eye_like_types()): ones on the k-th diagonal, zeros elsewhere.
void eye_like_ref(int64_t k, Tensor& y);

}  // namespace pointrt::tensor
