// Kernels that compute float16/bfloat16 in float32: read inputs with to_float32 (core/half.h),
// compute into compute_tensor(), and store_output() rounds into the output of the half type.
#pragma once

#include "core/half.h"
#include "ops/kernel.h"

namespace pointrt {

/// The type a kernel computes `t` in: float32 for a half type, `t` otherwise.
inline DType compute_type(DType t) { return is_half_type(t) ? DType::kFloat32 : t; }

/// A new tensor of compute_type(dtype).
inline Tensor compute_tensor(DType dtype, const Shape& shape) { return Tensor::allocate(compute_type(dtype), shape); }

/// Output i = `computed` (of compute_type(dtype)) as `dtype`: rounded for a half type, else aliased.
inline void store_output(KernelContext& ctx, size_t i, DType dtype, const Tensor& computed) {
  if (is_half_type(dtype))
    float32_to_half(computed, ctx.output(i, dtype, computed.shape()));
  else
    ctx.set_output(i, computed);
}

}  // namespace pointrt
