// Operator table rows of the ONNX nn family, and its graph pass.
#include "ops/families.h"
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
  t.add({kInternalDomain, "FusedConv", 1, 1, kFloat32Only, make_fused_conv_kernel,
         "internal: Conv + folded BatchNorm + residual Add + Relu (made by the nn pass)"});
  family.passes.push_back({"nn-fuse-conv", "fold BatchNorm into Conv, fuse residual Add and Relu, blocked layout",
                           fuse_conv_batchnorm_relu});
  return family;
}
}  // namespace pointrt
