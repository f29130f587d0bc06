// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear: the contract, the mapping of
// scales and zero points onto elements, and the reference and optimised kernels.
//
// QuantizeLinear (10, 13, 19, 21): y = saturate(round(x / y_scale) + y_zero_point)
//   x: float32, float16 or int32 (computed in float32). round: to nearest, ties to even.
//   saturate: clamp to the output type's range ([-128, 127] for int8, [0, 255] for uint8,
//   int16/uint16 and int4 [-8, 7] / uint4 [0, 15] from opset 21). A NaN quantizes to the lowest
//   value (as ONNX's reference and ONNX Runtime do). float8 outputs (opset 19): x / y_scale (+ the
//   zero point's value, 0 in valid models) rounded to the format as Cast does, `saturate`
//   (default 1) deciding overflow. The output type is the zero point's, or `output_dtype`
//   (opset 21), or uint8.
// DequantizeLinear (10, 13, 19, 21): y = (x - x_zero_point) * x_scale, in float32, rounded to
//   the scale's type (float32 or float16). x: int8, uint8, int16, uint16 (opset 21) or int32
//   (whose zero point must be 0), float8 (opset 19; decoded), int4/uint4 (opset 21). The zero
//   point has x's type.
// Scale and zero point (the same shape), three ways (opset in brackets):
//   per tensor    a scalar or a 1-element 1-D tensor                                  [10+]
//   per axis      1-D with x.shape[axis] elements; `axis` (default 1) may be negative   [13+]
//   blocked       block_size > 0: x's rank and shape except ceil(x.shape[axis] /
//                 block_size) along axis; element e uses the scale of its block       [21]
// DynamicQuantizeLinear (11): x float32 -> y uint8, y_scale float32 scalar, y_zero_point uint8
//   scalar, with lo = min(0, min x), hi = max(0, max x), y_scale = (hi - lo) / 255 (1 / 255 when
//   hi == lo), y_zero_point = round(clamp(-lo / y_scale, 0, 255)), y = saturate(round(x /
//   y_scale) + y_zero_point) (ONNX's reference implementation).
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "ops/kernel.h"

namespace pointrt::quant {

/// Where the scale of an element of x is: x is viewed as [outer, along, inner] around the axis.
struct QuantMapping {
  int64_t outer = 1, along = 1, inner = 1;
  bool per_tensor = true;
  int64_t block = 0;  // > 0: blocked (the scale is [outer, ceil(along / block), inner])
  /// Index of the scale (and zero point) of x's element (o, a, i).
  int64_t param_index(int64_t o, int64_t a, int64_t i) const {
    if (per_tensor) return 0;
    if (block == 0) return a;
    return (o * ((along + block - 1) / block) + a / block) * inner + i;
  }
};

/// Names of the values a quantization operator reads, for messages.
struct QuantNames {
  std::string x, scale, zero_point;
};

/// Checks scale and zero point against x (see the header comment) and returns the mapping. `axis`
/// is the attribute (ignored for per-tensor parameters), `block_size` 0 unless blocked. Errors
/// name `where`, the value and both shapes.
QuantMapping quant_mapping(const Shape& x, const Shape& scale, const Shape* zero_point, int64_t axis,
                           int64_t block_size, const QuantNames& names, const std::string& where);

/// True for the element types a quantized tensor may have here (int8, uint8, int16, uint16).
bool is_quantized_type(DType t);
/// The range of a quantized type.
void quantized_range(DType t, int64_t& lo, int64_t& hi);
/// True for the float types a scale (and a dequantized output) may have.
bool is_scale_type(DType t);
/// Element i of a float32/float16 tensor (or int32, for QuantizeLinear's x) as float.
float load_as_float(const Tensor& t, int64_t i);
/// Element i of an integer tensor (any width) as int64.
int64_t load_as_int(const Tensor& t, int64_t i);

// Reference kernels: one element at a time through QuantMapping::param_index. `zero_point` may
// be null (zero). y is allocated by the caller with x's shape and the output type.
/// `saturate` (opset 19+, default on) applies to float8 outputs only: off, an overflow is NaN
/// (or inf for E5M2), as in Cast.
void quantize_linear_ref(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m,
                         Tensor& y, bool saturate = true);
void dequantize_linear_ref(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m,
                           Tensor& y);
/// y has x's shape (uint8); scale and zero_point are scalars (float32, uint8).
void dynamic_quantize_linear_ref(const Tensor& x, Tensor& y, Tensor& scale, Tensor& zero_point);

// Optimised kernels (same contract): rows of `inner` elements sharing one scale, vectorised,
// threaded over rows; other type combinations fall back to the reference.
void quantize_linear(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m, Tensor& y,
                     bool saturate = true);
void dequantize_linear(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m,
                       Tensor& y);
void dynamic_quantize_linear(const Tensor& x, Tensor& y, Tensor& scale, Tensor& zero_point);

/// round(v) + zp clamped to [lo, hi], v already divided by the scale: the one rounding rule
/// (ties to even; NaN gives lo) that the reference kernels share.
inline int64_t saturate_round(float v, int64_t zp, int64_t lo, int64_t hi) {
  if (!(v == v)) return lo;
  double r = std::nearbyint(static_cast<double>(v)) + static_cast<double>(zp);
  return r < static_cast<double>(lo) ? lo : r > static_cast<double>(hi) ? hi : static_cast<int64_t>(r);
}

std::unique_ptr<OpKernel> make_quantize_linear_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_dequantize_linear_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_dynamic_quantize_linear_kernel(const KernelInit& init);

}  // namespace pointrt::quant
