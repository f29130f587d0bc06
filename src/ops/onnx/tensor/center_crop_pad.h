// CenterCropPad: each listed axis (attribute `axes`, default all) becomes `shape[i]` long,
// centred: a longer input is cropped from start (dim - target) / 2, a shorter one padded with
// zeros before (target - dim) / 2 of them (integer division, so odd remainders go at the end).
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

/// `offset[d]` = input position of output position 0 along d (negative when padding).
void center_crop_pad_ref(const Tensor& x, const std::vector<int64_t>& offset, Tensor& y);

}  // namespace pointrt::tensor
