// Slice. Per sliced axis (ONNX Slice-10+ rules, which Slice-1 shares for step 1):
//   start += dim if start < 0; end += dim if end < 0;
//   step > 0: start, end clamped to [0, dim];   step < 0: start clamped to [0, dim-1], end to [-1, dim-1];
//   length = max(0, ceil((end - start) / step)). step 0 is an error; axes must be unique.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

struct SlicePlan {
  Shape out_shape;
  std::vector<int64_t> start;  // per input dim, after clamping
  std::vector<int64_t> step;   // per input dim (1 where not sliced)
};

/// axes/steps may be empty (all leading axes / all ones).
SlicePlan slice_plan(const Shape& in, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                     const std::vector<int64_t>& axes, const std::vector<int64_t>& steps, const std::string& where);
void slice_cpu(const Tensor& x, const SlicePlan& plan, Tensor& y);
void slice_ref(const Tensor& x, const SlicePlan& plan, Tensor& y);

}  // namespace pointrt::tensor
