// com.microsoft QOperator operators that onnxruntime.quantization writes (QuantFormat.QOperator):
// QLinearAdd, QLinearGlobalAveragePool, QGemm. Their kernels are plain loops: in the networks
// that use them the QDQ pass folds QLinearAdd into the preceding QConv (a residual sum) and
// QGemm into a QMatMul (quant_fusion.cc); what is left is small (a pooled vector, a lone Add).
//
// QLinearAdd: A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp -> C (A's type), numpy
//   broadcasting: C = saturate(round((A - A_zp) * (A_scale / C_scale) + (B - B_zp) * (B_scale /
//   C_scale)) + C_zp) (ONNX Runtime's order of operations). Zero points optional (0).
// QLinearGlobalAveragePool: X [N, C, ...] (or [N, ..., C] with channels_last = 1), x_scale, x_zp,
//   y_scale, y_zp -> Y [N, C, 1, ...] (or [N, 1, ..., C]): Y = saturate(round((sum(X) - x_zp *
//   count) * (x_scale / (y_scale * count))) + y_zp), count the spatial size.
// QGemm: A, a_scale, a_zp, B, b_scale, b_zp, C (int32 [N] or [M, N], optional), y_scale, y_zp
//   (optional; absent: float32 output) with transA, transB, alpha: acc = op(A - a_zp) x op(B - b_zp)
//   + C (int32), y = alpha * a_scale * b_scale[n] * acc, quantized with y_scale, y_zp when given.
//   b_scale/b_zp: one element or one per column of op(B).
#pragma once

#include <memory>
#include <vector>

#include "onnx/defs/schema.h"
#include "ops/kernel.h"

namespace pointrt::quant {

inline constexpr const char* kMicrosoftDomain = "com.microsoft";

/// The ONNX schemas of these operators (domain com.microsoft, opset 1); register_onnx_quant() returns them.
std::vector<onnx::OpSchema> contrib_schemas();

std::unique_ptr<OpKernel> make_qlinear_add_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_qlinear_global_average_pool_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_qgemm_kernel(const KernelInit& init);

}  // namespace pointrt::quant
