// MaxPool over two spatial dims of plain NCHW float32, int8 or uint8 (or NHWC int8/uint8), without Indices
// (CenterPoint's 3x3 peak test, PSPNet-style stems, quantized ResNet stems): per output row, each
// window tap is one vectorised pass over the output row (the input row padded with start
// values), so the work is kh * kw contiguous passes instead of a window walk per output. The same
// results as max_pool_ref: float taps in row-major window order, ties keep the first, NaN skipped unless every tap is
// NaN (the accumulator starts at NaN, which any number replaces); integers start at the type's lowest value, so a
// window without a tap inside (which the reference fills with 0) is left to the reference.
#include <omp.h>

#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/onnx/nn/pool.h"

namespace pointrt::nn {

namespace {

// acc = v when v is larger or acc is still NaN; a NaN v never replaces a number. Two selects
// (v > NaN is false, so the second one takes v exactly when acc is still NaN): GCC 12 vectorises
// chains of these, not of one select on `(v > acc) | (acc != acc)`.
inline float max_keep_first(float acc, float v) {
  const float larger = v > acc ? v : acc;
  return acc != acc ? v : larger;
}
template <typename T>
inline T max_keep_first(T acc, T v) {
  return v > acc ? v : acc;
}

template <typename T>
T start_value() {
  return std::numeric_limits<T>::lowest();
}
template <>
float start_value<float>() {
  return std::numeric_limits<float>::quiet_NaN();
}

// True when some output position along one spatial axis has no window tap inside the input.
bool has_empty_window(int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pb) {
  for (int64_t o = 0; o < out; ++o) {
    bool any = false;
    for (int64_t t = 0; t < k && !any; ++t) {
      const int64_t p = o * s - pb + t * d;
      any = p >= 0 && p < in;
    }
    if (!any) return true;
  }
  return false;
}

// True when some output window of the 2-D pool has no tap inside the input (integer kernels
// leave those to the reference, which fills them with 0).
bool some_window_empty(const PoolGeometry& g) {
  for (size_t a = 0; a < 2; ++a)
    if (has_empty_window(g.in_spatial[a], g.out_spatial[a], g.kernel[a], g.strides[a], g.dilations[a], g.pad_begin[a]))
      return true;
  return false;
}

// One window tap over output columns [0, n): out and src never overlap (restrict: vectorises).
template <typename T>
inline void tap_pass(T* __restrict out, const T* __restrict src, int64_t n) {
  for (int64_t j = 0; j < n; ++j) out[j] = max_keep_first(out[j], src[j]);
}

// Three taps of one window row in one pass (kernel width 3, stride 1: CenterPoint's peak test),
// in the same order as three tap_pass calls.
template <typename T>
inline void tap3_pass(T* __restrict out, const T* __restrict src, int64_t dx, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    const T a = max_keep_first(max_keep_first(out[j], src[j]), src[j + dx]);
    out[j] = max_keep_first(a, src[j + 2 * dx]);
  }
}

// Nine taps of a 3x3 window whose rows are all inside (stride 1 along the row), in one pass and
// in row-major tap order; no read of `out` before the write.
template <typename T>
inline void tap3x3_pass(T* __restrict out, const T* __restrict r0, const T* __restrict r1, const T* __restrict r2,
                        int64_t dx, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    T a = max_keep_first(max_keep_first(r0[j], r0[j + dx]), r0[j + 2 * dx]);
    a = max_keep_first(max_keep_first(max_keep_first(a, r1[j]), r1[j + dx]), r1[j + 2 * dx]);
    out[j] = max_keep_first(max_keep_first(max_keep_first(a, r2[j]), r2[j + dx]), r2[j + 2 * dx]);
  }
}

// The input row seen from column -pad_begin, as wide as the windows of one output row reach
// (`span`): `row` itself when no tap falls outside it, else a copy in `slot` with start values in
// the pads. A start-value tap never changes a window's result (NaN never replaces a number;
// lowest never beats anything), so every tap pass covers all output columns with whole vectors
// (a range of 127 of 128 columns left a scalar tail on every pass).
template <typename T>
const T* padded_row(const T* row, const PoolGeometry& g, int64_t span, T* slot) {
  const int64_t in_w = g.in_spatial[1], pb = g.pad_begin[1];
  if (pb == 0 && span <= in_w) return row;
  const int64_t head = std::min(pb, span), body = std::max<int64_t>(0, std::min(in_w, span - head));
  std::fill(slot, slot + head, start_value<T>());
  std::copy(row, row + body, slot + head);
  std::fill(slot + head + body, slot + span, start_value<T>());
  return slot;
}

