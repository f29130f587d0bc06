// Compress: keeps the slices of `input` along `axis` whose `condition` (bool, 1-D) entry is
// true. Without `axis` the input is flattened first. condition may be shorter than the axis
// (missing entries are false, as numpy.compress); longer is an error.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

/// Returns the kept positions along the axis (of length `dim`).
std::vector<int64_t> compress_selection(const Tensor& condition, int64_t dim, const std::string& where);
/// y has x's shape with dims[axis] = kept.size(); x viewed as [outer, dim, inner].
void compress_ref(const Tensor& x, int64_t axis, const std::vector<int64_t>& kept, Tensor& y);

}  // namespace pointrt::tensor
