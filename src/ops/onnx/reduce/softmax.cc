// Softmax / LogSoftmax: contiguous rows (inner == 1) in three sweeps (max, exp+sum, scale);
// strided axes process a block of `inner` columns row by row so every read is contiguous.
#include "ops/onnx/reduce/softmax.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/avx512_gcc12.h"
#include "core/lanes16.h"
#include "core/stream_store.h"
#include "core/transpose16.h"
#include "ops/onnx/reduce/exp_float.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

using namespace detail;

// Softmax (or LogSoftmax) of one contiguous row; kWidth > 0 fixes R at compile time, so a short
// row becomes a few whole-vector operations (kWidth <= 1024: one block). Sums in T within the
// row (rows are short or the lanes many) and in double across blocks of 1024.
template <typename T, int64_t kWidth>
inline void softmax_row(const T* __restrict in, T* __restrict out, int64_t R_dyn, bool log) {
  const int64_t R = kWidth > 0 ? kWidth : R_dyn;
  // A NaN or an infinite maximum needs no special case: x - max is then NaN somewhere, exp
  // keeps it, so the sum and every output become NaN, as the definition gives.
  T mx = in[0];
#pragma omp simd reduction(max : mx)
  for (int64_t r = 0; r < R; ++r) mx = in[r] > mx ? in[r] : mx;
  if constexpr (kWidth > 0) {  // short row: one block, float sum
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t r = 0; r < R; ++r) {
      const T v = exp_nonpositive(in[r] - mx);
      out[r] = v;
      sum += v;
    }
    if (log) {
      const T log_sum = std::log(sum);
      for (int64_t r = 0; r < R; ++r) out[r] = (in[r] - mx) - log_sum;
    } else {
      const T scale = T(1) / sum;
      for (int64_t r = 0; r < R; ++r) out[r] *= scale;
    }
    return;
  }
  double total = 0;
  for (int64_t b = 0; b < R; b += 1024) {
    const int64_t e = std::min(R, b + 1024);
    T sum = 0;
    if (log) {
#pragma omp simd reduction(+ : sum)
      for (int64_t r = b; r < e; ++r) sum += exp_nonpositive(in[r] - mx);
    } else {
#pragma omp simd reduction(+ : sum)
      for (int64_t r = b; r < e; ++r) {
        const T v = exp_nonpositive(in[r] - mx);
        out[r] = v;
        sum += v;
      }
    }
    total += sum;
  }
  if (log) {
    const T log_sum = static_cast<T>(std::log(total));
    for (int64_t r = 0; r < R; ++r) out[r] = (in[r] - mx) - log_sum;
  } else {
    const T scale = static_cast<T>(1.0 / total);
    for (int64_t r = 0; r < R; ++r) out[r] *= scale;
  }
}

template <typename T, int64_t kWidth>
void softmax_rows_of(const T* x, T* y, int64_t outer, int64_t R, bool log) {
#pragma omp parallel for if (outer * R > (1 << 14))
  for (int64_t o = 0; o < outer; ++o) softmax_row<T, kWidth>(x + o * R, y + o * R, R, log);
}

// One block of n (<= 128) neighbouring columns of an [R, stride] layout, normalised down R.
template <typename T, int64_t kFixedWidth = 0>  // kFixedWidth > 0: n known at compile time
inline void softmax_column_block(const T* __restrict in, T* __restrict out, int64_t R, int64_t stride, int64_t n_dyn,
                                 bool log) {
  constexpr int64_t kBlock = 128;
  const int64_t n = kFixedWidth > 0 ? kFixedWidth : n_dyn;
  T mx[kBlock], e[kBlock];
  double sum[kBlock];
  for (int64_t j = 0; j < n; ++j) {
    mx[j] = in[j];
    sum[j] = 0;
  }
  for (int64_t r = 1; r < R; ++r) {
    const T* row = in + r * stride;
    for (int64_t j = 0; j < n; ++j) mx[j] = max_nan(mx[j], row[j]);
  }
  for (int64_t r = 0; r < R; ++r) {
    const T* row = in + r * stride;
    T* orow = out + r * stride;
    for (int64_t j = 0; j < n; ++j) e[j] = fast_exp(row[j] - mx[j]);
    for (int64_t j = 0; j < n; ++j) sum[j] += e[j];
    if (!log)
      for (int64_t j = 0; j < n; ++j) orow[j] = e[j];
  }
  T k[kBlock];
  if (log) {
    for (int64_t j = 0; j < n; ++j) k[j] = static_cast<T>(std::log(sum[j]));
    for (int64_t r = 0; r < R; ++r) {
      const T* row = in + r * stride;
      T* orow = out + r * stride;
      for (int64_t j = 0; j < n; ++j) orow[j] = (row[j] - mx[j]) - k[j];
    }
  } else {
    for (int64_t j = 0; j < n; ++j) k[j] = static_cast<T>(1.0 / sum[j]);
    for (int64_t r = 0; r < R; ++r) {
      T* orow = out + r * stride;
      for (int64_t j = 0; j < n; ++j) orow[j] *= k[j];
    }
  }
}

