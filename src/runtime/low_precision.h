// float16 and bfloat16 on operators whose kernels compute in float32 (Conv, MatMul, Gemm,
// BatchNormalization, the pointrt operators, ...): prepare's pass `float16-via-float32` casts such
// a node's float16/bfloat16 inputs to float32, runs the float32 kernel and rounds the outputs
// that the model types as float16/bfloat16 back to that type, so a converted float16 model runs
// with float16 feeds and returns float16 results. ONNX Runtime's CPU provider does the same
// (its InsertCastTransformer).
//
// Between two such nodes the value stays float32 (the consumer reads the producer's float32
// result; the rounding Cast remains only where something else reads the low-precision value, e.g.
// a graph output or an operator with a native float16 kernel). Constant float16 weights become
// float32 constants at fold-constants, so kernels pack them as usual.
#pragma once

#include "core/half.h"
#include "graph/ir.h"
#include "ops/kernel.h"

namespace pointrt {

/// True when a float16/bfloat16 typed input `t` runs through `e`'s float32 kernel: the row lists
/// float32 but not `t`. The one rule the pass, check-supported and supported_ops() share.
bool runs_via_float32(const OpEntry& e, DType t);

/// True when `e` runs inputs of type `t`: natively (listed in e.types, or no list) or, for
/// float16/bfloat16, through float32 casts (e lists float32).
bool runs_element_type(const OpEntry& e, DType t);

/// The pass: rewrites `g` as described above; true when it inserted casts. Nodes without a table
/// row are left alone (check-supported reports them).
bool compute_low_precision_in_float32(Graph& g, const OpTable& table);

}  // namespace pointrt
