// Col2Im (ONNX 18): the adjoint of im2col. input [N, C * prod(block_shape), L] with L the number
// of sliding block positions over image_shape (strides, pads [begin..., end...], dilations as in
// Conv) -> [N, C, image_shape...]; overlapping contributions add up.
#pragma once

#include "ops/kernel.h"

namespace pointrt::nn {

struct Col2ImGeometry {
  Shape image, block, grid;  // grid: block positions per spatial dim (prod = L)
  std::vector<int64_t> strides, dilations, pad_begin;
};

void col2im_ref(const Tensor& x, const Col2ImGeometry& g, int64_t N, int64_t C, Tensor& y);
std::unique_ptr<OpKernel> make_col2im_kernel(const KernelInit& init);

}  // namespace pointrt::nn
