// ScatterElements (and the deprecated Scatter) and ScatterND. The output starts as a copy of
// data; updates are then applied in index order (row-major over indices), so with duplicate
// indices and reduction 'none' the last update wins, as the ONNX reference does.
// reduction: none (opset 11), add / mul (16), max / min (18). bool: add = or, mul = and.
// float16 is reduced in float32 and rounded back per update.
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };
/// levels: 0 = attribute not defined at this opset, 1 = none/add/mul, 2 = + max/min.
Reduction parse_reduction(const std::string& s, int levels, const std::string& where);

void scatter_elements_cpu(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis, Reduction red,
                          Tensor& y, const std::string& where, const std::string& label);
void scatter_nd_cpu(const Tensor& data, const Tensor& indices, const Tensor& updates, Reduction red, Tensor& y,
                    const std::string& where, const std::string& label);

}  // namespace pointrt::tensor