// A narrow strided axis (inner < 16, R <= 64: softmax over the k neighbours of [N, k, heads]):
// column blocks would be `inner` wide. Lines (o, i) are gathered 16 at a time into an [R, 16]
// block, normalised as columns (vectorised across the 16 lines) and scattered back.
template <typename T>
void softmax_gathered_lines(const T* x, T* y, int64_t outer, int64_t R, int64_t inner, bool log) {
  constexpr int64_t kLines = 16, kMaxR = 64;
  const int64_t lines = outer * inner, blocks = (lines + kLines - 1) / kLines;
#pragma omp parallel for if (lines * R > (1 << 14))
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t l0 = b * kLines, n = std::min(kLines, lines - l0);
    T in[kMaxR * kLines], out[kMaxR * kLines];
    int64_t base[kLines];
    for (int64_t j = 0; j < n; ++j) base[j] = (l0 + j) / inner * R * inner + (l0 + j) % inner;
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0; j < n; ++j) in[r * n + j] = x[base[j] + r * inner];
    if (n == kLines)
      softmax_column_block<T, kLines>(in, out, R, kLines, kLines, log);
    else
      softmax_column_block<T>(in, out, R, n, n, log);
    for (int64_t r = 0; r < R; ++r)
      for (int64_t j = 0; j < n; ++j) y[base[j] + r * inner] = out[r * n + j];
  }
}

template <typename T>
void softmax_strided(const T* x, T* y, int64_t outer, int64_t R, int64_t inner, bool log) {
  if (inner < 16 && R <= 64) return softmax_gathered_lines(x, y, outer, R, inner, log);
  constexpr int64_t kBlock = 128;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
#pragma omp parallel for collapse(2) if (outer * R * inner > (1 << 14))
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t i0 = b * kBlock, n = std::min(kBlock, inner - i0);
      softmax_column_block<T>(x + o * R * inner + i0, y + o * R * inner + i0, R, inner, n, log);
    }
}

// Many short rows (e.g. per-point class scores, [N, 13]): per-row reductions would cost more
// than the row. Blocks of 16 rows are transposed into [R, 16] so the column kernel vectorises
// across rows, then transposed back.
template <typename T>
void softmax_short_rows(const T* x, T* y, int64_t outer, int64_t R, bool log) {
  constexpr int64_t kRows = 16, kMaxR = 32;
  const int64_t blocks = (outer + kRows - 1) / kRows;
#pragma omp parallel for if (outer * R > (1 << 14))
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t o0 = b * kRows, n = std::min(kRows, outer - o0);
    T in[kMaxR * kRows], out[kMaxR * kRows];
    for (int64_t j = 0; j < n; ++j)
      for (int64_t r = 0; r < R; ++r) in[r * n + j] = x[(o0 + j) * R + r];
    if (n == kRows)
      softmax_column_block<T, kRows>(in, out, R, kRows, kRows, log);
    else
      softmax_column_block<T>(in, out, R, n, n, log);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t r = 0; r < R; ++r) y[(o0 + j) * R + r] = out[r * n + j];
  }
}

#if defined(__AVX512F__)
// Softmax of 16 rows of 16 held transposed in registers: v[c] lane l is element c of row l, so
// every step is a whole-vector operation across the rows (the per-row path is bound by two
// horizontal reductions per row). The same values as softmax_row: the max from element 0 on
// (maxps keeps its second operand when one is NaN, as the scalar compare does), exp_nonpositive,
// a float sum in element order.
inline void softmax_16x16_transposed(__m512 (&v)[16], bool log) {
  constexpr int kN = 16;
  __m512 mx = v[0];
  for (int c = 1; c < kN; ++c) mx = _mm512_max_ps(v[c], mx);
  __m512 sum = _mm512_setzero_ps();
  if (log) {
    for (int c = 0; c < kN; ++c) sum = _mm512_add_ps(sum, exp_nonpositive16(_mm512_sub_ps(v[c], mx)));
    alignas(64) float lanes[kN];
    _mm512_store_ps(lanes, sum);
    for (float& l : lanes) l = std::log(l);
    const __m512 log_sum = _mm512_load_ps(lanes);
    for (int c = 0; c < kN; ++c) v[c] = _mm512_sub_ps(_mm512_sub_ps(v[c], mx), log_sum);
    return;
  }
  for (int c = 0; c < kN; ++c) {
    v[c] = exp_nonpositive16(_mm512_sub_ps(v[c], mx));
    sum = _mm512_add_ps(sum, v[c]);
  }
  const __m512 scale = _mm512_div_ps(_mm512_set1_ps(1.f), sum);
  for (int c = 0; c < kN; ++c) v[c] = _mm512_mul_ps(v[c], scale);
}