template <typename T>
void pool_row(const T* plane, T* out, const PoolGeometry& g, int64_t oy, std::vector<T>& buf) {
  const int64_t in_h = g.in_spatial[0], in_w = g.in_spatial[1], out_w = g.out_spatial[1];
  const int64_t sy = g.strides[0], sx = g.strides[1], dy = g.dilations[0], dx = g.dilations[1];
  const int64_t kh = g.kernel[0], kw = g.kernel[1];
  const int64_t span = (out_w - 1) * sx + (kw - 1) * dx + 1;
  if (static_cast<int64_t>(buf.size()) < kh * span) buf.resize(static_cast<size_t>(kh * span));
  auto window_row = [&](int64_t ky) -> const T* {  // null when the row is outside the input
    const int64_t iy = oy * sy - g.pad_begin[0] + ky * dy;
    return iy < 0 || iy >= in_h ? nullptr : padded_row(plane + iy * in_w, g, span, buf.data() + ky * span);
  };
  const bool rows3 = kh == 3 && kw == 3 && sx == 1;
  if (rows3) {
    const T *r0 = window_row(0), *r1 = window_row(1), *r2 = window_row(2);
    if (r0 && r1 && r2) return tap3x3_pass(out, r0, r1, r2, dx, out_w);
  }
  std::fill(out, out + out_w, start_value<T>());
  for (int64_t ky = 0; ky < kh; ++ky) {
    const T* base = window_row(ky);  // column -pad_begin
    if (base == nullptr) continue;
    if (sx == 1 && kw == 3) {
      tap3_pass(out, base, dx, out_w);
      continue;
    }
    for (int64_t kx = 0; kx < kw; ++kx) {
      const T* src = base + kx * dx;
      if (sx == 1)
        tap_pass(out, src, out_w);
      else
        for (int64_t j = 0; j < out_w; ++j) out[j] = max_keep_first(out[j], src[j * sx]);
    }
  }
}

}  // namespace

template <typename T>
bool max_pool_2d_plain(const PoolGeometry& g, const T* x, T* y) {
  if (g.in_spatial.size() != 2) return false;
  if (!std::is_floating_point_v<T> && some_window_empty(g)) return false;
  const int64_t planes = g.batch * g.channels, out_h = g.out_spatial[0], out_w = g.out_spatial[1];
  const int64_t in_size = g.in_spatial[0] * g.in_spatial[1], rows = planes * out_h;
  const int64_t work = rows * out_w * g.kernel[0] * g.kernel[1];
  if (rows * out_w == 0) return true;
#pragma omp parallel if (work > (1 << 18))
  {
    std::vector<T> buf;  // padded input rows, per thread
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t plane = r / out_h, oy = r % out_h;
      pool_row(x + plane * in_size, y + r * out_w, g, oy, buf);
    }
  }
  return true;
}

template <typename T>
bool max_pool_2d_nhwc(const PoolGeometry& g, const T* x, T* y) {
  if (g.in_spatial.size() != 2) return false;
  if (some_window_empty(g)) return false;
  const int64_t c = g.channels, in_h = g.in_spatial[0], in_w = g.in_spatial[1];
  const int64_t out_h = g.out_spatial[0], out_w = g.out_spatial[1], rows = g.batch * out_h;
  const int64_t work = rows * out_w * c * g.kernel[0] * g.kernel[1];
#pragma omp parallel for schedule(static) if (work > (1 << 18))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t n = r / out_h, oy = r % out_h;
    for (int64_t ox = 0; ox < out_w; ++ox) {
      T* __restrict out = y + (r * out_w + ox) * c;
      std::fill(out, out + c, start_value<T>());
      for (int64_t ky = 0; ky < g.kernel[0]; ++ky) {
        const int64_t iy = oy * g.strides[0] - g.pad_begin[0] + ky * g.dilations[0];
        if (iy < 0 || iy >= in_h) continue;
        for (int64_t kx = 0; kx < g.kernel[1]; ++kx) {
          const int64_t ix = ox * g.strides[1] - g.pad_begin[1] + kx * g.dilations[1];
          if (ix < 0 || ix >= in_w) continue;
          const T* __restrict src = x + ((n * in_h + iy) * in_w + ix) * c;
#pragma omp simd
          for (int64_t ch = 0; ch < c; ++ch) out[ch] = max_keep_first(out[ch], src[ch]);
        }
      }
    }
  }
  return true;
}

template bool max_pool_2d_plain<float>(const PoolGeometry&, const float*, float*);
template bool max_pool_2d_plain<int8_t>(const PoolGeometry&, const int8_t*, int8_t*);
template bool max_pool_2d_plain<uint8_t>(const PoolGeometry&, const uint8_t*, uint8_t*);
template bool max_pool_2d_nhwc<int8_t>(const PoolGeometry&, const int8_t*, int8_t*);
template bool max_pool_2d_nhwc<uint8_t>(const PoolGeometry&, const uint8_t*, uint8_t*);

}  // namespace pointrt::nn
