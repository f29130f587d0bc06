// Operator table rows of the ONNX nn family, and its graph pass.
#include "ops/families.h"
#include "ops/onnx/nn/nn_kernels.h"

namespace pointrt {
Family register_onnx_nn() {
  Family family{"onnx/nn"};
  OpTable& t = family.rows;
  using namespace nn;
  const std::vector<DType> max_pool_types = {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUInt8};
  t.add({"", "Conv", 7, 21, kFloat32Only, make_conv_kernel, "oneDNN; 1D/2D/3D, groups, dilations, auto_pad"});
  t.add({"", "ConvTranspose", 7, 21, kFloat32Only, make_conv_transpose_kernel,
         "oneDNN deconvolution; output_shape/output_padding/auto_pad"});
  t.add({"", "BatchNormalization", 7, 21, kFloat32Only, make_batch_norm_kernel,
         "inference only (training_mode=1 is an error); folded into a preceding Conv"});
  t.add({"", "MaxPool", 7, 11, kFloatTypes, make_max_pool_kernel,
         "oneDNN for float32; Indices via the reference kernel"});
  t.add({"", "MaxPool", 12, 21, max_pool_types, make_max_pool_kernel,
         "oneDNN for float32; Indices via the reference kernel"});
  t.add({"", "AveragePool", 7, 21, kFloat32Only, make_average_pool_kernel, "oneDNN; count_include_pad, ceil_mode"});
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