// float rows of 16 (attention over 16 neighbours or heads): 16 rows at a time through an
// in-register 16 x 16 transpose; the rows left over take the per-row path.
void softmax_rows16(const float* x, float* y, int64_t outer, bool log) {
  constexpr int64_t kRows = 16;
  const int64_t blocks = outer / kRows;
#pragma omp parallel for if (outer * kRows > (1 << 14))
  for (int64_t b = 0; b < blocks; ++b) {
    __m512 v[kRows];
    const float* xb = x + b * kRows * kRows;
    for (int j = 0; j < kRows; ++j) v[j] = _mm512_loadu_ps(xb + j * kRows);
    transpose16x16(v);
    softmax_16x16_transposed(v, log);
    transpose16x16(v);
    float* yb = y + b * kRows * kRows;
    for (int j = 0; j < kRows; ++j) _mm512_storeu_ps(yb + j * kRows, v[j]);
  }
  const int64_t done = blocks * kRows;
  softmax_rows_of<float, 16>(x + done * kRows, y + done * kRows, outer - done, kRows, log);
}
#endif

#if defined(__AVX512F__)
// A float row of 33..1024 (class scores, attention rows) in explicit 16-float vectors: one sweep
// for the maximum, one for exp and its sum into a row buffer (two accumulators of 16 lanes, so
// each lane adds at most 32 values), one that scales the buffer into the output; the tail through
// masks. GCC 12's vectorisation of softmax_row ran these rows 1.4-1.9x ONNX Runtime's time.
// kStream: non-temporal stores (rows of whole aligned vectors only), for outputs far larger than
// the cache, whose lines would otherwise be read before being written.
constexpr int64_t kMaxVectorRow = 1024;

template <bool kStream>
void softmax_row16(const float* __restrict in, float* __restrict out, int64_t R, bool log) {
  alignas(64) float e[kMaxVectorRow];
  const int64_t full = R / 16 * 16;
  const __mmask16 tail = static_cast<__mmask16>((1u << (R - full)) - 1);
  // The row's first element seeds the maximum as in softmax_row (a NaN there stays out of it; a
  // NaN anywhere still reaches every output through the sum).
  // Two accumulators halve the chain of dependent maxima.
  __m512 m = _mm512_set1_ps(in[0]), m1 = m;
  int64_t j = 0;
  for (; j + 32 <= full; j += 32) {
    m = _mm512_max_ps(_mm512_loadu_ps(in + j), m);
    m1 = _mm512_max_ps(_mm512_loadu_ps(in + j + 16), m1);
  }
  if (j < full) m = _mm512_max_ps(_mm512_loadu_ps(in + j), m);
  if (tail) m = _mm512_mask_max_ps(m, tail, _mm512_maskz_loadu_ps(tail, in + full), m);
  m = _mm512_max_ps(m1, m);
  const __m512 mx = _mm512_set1_ps(lanes_max(m));
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  for (j = 0; j + 32 <= full; j += 32) {
    const __m512 a = exp_nonpositive16(_mm512_sub_ps(_mm512_loadu_ps(in + j), mx));
    const __m512 b = exp_nonpositive16(_mm512_sub_ps(_mm512_loadu_ps(in + j + 16), mx));
    _mm512_store_ps(e + j, a);
    _mm512_store_ps(e + j + 16, b);
    s0 = _mm512_add_ps(s0, a);
    s1 = _mm512_add_ps(s1, b);
  }
  if (j < full) {
    const __m512 a = exp_nonpositive16(_mm512_sub_ps(_mm512_loadu_ps(in + j), mx));
    _mm512_store_ps(e + j, a);
    s0 = _mm512_add_ps(s0, a);
  }
  if (tail) {
    const __m512 a =
        _mm512_maskz_mov_ps(tail, exp_nonpositive16(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, in + full), mx)));
    _mm512_store_ps(e + full, a);
    s0 = _mm512_add_ps(s0, a);
  }
  const float sum = lanes_sum(_mm512_add_ps(s0, s1));
  auto put = [&](int64_t at, __m512 v) {
    if constexpr (kStream)
      _mm512_stream_ps(out + at, v);
    else
      _mm512_storeu_ps(out + at, v);
  };
  if (log) {  // (x - max) - log(sum), from the input again
    const __m512 log_sum = _mm512_set1_ps(std::log(sum));
    for (j = 0; j < full; j += 16) put(j, _mm512_sub_ps(_mm512_sub_ps(_mm512_loadu_ps(in + j), mx), log_sum));
    if (tail)
      _mm512_mask_storeu_ps(out + full, tail,
                            _mm512_sub_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(tail, in + full), mx), log_sum));
    return;
  }
  const __m512 scale = _mm512_set1_ps(1.f / sum);
  for (j = 0; j < full; j += 16) put(j, _mm512_mul_ps(_mm512_load_ps(e + j), scale));
  if (tail) _mm512_mask_storeu_ps(out + full, tail, _mm512_mul_ps(_mm512_load_ps(e + full), scale));
}

