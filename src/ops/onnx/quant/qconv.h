// ConvInteger (10), QLinearConv (10) and the internal QConv the QDQ pass makes: the contract, the
// requantization epilogue, and the reference kernel.
//
// ConvInteger: x, w (int8 or uint8 each), x_zero_point (x's type, scalar), w_zero_point (w's type,
//   scalar or 1-D [M]) -> y int32 = conv(x - x_zero_point, w - w_zero_point), the attributes and
//   output shape of Conv (nn/conv.h). Padding adds nothing (it holds x_zero_point).
// QLinearConv: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B
//   (int32 [M], optional) -> y of y_zero_point's type:
//     acc[m] = conv(x - x_zp, w - w_zp)[m] + B[m]   (int32)
//     y      = saturate(round(float(acc) * (x_scale * w_scale[m] / y_scale)) + y_zp)
//   x_scale, y_scale: scalars; w_scale: scalar or [M] (per output channel); float32.
//   round: ties to even (as oneDNN and ONNX Runtime's requantization).
// pointrt.internal::QConv (made by the QDQ pass, quant_fusion.cc): QLinearConv's nine inputs,
//   then optionally a residual operand s, s_scale, s_zero_point (inputs 9-11). Attributes:
//   __pointrt_float_output = 1: no y_scale/y_zero_point; y float32 = float(acc) * x_scale * w_scale[m]
//   __pointrt_sum_input = 1:    v = float(acc) * multiplier[m] + s_scale / y_scale * (s - s_zp)
//                               (float output: + s, a float32 tensor of y's shape)
//   __pointrt_post_relu = 1:    v = max(v, 0) before rounding
//   __pointrt_src_nhwc / __pointrt_dst_nhwc / __pointrt_sum_nhwc = 1: x / y / s hold their
//   [N, C, ...] data channels-last (only between QConv kernels: the QDQ pass's rule 5 decides;
//   graph outputs and observed values stay plain).
//   __pointrt_global_max = 1: y is ReduceMax over every spatial axis of the convolution's int8
//   output (after the epilogue): [N, C], or [N, C, 1, ...] with __pointrt_global_max_keepdims = 1.
//   The maximum of the quantized values is the quantized maximum (the requantization increases).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/kernel.h"
#include "ops/onnx/nn/conv.h"

namespace pointrt::quant {

inline constexpr const char* kAttrFloatOutput = "__pointrt_float_output";
inline constexpr const char* kAttrSrcNhwc = "__pointrt_src_nhwc";
inline constexpr const char* kAttrDstNhwc = "__pointrt_dst_nhwc";
inline constexpr const char* kAttrSumNhwc = "__pointrt_sum_nhwc";
inline constexpr const char* kAttrGlobalMax = "__pointrt_global_max";
inline constexpr const char* kAttrGlobalMaxKeepdims = "__pointrt_global_max_keepdims";
/// QConv's input position of the residual operand s.
inline constexpr int kQConvSumInput = 9;

/// What happens to the int32 accumulators (bias already added): scale, residual, ReLU, round.
struct Requantize {
  std::vector<float> multiplier;  // per output channel (one entry: every channel)
  bool float_output = false;      // y float32 = acc * multiplier (no rounding, no zero point)
  bool relu = false;
  bool has_sum = false;
  float sum_scale = 1.f;  // multiplier of (s - sum_zero_point)
  int32_t sum_zero_point = 0;
  int32_t zero_point = 0;  // of y
  // The convolution's own quantization before a residual sum (ONNX Runtime's QLinearConv, then
  // QLinearAdd): acc * multiplier is rounded and clamped to [mid_lo, mid_hi] (its int8 range
  // less its zero point), then scaled by mid_to_y into y's scale, then the sum is added.
  bool mid = false;
  float mid_to_y = 1.f;
  float mid_lo = 0.f, mid_hi = 0.f;
  DType out = DType::kInt32;  // int32 (no requantization), int8, uint8 or float32
  float channel_multiplier(int64_t m) const { return multiplier.size() == 1 ? multiplier[0] : multiplier[m]; }
};

/// acc = conv(x - x_zp, w - w_zp) in int32 on plain [N, C, ...] data; x, w int8 or uint8;
/// w_zp has one entry or one per output channel. The geometry comes from nn::conv_geometry.
void conv_integer_ref(const nn::ConvGeometry& g, const Tensor& x, int32_t x_zp, const Tensor& w,
                      const std::vector<int32_t>& w_zp, int32_t* acc);

/// y[n, m, ...] from acc[n, m, ...] (+ bias[m] when given) by `r`; `s` is the residual operand
/// (plain, y's shape; int8/uint8, or float32 for a float output) when r.has_sum. y plain.
void requantize_ref(const Requantize& r, const int32_t* acc, const int32_t* bias, int64_t batch, int64_t channels,
                    int64_t spatial, const Tensor* s, Tensor& y);

std::unique_ptr<OpKernel> make_conv_integer_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_qlinear_conv_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_qconv_kernel(const KernelInit& init);
/// Implementation oneDNN picked for a QConv-family kernel at input shape `x` ("reference" when
/// the reference kernel runs, "" when `k` is not one). For tests.
std::string qconv_impl_name(const OpKernel& k, const Shape& x);

}  // namespace pointrt::quant
