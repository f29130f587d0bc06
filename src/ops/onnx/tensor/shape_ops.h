// Shape-only ops (no data movement, outputs alias the input through Tensor::reshaped):
//   Reshape: 0 copies the input dim at that position (unless allowzero=1, opset 14, where 0 is
//            a literal 0 and may not be combined with -1); one -1 takes what is left.
//   Flatten: [prod(d[:axis]), prod(d[axis:])], axis in [-r, r].
//   Squeeze: removes the listed axes (each must be 1), or every 1 when none are given.
//   Unsqueeze: axes index the output (rank r + len(axes)); duplicates are an error.
// and the small producers Shape (start/end clamped like Slice, opset 15), Size, Constant,
// ConstantOfShape, Range (n = max(ceil((limit - start) / delta), 0), y[i] = start + i * delta).
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

Shape reshape_shape(const Shape& in, const std::vector<int64_t>& requested, bool allow_zero, const std::string& where);
Shape squeeze_shape(const Shape& in, const std::vector<int64_t>& axes, const std::string& where);
Shape unsqueeze_shape(const Shape& in, const std::vector<int64_t>& axes, const std::string& where);

}  // namespace pointrt::tensor
