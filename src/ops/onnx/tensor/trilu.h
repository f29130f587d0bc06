// Trilu: keeps the upper (upper = 1, default) or lower triangle of every matrix in the last two
// dimensions of X [..., M, N], zeroing the rest. Element (i, j) is kept when j - i >= k (upper)
// or j - i <= k (lower); k is the optional int64 scalar input 1 (default 0), any value allowed
// (large |k| keeps everything or nothing). Zero is the all-zero bit pattern in every dtype.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

/// y has x's shape and dtype; x.rank() >= 2.
void trilu_cpu(const Tensor& x, int64_t k, bool upper, Tensor& y);
void trilu_ref(const Tensor& x, int64_t k, bool upper, Tensor& y);

}  // namespace pointrt::tensor
