// DepthToSpace and SpaceToDepth on X [N, C, H, W] with block size b (ONNX's definitions as a
// reshape to 6-D, a transpose and a reshape back):
//   DepthToSpace DCR (default): y[n, c, h, w] = x[n, ((h % b) * b + w % b) * C/b^2 + c, h / b, w / b]
//   DepthToSpace CRD:           y[n, c, h, w] = x[n, c * b^2 + (h % b) * b + w % b, h / b, w / b]
//     output [N, C / b^2, H * b, W * b]; C must be divisible by b^2.
//   SpaceToDepth:               y[n, (bh * b + bw) * C + c, h, w] = x[n, c, h * b + bh, w * b + bw]
//     output [N, C * b^2, H / b, W / b]; H and W must be divisible by b.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

enum class DepthSpaceMode { kDepthToSpaceDCR, kDepthToSpaceCRD, kSpaceToDepth };

/// Output shape; errors name the node when the shape or block size does not fit.
Shape depth_space_shape(const Shape& x, int64_t block, DepthSpaceMode mode, const std::string& where);
/// y already has depth_space_shape(...) and x's dtype.
void depth_space_cpu(const Tensor& x, int64_t block, DepthSpaceMode mode, Tensor& y);
void depth_space_ref(const Tensor& x, int64_t block, DepthSpaceMode mode, Tensor& y);

}  // namespace pointrt::tensor
