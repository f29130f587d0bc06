// ONNX Conv and ConvTranspose: attributes, output-shape rules and the reference kernels.
//
// Conv (opsets 1, 11):  X [N, C, D1..Dk], W [M, C/group, K1..Kk], B [M] -> Y [N, M, O1..Ok]
//   O_i = floor((D_i + pb_i + pe_i - ((K_i - 1) * d_i + 1)) / s_i) + 1
//   auto_pad SAME_UPPER / SAME_LOWER: O_i = ceil(D_i / s_i), total pad
//     t_i = max(0, (O_i - 1) * s_i + (K_i - 1) * d_i + 1 - D_i); SAME_UPPER puts the odd extra
//     at the end (pb = t/2), SAME_LOWER at the beginning (pb = t - t/2). VALID: no padding.
//   Padding positions contribute zero.
// ConvTranspose (opsets 1, 11): X [N, C, D..], W [C, M/group, K..] -> Y [N, M, O..]
//   each input element x[i] adds x[i] * w[k] to y[i * s - pb + k * d] (dropped when outside Y).
//   Without output_shape: O_i = s_i (D_i - 1) + output_padding_i + (K_i - 1) d_i + 1 - pb_i - pe_i.
//   With output_shape (or SAME_*, where output_shape defaults to D_i * s_i): the total padding
//   t_i = s_i (D_i - 1) + output_padding_i + (K_i - 1) d_i + 1 - O_i is split as the spec says:
//   SAME_UPPER pb = t/2 (floor), otherwise pb = t - t/2; pe = t - pb. t may be negative (the
//   output is larger than the input covers; those positions hold only the bias).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ir.h"

namespace pointrt::nn {

enum class AutoPad { kNotSet, kSameUpper, kSameLower, kValid };
AutoPad parse_auto_pad(const Attributes& attrs, const std::string& where);
/// Shared by Conv and the pools: kernel_shape, strides, dilations >= 1; pads >= 0 when checked.
void check_window_attrs(const std::vector<int64_t>& kernel_shape, const std::vector<int64_t>& strides,
                        const std::vector<int64_t>& dilations, const std::vector<int64_t>* pads,
                        const std::string& where);
/// A per-axis window attribute (strides, dilations, pads, output_padding): `n` copies of `dflt`
/// when absent, else exactly `n` values; the error names the attribute and `for_what` (the input
/// and its shape).
std::vector<int64_t> window_attr_values(const std::vector<int64_t>& values, const char* name, int64_t dflt, size_t n,
                                        const std::string& where, const std::string& for_what);

struct ConvAttrs {
  bool transpose = false;
  AutoPad auto_pad = AutoPad::kNotSet;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape;              // empty: from W
  std::vector<int64_t> strides, dilations, pads;  // empty: defaults once the rank is known
  std::vector<int64_t> output_padding;            // ConvTranspose
  std::vector<int64_t> output_shape;              // ConvTranspose, spatial only (N, C stripped)
};
ConvAttrs parse_conv_attrs(const Attributes& attrs, bool transpose, const std::string& where);

/// Everything a kernel needs once the input and weight shapes are known.
struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  Shape in_spatial, out_spatial, kernel;
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;  // pads may be < 0 (transpose)
  Shape output_shape() const;                                   // [N, M, O..]
};
/// Check X/W (/B) shapes and compute the geometry; errors name the node and the input.
ConvGeometry conv_geometry(const ConvAttrs& a, const Shape& x, const Shape& w, const Shape* b,
                           const std::string& where);

/// Reference kernels: direct loops, obviously correct, used as the test oracle and as the
/// fallback when oneDNN refuses a configuration (e.g. negative transpose padding).
void conv_ref(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y);
void conv_transpose_ref(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y);

}  // namespace pointrt::nn
