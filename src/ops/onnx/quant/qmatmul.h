// MatMulInteger (10), QLinearMatMul (10, 21) and the internal QMatMul the QDQ pass makes: the
// contract and the reference kernel.
//
// MatMulInteger: A, B (int8 or uint8 each), a_zero_point (A's type), b_zero_point (B's type)
//   -> Y int32 = matmul(A - a_zp, B - b_zp), numpy.matmul shapes (reduce/matmul.h).
//   a_zero_point: one element (per tensor), [M] (per row, every batch), or A's shape with K
//   replaced by 1 (per row of each batch). b_zero_point: one element, [N] (per column), or B's
//   shape with K replaced by 1.
// QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp -> y of y_zp's type:
//   acc = matmul(a - a_zp, b - b_zp) (int32), y = saturate(round(float(acc) * (a_scale[row] *
//   b_scale[col] / y_scale)) + y_zp), ties to even. a_scale is laid out like a_zero_point, b_scale
//   like b_zero_point; y_scale, y_zp scalars. Scales float32 or (opset 21) float16: the
//   multiplier is then computed in float16 as ONNX's reference does.
// pointrt.internal::QMatMul (made by the QDQ pass from DequantizeLinear -> MatMul / Gemm ->
//   QuantizeLinear): QLinearMatMul's eight inputs and an int32 bias [N] (input 8, added to acc);
//   B a constant 2-D [K, N]. __pointrt_float_output = 1: no y_scale/y_zp, y float32 =
//   float(acc) * a_scale * b_scale[col]; __pointrt_post_relu = 1: ReLU before rounding.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/kernel.h"

namespace pointrt::quant {

/// A zero point or scale of A (per row) or B (per column) resolved against the operand's shape:
/// entry(r) gives the value for flat row r of A (batch * M + m) or flat column of B (batch * N + n).
struct OperandParam {
  std::vector<double> values;  // one, per row/column of one matrix, or per row/column of every matrix
  int64_t per_matrix = 1;      // rows (M) or columns (N) of one matrix
  double entry(int64_t flat) const {
    if (values.size() == 1) return values[0];
    return values.size() == static_cast<size_t>(per_matrix) ? values[flat % per_matrix] : values[flat];
  }
};

/// Checks that `p` (a zero point or a scale of the operand `operand_shape`, rows = true for A)
/// has one of the layouts of the header comment; errors name `where`, both values and shapes.
OperandParam operand_param(const Tensor& p, const Shape& operand_shape, bool rows, const std::string& where,
                           const std::string& param_name, const std::string& operand_name);

/// acc = matmul(A - a_zp, B - b_zp) as int32 (numpy batching), acc allocated by the caller with
/// matmul_output_shape(A, B).
void matmul_integer_ref(const Tensor& a, const OperandParam& a_zp, const Tensor& b, const OperandParam& b_zp,
                        Tensor& acc);

std::unique_ptr<OpKernel> make_matmul_integer_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_qlinear_matmul_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_qmatmul_kernel(const KernelInit& init);
/// Implementation oneDNN picked for a QMatMul-family kernel and `rows` rows of A (batch folded);
/// "reference" when the reference kernel runs, "" when `k` is not one. For tests.
std::string qmatmul_impl_name(const OpKernel& k, int64_t rows);

}  // namespace pointrt::quant
