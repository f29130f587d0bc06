// Transpose: y[o_0..o_{r-1}] = x[i] with i[perm[d]] = o[d]; perm defaults to the reversed axes.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

/// Checks `perm` (a permutation of 0..rank-1; empty = reversed) and returns it filled in.
std::vector<int64_t> transpose_perm(const std::vector<int64_t>& perm, size_t rank, const std::string& where);
Shape transpose_shape(const Shape& in, const std::vector<int64_t>& perm);
/// y must already have transpose_shape(x.shape(), perm) and x's dtype.
void transpose_cpu(const Tensor& x, const std::vector<int64_t>& perm, Tensor& y);
void transpose_ref(const Tensor& x, const std::vector<int64_t>& perm, Tensor& y);

}  // namespace pointrt::tensor
