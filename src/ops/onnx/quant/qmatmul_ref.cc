// MatMulInteger / QLinearMatMul reference: the operands minus their zero points in int64, then
// the reduce family's broadcasting matmul reference.
#include "ops/onnx/quant/qmatmul.h"

#include "ops/onnx/quant/quantize.h"
#include "ops/onnx/reduce/matmul.h"

namespace pointrt::quant {

OperandParam operand_param(const Tensor& p, const Shape& operand_shape, bool rows, const std::string& where,
                           const std::string& param_name, const std::string& operand_name) {
  OperandParam r;
  if (operand_shape.empty()) fail(where, ": '", operand_name, "' is a scalar");
  const size_t rank = operand_shape.size();
  // Rows of A are its second-to-last dimension (a 1-D A is one row); columns of B its last.
  r.per_matrix = rows ? (rank >= 2 ? operand_shape[rank - 2] : 1) : operand_shape[rank - 1];
  Shape full = operand_shape;
  if (rows)
    full[rank - 1] = 1;
  else if (rank >= 2)
    full[rank - 2] = 1;
  const bool ok = p.numel() == 1 || (p.rank() == 1 && p.numel() == r.per_matrix) || (p.shape() == full && rank > 2);
  if (!ok)
    fail(where, ": '", param_name, "' has shape ", shape_to_string(p.shape()), ", which does not fit '", operand_name,
         "' ", shape_to_string(operand_shape), " (expected one element, [", r.per_matrix, "] per ",
         rows ? "row" : "column", ", or ", shape_to_string(full), ")");
  for (int64_t i = 0; i < p.numel(); ++i)
    r.values.push_back(is_int_type(p.dtype()) ? static_cast<double>(load_as_int(p, i))
                                              : static_cast<double>(load_as_float(p, i)));
  return r;
}

void matmul_integer_ref(const Tensor& a, const OperandParam& a_zp, const Tensor& b, const OperandParam& b_zp,
                        Tensor& acc) {
  const int64_t ka = a.shape().back();
  Tensor a64 = Tensor::allocate(DType::kInt64, a.shape());
  for (int64_t e = 0; e < a.numel(); ++e)
    a64.data_as<int64_t>()[e] = load_as_int(a, e) - static_cast<int64_t>(a_zp.entry(e / ka));
  const int64_t n = b.shape().back(), kb = b.rank() >= 2 ? b.dim(b.rank() - 2) : b.dim(0);
  Tensor b64 = Tensor::allocate(DType::kInt64, b.shape());
  for (int64_t e = 0; e < b.numel(); ++e) {
    const int64_t column = (e / (kb * n)) * n + e % n;  // flat column: matrix index * N + n
    b64.data_as<int64_t>()[e] = load_as_int(b, e) - static_cast<int64_t>(b_zp.entry(column));
  }
  Tensor y64 = Tensor::allocate(DType::kInt64, acc.shape());
  reduce::matmul_reference(a64, b64, y64);
  for (int64_t e = 0; e < acc.numel(); ++e) acc.data_as<int32_t>()[e] = static_cast<int32_t>(y64.data_as<int64_t>()[e]);
}

}  // namespace pointrt::quant
