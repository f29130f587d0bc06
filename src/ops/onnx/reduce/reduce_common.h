// Shape helpers shared by the reduce family: splitting a shape around one axis, reading axes
// inputs, accumulator types and NaN-propagating max/min.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include "core/avx512_gcc12.h"
#include "ops/kernel.h"

namespace pointrt::reduce::detail {

/// Sum of map(x[i]) for i < n in kLanes float lanes (lane j takes i = j mod kLanes, so a lane sums
/// n / kLanes elements), the lanes then added in double by a tree. For rows of a few thousand
/// floats: a double accumulator per element costs a convert each, which bounds the loop.
template <int kLanes, typename Map>
inline double float_lanes_sum(const float* x, int64_t n, Map map) {
  static_assert(kLanes % 16 == 0, "whole vectors of 16 floats");
  float lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] += map(x[i + j]);
  for (int j = 0; i + j < n; ++j) lane[j] += map(x[i + j]);
  double wide[16];
  for (int j = 0; j < 16; ++j) {
    wide[j] = 0;
    for (int q = j; q < kLanes; q += 16) wide[j] += lane[q];
  }
  for (int w = 8; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) wide[j] += wide[j + w];
  return wide[0];
}

#if defined(__AVX512F__)
/// float_lanes_sum in explicit 16-float vectors, the same value bit for bit: lane 16q + j is lane
/// j of accumulator q; the tail adds map(x) under a mask (other lanes keep theirs); then lane j of
/// each accumulator, widened to double, is summed in accumulator order, and the 16 doubles by the
/// same tree (j with j + 8, + 4, + 2, + 1). `map` is the scalar map lane-wise on a vector.
/// GCC 12's form of float_lanes_sum spent as long on the widening and tree of a 256-wide row as
/// on its 16 loads and adds.
template <int kLanes, typename VectorMap>
inline double float_lanes_sum16(const float* x, int64_t n, VectorMap map) {
  static_assert(kLanes % 16 == 0 && kLanes <= 64, "1 to 4 whole vectors of 16 floats");
  constexpr int kVecs = kLanes / 16;
  __m512 acc[kVecs];
  for (int q = 0; q < kVecs; ++q) acc[q] = _mm512_setzero_ps();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int q = 0; q < kVecs; ++q) acc[q] = _mm512_add_ps(acc[q], map(_mm512_loadu_ps(x + i + 16 * q)));
  for (int q = 0; q < kVecs && i + 16 * q < n; ++q) {
    const int64_t left = n - i - 16 * q;
    const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
    acc[q] = _mm512_mask_add_ps(acc[q], m, acc[q], map(_mm512_maskz_loadu_ps(m, x + i + 16 * q)));
  }
  __m512d wide_lo = _mm512_cvtps_pd(_mm512_castps512_ps256(acc[0]));
  __m512d wide_hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[0]), 1)));
  for (int q = 1; q < kVecs; ++q) {
    wide_lo = _mm512_add_pd(wide_lo, _mm512_cvtps_pd(_mm512_castps512_ps256(acc[q])));
    wide_hi =
        _mm512_add_pd(wide_hi, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(acc[q]), 1))));
  }
  const __m512d w8 = _mm512_add_pd(wide_lo, wide_hi);
  const __m256d w4 = _mm256_add_pd(_mm512_castpd512_pd256(w8), _mm512_extractf64x4_pd(w8, 1));
  const __m128d w2 = _mm_add_pd(_mm256_castpd256_pd128(w4), _mm256_extractf128_pd(w4, 1));
  return _mm_cvtsd_f64(_mm_add_sd(w2, _mm_unpackhi_pd(w2, w2)));
}
#endif

/// A shape seen as [outer, axis_dim, inner] around one axis (row-major).
struct AxisSplit {
  int64_t outer = 1, axis_dim = 1, inner = 1;
};
inline AxisSplit split_at_axis(const Shape& s, int64_t axis) {
  AxisSplit r;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) {
    if (i < axis)
      r.outer *= s[i];
    else if (i == axis)
      r.axis_dim = s[i];
    else
      r.inner *= s[i];
  }
  return r;
}

