// Unique (ONNX 11): the distinct elements of X (flattened), or with `axis` the distinct slices
// along it, as numpy.unique. Outputs: Y (the unique values / slices), indices (position of each
// one's first occurrence in X), inverse_indices (for every element / slice of X, its index in
// Y) and counts; all three index outputs are int64 1-D. sorted = 1 (default) orders Y ascending
// (slices lexicographically, float16 by value); sorted = 0 keeps the order of first occurrence.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

struct UniqueResult {
  std::vector<int64_t> first;    // per unique slice: its first position in X
  std::vector<int64_t> inverse;  // per slice of X: its unique index
  std::vector<int64_t> counts;
};

/// X viewed as [outer, dim, inner] slices along the axis (dim = number of slices).
UniqueResult unique_ref(const Tensor& x, int64_t outer, int64_t dim, int64_t inner, bool sorted);

}  // namespace pointrt::tensor
