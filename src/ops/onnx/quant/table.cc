// The ONNX quantization family: its table rows, internal fused kernels, QDQ pass and com.microsoft schemas.
#include "ops/families.h"
#include "ops/onnx/nn/nn_kernels.h"
#include "ops/onnx/quant/contrib_qlinear.h"
#include "ops/onnx/quant/qconv.h"
#include "ops/onnx/quant/qmatmul.h"
#include "ops/onnx/quant/quant_fusion.h"
#include "ops/onnx/quant/quantize.h"

namespace pointrt {

Family register_onnx_quant() {
  using namespace quant;
  Family family{"onnx/quant"};
  OpTable& t = family.rows;
  const std::vector<DType> q_in = {DType::kFloat32, DType::kFloat16, DType::kInt32};
  const std::vector<DType> dq_in_10 = {DType::kInt8, DType::kUInt8, DType::kInt32};
  const std::vector<DType> dq_in_21 = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32};
  const std::vector<DType> dq_in_19 = {DType::kInt8,          DType::kUInt8,          DType::kInt32,
                                       DType::kFloat8E4M3FN,  DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                                       DType::kFloat8E5M2FNUZ};
  std::vector<DType> dq_in_21_all = dq_in_21;
  dq_in_21_all.insert(dq_in_21_all.end(), dq_in_19.begin() + 3, dq_in_19.end());
  dq_in_21_all.insert(dq_in_21_all.end(), {DType::kInt4, DType::kUInt4});
  const std::vector<DType> int8 = {DType::kInt8, DType::kUInt8};
  t.add({"", "QuantizeLinear", 10, 12, q_in, make_quantize_linear_kernel, "per tensor; int8/uint8"});
  t.add({"", "QuantizeLinear", 13, 18, q_in, make_quantize_linear_kernel, "per tensor or per axis"});
  t.add({"", "QuantizeLinear", 19, 20, q_in, make_quantize_linear_kernel, "float16 scales; float8 outputs (saturate)"});
  t.add({"", "QuantizeLinear", 21, 21, q_in, make_quantize_linear_kernel,
         "blocked, int16/uint16, int4/uint4, float8, output_dtype"});
  t.add({"", "DequantizeLinear", 10, 12, dq_in_10, make_dequantize_linear_kernel, "per tensor"});
  t.add({"", "DequantizeLinear", 13, 18, dq_in_10, make_dequantize_linear_kernel, "per tensor or per axis"});
  t.add({"", "DequantizeLinear", 19, 20, dq_in_19, make_dequantize_linear_kernel, "float16 scales; float8 inputs"});
  t.add({"", "DequantizeLinear", 21, 21, dq_in_21_all, make_dequantize_linear_kernel,
         "blocked, int16/uint16, int4/uint4, float8"});
  t.add({"", "DynamicQuantizeLinear", 11, 21, kFloat32Only, make_dynamic_quantize_linear_kernel, "uint8"});
  t.add({"", "ConvInteger", 10, 21, int8, make_conv_integer_kernel,
         "oneDNN int8 convolution for constant weights; per-channel w_zero_point"});
  t.add({"", "QLinearConv", 10, 21, int8, make_qlinear_conv_kernel,
         "oneDNN int8 convolution for constant weights and scales; per-channel w_scale"});
  t.add({"", "MatMulInteger", 10, 21, int8, make_matmul_integer_kernel,
         "oneDNN int8 matmul for a constant 2-D B; per-row/per-column zero points"});
  t.add({"", "QLinearMatMul", 10, 21, int8, make_qlinear_matmul_kernel,
         "oneDNN int8 matmul for a constant 2-D B and scales; per-row/per-column scales; float16 scales (21)"});
  t.add({kMicrosoftDomain, "QLinearAdd", 1, 1, int8, make_qlinear_add_kernel,
         "ONNX Runtime contrib (QOperator files); folded into a preceding QConv by the QDQ pass"});
  t.add({kMicrosoftDomain, "QLinearGlobalAveragePool", 1, 1, int8, make_qlinear_global_average_pool_kernel,
         "ONNX Runtime contrib (QOperator files); channels_last"});
  t.add({kMicrosoftDomain, "QGemm", 1, 1, int8, make_qgemm_kernel,
         "ONNX Runtime contrib (QOperator files); a QMatMul on oneDNN when B is constant (the QDQ pass)"});
  t.add({kInternalDomain, "QConv", 1, 1, int8, make_qconv_kernel,
         "internal: DequantizeLinear -> Conv (+ Add, Relu) -> QuantizeLinear on oneDNN int8 (the QDQ pass)"});
  t.add({kInternalDomain, "QMatMul", 1, 1, int8, make_qmatmul_kernel,
         "internal: DequantizeLinear -> MatMul/Gemm (+ Relu) -> QuantizeLinear on oneDNN int8 (the QDQ pass)"});
  family.passes.push_back(
      {"quant-qdq",
       "DequantizeLinear/QuantizeLinear around Conv, MatMul, Gemm become int8 kernels (+ Relu, residual Add)",
       fuse_qdq});
  family.schemas = contrib_schemas();
  return family;
}

}  // namespace pointrt
