// The QDQ pass of the quantization family: QuantizeLinear/DequantizeLinear around Conv, MatMul
// and Gemm become int8 kernels (internal QConv / QMatMul on oneDNN), with a following ReLU and a
// residual Add folded in; MaxPool, Flatten/Reshape and ReduceMax/ReduceMin between matching
// DequantizeLinear/QuantizeLinear run on the int8 data directly. See quant_fusion.cc.
#pragma once

#include "graph/ir.h"

namespace pointrt::quant {

/// Rewrites `g` as above; true when it changed anything.
bool fuse_qdq(Graph& g);

}  // namespace pointrt::quant
