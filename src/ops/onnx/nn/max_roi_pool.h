// MaxRoiPool (ONNX 1): X [N, C, H, W], rois [R, 5] (batch, x1, y1, x2, y2) -> [R, C, ph, pw]
// (pooled_shape), Caffe's ROI pooling: the ROI's corners are round(coord * spatial_scale), its
// size max(end - start + 1, 1); bin (i, j) covers rows [floor(i * h / ph), ceil((i + 1) * h / ph))
// offset by the start, clipped to the image; the maximum of a bin, 0 for an empty bin.
#pragma once

#include "ops/kernel.h"

namespace pointrt::nn {

void max_roi_pool_ref(const Tensor& x, const Tensor& rois, int64_t ph, int64_t pw, float spatial_scale, Tensor& y);
std::unique_ptr<OpKernel> make_max_roi_pool_kernel(const KernelInit& init);

}  // namespace pointrt::nn
