// Operator table rows of the ONNX nn family, and its graph pass.
#include "ops/families.h"
#include "ops/onnx/nn/col2im.h"
#include "ops/onnx/nn/deform_conv.h"
#include "ops/onnx/nn/lp_pool.h"
#include "ops/onnx/nn/max_roi_pool.h"
#include "ops/onnx/nn/max_unpool.h"
#include "ops/onnx/nn/nn_kernels.h"

namespace pointrt {
Family register_onnx_nn() {
  Family family{"onnx/nn"};
  OpTable& t = family.rows;
  using namespace nn;
  const std::vector<DType> max_pool_types = {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUInt8};
  t.add({"", "Conv", 1, 21, kFloat32Only, make_conv_kernel, "oneDNN; 1D/2D/3D, groups, dilations, auto_pad"});
  t.add({"", "ConvTranspose", 1, 21, kFloat32Only, make_conv_transpose_kernel,
         "oneDNN deconvolution; output_shape/output_padding/auto_pad"});
  t.add({"", "BatchNormalization", 1, 21, kFloat32Only, make_batch_norm_kernel,
         "folded into a preceding Conv; training (is_test = 0 before opset 7, training_mode = 1 from 14) "
         "uses batch statistics"});
  t.add({"", "MaxPool", 1, 11, kFloatTypes, make_max_pool_kernel,
         "oneDNN for float32; Indices via the reference kernel"});
  t.add({"", "MaxPool", 12, 21, max_pool_types, make_max_pool_kernel,
         "oneDNN for float32; Indices via the reference kernel"});
  t.add({"", "AveragePool", 1, 21, kFloat32Only, make_average_pool_kernel,
         "oneDNN; count_include_pad (opset 7+), ceil_mode (10+)"});
  t.add({"", "GlobalAveragePool", 1, 21, kFloat32Only, make_global_average_pool_kernel,
         "oneDNN (unchanged since opset 1)"});
  t.add({"", "GlobalMaxPool", 1, 21, kFloat32Only, make_global_max_pool_kernel, "oneDNN (unchanged since opset 1)"});
  const std::vector<DType> H = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
  auto lp_pool = [](const KernelInit& i) { return make_lp_pool_kernel(i, false); };
  auto global_lp_pool = [](const KernelInit& i) { return make_lp_pool_kernel(i, true); };
  t.add({"", "LpPool", 1, 1, H, lp_pool, "float p"});
  t.add({"", "LpPool", 2, 17, H, lp_pool, "integer p; pads, auto_pad"});
  t.add({"", "LpPool", 18, 21, H, lp_pool, "ceil_mode, dilations"});
  t.add({"", "GlobalLpPool", 1, 1, H, global_lp_pool, "float p"});
  t.add({"", "GlobalLpPool", 2, 21, H, global_lp_pool, "integer p"});
  t.add({"", "MaxUnpool", 9, 10, kAllTypes, make_max_unpool_kernel, "indices from MaxPool"});
  t.add({"", "MaxUnpool", 11, 21, kAllTypes, make_max_unpool_kernel, "indices from MaxPool; output_shape input"});
  t.add({"", "MaxRoiPool", 1, 21, H, make_max_roi_pool_kernel, "Caffe ROI pooling"});
  t.add({"", "Col2Im", 18, 21, H, make_col2im_kernel, "N-D; strides, pads, dilations"});
  t.add({"", "DeformConv", 19, 21, H, make_deform_conv_kernel, "2-D; group, offset_group, mask"});
  t.add({kInternalDomain, "FusedConv", 1, 1, kFloat32Only, make_fused_conv_kernel,
         "internal: Conv + folded BatchNorm + residual Add + Relu (made by the nn pass)"});
  family.passes.push_back({"nn-fuse-conv", "fold BatchNorm into Conv, fuse residual Add and Relu, blocked layout",
                           fuse_conv_batchnorm_relu});
  return family;
}
}  // namespace pointrt
