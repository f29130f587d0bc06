// DeformConv (ONNX 19), 2-D: X [N, C, H, W], W [oC, C / group, kH, kW], offset
// [N, offset_group * kH * kW * 2, oH, oW] ((dy, dx) per kernel tap), optional B [oC] and mask
// [N, offset_group * kH * kW, oH, oW]. Tap (i, j) of output (oh, ow) samples X at
//   (oh * sh - pad_top + i * dh + dy, ow * sw - pad_left + j * dw + dx)
// bilinearly, corners outside the image contributing 0 (GridSample zeros padding,
// align_corners = 1), times the mask; input channel c uses offset group c / (C / offset_group).
// oH, oW as Conv with the given pads/strides/dilations. Sums in double.
#pragma once

#include "ops/kernel.h"

namespace pointrt::nn {

struct DeformConvParams {
  int64_t group = 1, offset_group = 1;
  int64_t kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1, pad_top = 0, pad_left = 0, oh = 0, ow = 0;
};

/// All float32/float64 of one type; b and mask may be undefined.
void deform_conv_ref(const Tensor& x, const Tensor& w, const Tensor& offset, const Tensor& b, const Tensor& mask,
                     const DeformConvParams& p, Tensor& y);
std::unique_ptr<OpKernel> make_deform_conv_kernel(const KernelInit& init);

}  // namespace pointrt::nn