/// Read a 1-D (or scalar) int32/int64 tensor as int64 values; errors name the node and input.
inline std::vector<int64_t> read_int_list(const Tensor& t, const std::string& where, const char* what) {
  std::vector<int64_t> r;
  if (t.rank() > 1) fail(where, ": input '", what, "' must be a scalar or 1-D, got shape ", shape_to_string(t.shape()));
  if (t.dtype() == DType::kInt64)
    r.assign(t.data_as<int64_t>(), t.data_as<int64_t>() + t.numel());
  else if (t.dtype() == DType::kInt32)
    r.assign(t.data_as<int32_t>(), t.data_as<int32_t>() + t.numel());
  else
    fail(where, ": input '", what, "' must be int32 or int64, got ", dtype_name(t.dtype()));
  return r;
}

/// Sum/product accumulator: float sums in double, integer sums in 64 bits.
template <typename T>
using WideAcc = std::conditional_t<std::is_floating_point<T>::value, double,
                                   std::conditional_t<std::is_signed<T>::value, int64_t, uint64_t>>;

/// max/min that propagate NaN (as numpy and ONNX Runtime do).
template <typename T>
inline T max_nan(T a, T b) {
  if constexpr (std::is_floating_point<T>::value)
    return (b > a || b != b) ? b : a;
  else
    return b > a ? b : a;
}
template <typename T>
inline T min_nan(T a, T b) {
  if constexpr (std::is_floating_point<T>::value)
    return (b < a || b != b) ? b : a;
  else
    return b < a ? b : a;
}

/// The lowest / highest value of T (infinities for floats).
template <typename T>
inline T lowest_value() {
  if constexpr (std::is_floating_point<T>::value)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}
template <typename T>
inline T highest_value() {
  if constexpr (std::is_floating_point<T>::value)
    return std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::max();
}

}  // namespace pointrt::reduce::detail

namespace pointrt::reduce::detail {

/// True when `from` broadcasts to `to` by numpy's rules (aligned at the right, dims 1 or equal).
inline bool broadcastable_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != 1 && f != t) return false;
  }
  return true;
}

/// Write `src` (shape `from`, broadcastable to `to`) expanded to the dense shape `to` into dst.
template <typename T>
void expand_to(const T* src, const Shape& from, const Shape& to, T* dst) {
  const size_t rank = to.size();
  const int64_t n = shape_numel(to);
  if (n == 0) return;
  const int64_t m = shape_numel(from);
  if (m == n) {
    std::copy(src, src + n, dst);
    return;
  }
  // `from` is a trailing block of `to` (a bias row [N] or [1, N], a [C, H, W] plane): repeat it.
  const size_t off = rank - from.size();
  int64_t trailing = 1;
  for (size_t i = rank; i-- > off && from[i - off] == to[i];) trailing *= to[i];
  if (m == trailing && m > 0) {
    for (int64_t k = 0; k < n; k += m) std::copy(src, src + m, dst + k);
    return;
  }
  // Source strides aligned to `to`, 0 on broadcast axes.
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (size_t i = 0; i < from.size(); ++i) {
    size_t a = from.size() - 1 - i;
    stride[rank - 1 - i] = from[a] == 1 ? 0 : s;
    s *= from[a];
  }
  std::vector<int64_t> idx(rank, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (size_t a = 0; a < rank; ++a) off += idx[a] * stride[a];
    dst[k] = src[off];
    for (size_t a = rank; a-- > 0;) {
      if (++idx[a] < to[a]) break;
      idx[a] = 0;
    }
  }
}

}  // namespace pointrt::reduce::detail

namespace pointrt::reduce::detail {

/// Integer arithmetic that wraps (two's complement) instead of overflowing into undefined
/// behaviour: integers are added/multiplied as unsigned of at least 32 bits (narrower unsigned
/// types would promote to signed int). Floating types use the plain operators.
template <typename T, bool = std::is_integral<T>::value>
struct WrapType {
  using type = T;
};
template <typename T>
struct WrapType<T, true> {
  using type = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;
};
template <typename T>
inline T wadd(T a, T b) {
  using U = typename WrapType<T>::type;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
inline T wsub(T a, T b) {
  using U = typename WrapType<T>::type;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
inline T wmul(T a, T b) {
  using U = typename WrapType<T>::type;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

}  // namespace pointrt::reduce::detail
