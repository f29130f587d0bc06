// ONNX MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool: attributes, shape rules and the
// reference kernels.
//
// Output size per spatial dim, with dk = (k - 1) * d + 1:
//   NOTSET: O = floor((D + pb + pe - dk) / s) + 1, or with ceil_mode ceil(...) + 1; in ceil mode
//           a last window that would start beyond the input and its left padding is dropped
//           (if (O - 1) * s >= D + pb then O -= 1), as PyTorch and ONNX 1.16 do.
//   SAME_UPPER / SAME_LOWER: O = ceil(D / s), total pad t = max(0, (O - 1) s + dk - D),
//           SAME_UPPER pb = t / 2 (the odd extra at the end), SAME_LOWER pb = t - t / 2.
//   VALID:  O = floor((D - dk) / s) + 1 (ceil with ceil_mode), no padding.
// Windows may reach past D + pe in ceil mode ("overflow"): those positions are never counted.
// MaxPool: padding never wins (acts as -inf). Ties keep the first maximum in row-major window
//   order. NaN inputs are skipped unless the whole window is NaN. Indices (optional output 1)
//   are flat positions in X: ((n*C + c)*D0 + i0)*D1 + i1 ... for storage_order 0, and with the
//   spatial dims in column-major order (last spatial dim slowest) for storage_order 1.
// AveragePool: count_include_pad = 0 divides by the number of input elements in the window;
//   = 1 divides by the full window (every tap), the ceil-mode overflow included. That is what
//   the ONNX 1.16 reference and its node tests (averagepool_3d_dilations_large_*_ceil_mode_is_
//   True) expect, and what oneDNN's avg_include_padding does; PyTorch does not count the
//   overflow, so a PyTorch export with ceil_mode=True, count_include_pad=True differs at the
//   last window.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/onnx/nn/conv.h"

namespace pointrt::nn {

enum class PoolKind { kMax, kAverage };

struct PoolAttrs {
  PoolKind kind = PoolKind::kMax;
  bool global = false;
  AutoPad auto_pad = AutoPad::kNotSet;
  bool ceil_mode = false;
  bool count_include_pad = false;
  int64_t storage_order = 0;
  std::vector<int64_t> kernel_shape, strides, dilations, pads;
};
PoolAttrs parse_pool_attrs(const Attributes& attrs, PoolKind kind, bool global, const std::string& where);

struct PoolGeometry {
  int64_t batch = 0, channels = 0;
  Shape in_spatial, out_spatial, kernel;
  std::vector<int64_t> strides, dilations, pad_begin, pad_end;
  Shape output_shape() const;
};
PoolGeometry pool_geometry(const PoolAttrs& a, const Shape& x, const std::string& where);

/// Reference pooling (any number of spatial dims). `indices` may be null.
template <typename T>
void max_pool_ref(const PoolGeometry& g, int64_t storage_order, const T* x, T* y, int64_t* indices);
void average_pool_ref(const PoolGeometry& g, bool count_include_pad, const float* x, float* y);
/// MaxPool of plain float32, int8 or uint8 with two spatial dims, no Indices (max_pool_2d.cc); the
/// same results as max_pool_ref. False (nothing written) for other ranks, and for integers when a
/// window has no tap inside the input.
template <typename T>
bool max_pool_2d_plain(const PoolGeometry& g, const T* x, T* y);
/// The same for int8 or uint8 X and Y in NHWC (channels-last), vectorised over the channels.
template <typename T>
bool max_pool_2d_nhwc(const PoolGeometry& g, const T* x, T* y);

}  // namespace pointrt::nn
