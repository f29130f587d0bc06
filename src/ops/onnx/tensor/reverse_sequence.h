// ReverseSequence: for every batch entry b (along batch_axis, default 1), the first
// sequence_lens[b] elements along time_axis (default 0) are reversed; the rest are copied.
// input has rank >= 2; batch_axis and time_axis are 0 or 1 and differ; sequence_lens (int64,
// [batch]) entries must lie in [0, time length].
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

void reverse_sequence_ref(const Tensor& x, const std::vector<int64_t>& lens, int64_t batch_axis, int64_t time_axis,
                          Tensor& y);

}  // namespace pointrt::tensor
