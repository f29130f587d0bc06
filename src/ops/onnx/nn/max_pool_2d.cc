// MaxPool over two spatial dims of plain NCHW float32, int8 or uint8 (or NHWC int8/uint8), without Indices
// (CenterPoint's 3x3 peak test, PSPNet-style stems, quantized ResNet stems): per output row, each
// window tap is one vectorised pass over the output columns it reaches, so the work is kh * kw
// contiguous passes instead of a window walk per output. The same results as max_pool_ref:
// float taps in row-major window order, ties keep the first, NaN skipped unless every tap is NaN
// (the accumulator starts at NaN, which any number replaces); integers start at the type's
// lowest value, so a window without a tap inside (which the reference fills with 0) is left to
// the reference.
#include <omp.h>

#include <algorithm>
#include <limits>
#include <type_traits>

#include "ops/onnx/nn/pool.h"

namespace pointrt::nn {

namespace {

// acc = v when v is larger or acc is still NaN; a NaN v never replaces a number.
// (`|`, not `||`: no branch, so the tap loops vectorise.)
inline float max_keep_first(float acc, float v) { return ((v > acc) | (acc != acc)) ? v : acc; }
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

// Output columns [j0, j1) whose tap at column offset `dx` (input col j * s - pb + dx) is inside.
inline void valid_columns(int64_t dx, int64_t s, int64_t pb, int64_t in_w, int64_t out_w, int64_t& j0, int64_t& j1) {
  const int64_t lo = pb - dx;  // need j * s >= lo
  j0 = lo <= 0 ? 0 : (lo + s - 1) / s;
  const int64_t hi = in_w - 1 + pb - dx;  // need j * s <= hi
  j1 = hi < 0 ? 0 : std::min(out_w, hi / s + 1);
  j0 = std::min(j0, j1);
}

// One window tap over output columns [j0, j1): out and src never overlap (restrict: vectorises).
template <typename T>
inline void tap_pass(T* __restrict out, const T* __restrict src, int64_t j0, int64_t j1) {
  for (int64_t j = j0; j < j1; ++j) out[j] = max_keep_first(out[j], src[j]);
}

template <typename T>
void pool_row(const T* plane, T* out, const PoolGeometry& g, int64_t oy) {
  const int64_t in_h = g.in_spatial[0], in_w = g.in_spatial[1], out_w = g.out_spatial[1];
  const int64_t sy = g.strides[0], sx = g.strides[1], dy = g.dilations[0], dx = g.dilations[1];
  std::fill(out, out + out_w, start_value<T>());
  for (int64_t ky = 0; ky < g.kernel[0]; ++ky) {
    const int64_t iy = oy * sy - g.pad_begin[0] + ky * dy;
    if (iy < 0 || iy >= in_h) continue;
    const T* row = plane + iy * in_w;
    for (int64_t kx = 0; kx < g.kernel[1]; ++kx) {
      int64_t j0, j1;
      valid_columns(kx * dx, sx, g.pad_begin[1], in_w, out_w, j0, j1);
      const T* src = row - g.pad_begin[1] + kx * dx;
      if (sx == 1)
        tap_pass(out, src, j0, j1);
      else
        for (int64_t j = j0; j < j1; ++j) out[j] = max_keep_first(out[j], src[j * sx]);
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
#pragma omp parallel for schedule(static) if (work > (1 << 18))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t plane = r / out_h, oy = r % out_h;
    pool_row(x + plane * in_size, y + r * out_w, g, oy);
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