void softmax_rows_vector(const float* x, float* y, int64_t outer, int64_t R, bool log) {
  const bool stream = outer * R * 4 > kStreamOutputBytes && R % 16 == 0 && (reinterpret_cast<uintptr_t>(y) & 63) == 0;
#pragma omp parallel if (outer * R > (1 << 14))
  {
#pragma omp for
    for (int64_t o = 0; o < outer; ++o) {
      if (stream)
        softmax_row16<true>(x + o * R, y + o * R, R, log);
      else
        softmax_row16<false>(x + o * R, y + o * R, R, log);
    }
    if (stream) _mm_sfence();  // each thread's streamed rows are visible before anyone reads them
  }
}
#endif

template <typename T>
void softmax_rows(const T* x, T* y, int64_t outer, int64_t R, bool log) {
#if defined(__AVX512F__)
  if constexpr (std::is_same_v<T, float>)
    if (R > 32 && R <= kMaxVectorRow) return softmax_rows_vector(x, y, outer, R, log);
#endif
  switch (R) {  // the short rows attention and per-neighbour weights use
    case 8: return softmax_rows_of<T, 8>(x, y, outer, R, log);
    case 16:
#if defined(__AVX512F__)
      if constexpr (std::is_same_v<T, float>) return softmax_rows16(x, y, outer, log);
#endif
      return softmax_rows_of<T, 16>(x, y, outer, R, log);
    case 32: return softmax_rows_of<T, 32>(x, y, outer, R, log);
    // Common class and feature widths: a compile-time width turns the three sweeps into whole
    // vectors without remainder loops (256: 11 -> 8-9 ms at 1e7, 1 thread). Float rows of these
    // widths take softmax_rows_vector where AVX-512 is there; these serve float64 and other CPUs.
    case 64: return softmax_rows_of<T, 64>(x, y, outer, R, log);
    case 128: return softmax_rows_of<T, 128>(x, y, outer, R, log);
    case 256: return softmax_rows_of<T, 256>(x, y, outer, R, log);
    default: break;
  }
  if (R <= 32 && outer >= 16) return softmax_short_rows<T>(x, y, outer, R, log);
  softmax_rows_of<T, 0>(x, y, outer, R, log);
}

class SoftmaxKernel : public OpKernel {
 public:
  SoftmaxKernel(const KernelInit& init, bool log, bool flatten_2d) : log_(log), flatten_2d_(flatten_2d) {
    axis_ = init.attrs().get_int("axis", flatten_2d ? 1 : -1);
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (!is_float_type(x.dtype()) || x.dtype() == DType::kFloat16)
      fail(ctx.where(), ": input 0 has element type ", dtype_name(x.dtype()), ", expected float32 or float64");
    const detail::AxisSplit v = softmax_view(x.shape(), axis_, flatten_2d_, ctx.where());
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    softmax_optimized(x, v.outer, v.axis_dim, v.inner, log_, y);
  }

 private:
  bool log_, flatten_2d_;
  int64_t axis_;
};

}  // namespace

detail::AxisSplit softmax_view(const Shape& x, int64_t axis, bool flatten_2d, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (!flatten_2d) return detail::split_at_axis(x, normalize_axis(axis, rank, where));
  // Opset < 13 accepts axis in [-rank, rank]; axis == rank makes rows of one element.
  if (axis < -rank || axis > rank) fail(where, ": axis ", axis, " is out of range for a tensor of rank ", rank);
  const int64_t a = axis < 0 ? axis + rank : axis;
  detail::AxisSplit v;
  v.outer = 1;
  v.axis_dim = 1;
  for (int64_t i = 0; i < rank; ++i) (i < a ? v.outer : v.axis_dim) *= x[i];
  return v;
}

void softmax_optimized(const Tensor& x, int64_t outer, int64_t R, int64_t inner, bool log, Tensor& y) {
  if (x.numel() == 0) return;
  dispatch_float(x.dtype(), "Softmax", [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1)
      softmax_rows<T>(x.data_as<T>(), y.data_as<T>(), outer, R, log);
    else
      softmax_strided<T>(x.data_as<T>(), y.data_as<T>(), outer, R, inner, log);
  });
}

std::unique_ptr<OpKernel> make_softmax_kernel(const KernelInit& init, bool log, bool flatten_2d) {
  return std::make_unique<SoftmaxKernel>(init, log, flatten_2d);
}

}  // namespace pointrt::reduce
