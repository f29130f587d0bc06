// Float32 fast paths of the reductions exported graphs use most (Sum, Mean, SumSquare, L1, L2,
// Max, Min, LogSumExp) when one group of adjacent axes is reduced, i.e. the input is a [outer, R, inner]
// view. No intermediate buffer: each output is finished and written once.
//  - inner == 1, short rows (R <= 8, 16, 32: yanx27's sums over xyz, per-head dot products):
//    one loop over the rows with the row unrolled at compile time;
//  - inner == 1, long rows: rows of at most kBlock elements in 64 float lanes, longer ones in 16
//    double lanes per block of kBlock elements;
//  - inner > 1 (a middle or leading axis): rows of `inner` accumulated into a block of columns
//    (max/min of narrow rows: 16 columns kept in registers over every row).
// Sums over the last axis accumulate in double (rows up to kBlock: float lanes of <= 16 elements,
// combined in double) (as the generic path: 2^24 + 1 + 1 ... does not
// stall); over a middle axis in float within chunks of 64 rows, chunks in double (ONNX Runtime
// sums in float); max/min in float. LogSumExp: a max sweep, then exp(x - max) summed with a
// vectorised exp. The loops are written so that they vectorise.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/lanes16.h"
#include "ops/onnx/reduce/exp_float.h"
#include "ops/onnx/reduce/reduce.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

constexpr int64_t kBlock = 1024;
constexpr int64_t kParallelWork = 1 << 15;

// Per kind: the element map, how partials combine, and the final transform of the total.
template <ReduceKind K>
constexpr bool kIsExtremum = K == ReduceKind::kMax || K == ReduceKind::kMin;

// AccT: the accumulator (float for max/min; double for sums, or float within a chunk of rows).
template <ReduceKind K, typename AccT = std::conditional_t<kIsExtremum<K>, float, double>>
struct FloatOp {
  static constexpr bool kExtremum = kIsExtremum<K>;
  using Acc = AccT;
  static Acc init() {
    if constexpr (K == ReduceKind::kMax) return -std::numeric_limits<float>::infinity();
    if constexpr (K == ReduceKind::kMin) return std::numeric_limits<float>::infinity();
    return 0.f;
  }
  static Acc map(float x) {
    if constexpr (K == ReduceKind::kSumSquare || K == ReduceKind::kL2) return Acc(x) * Acc(x);
    if constexpr (K == ReduceKind::kL1) return std::fabs(Acc(x));
    return Acc(x);
  }
  // NaN-propagating for max/min (a NaN operand wins), a plain sum otherwise.
  static Acc combine(Acc a, Acc b) {
    if constexpr (K == ReduceKind::kMax) return (b > a || b != b) ? b : a;
    if constexpr (K == ReduceKind::kMin) return (b < a || b != b) ? b : a;
    return a + b;
  }
  // Mean multiplies by 1 / count (hoisted out of the callers' loops): a double division per
  // output cost ReduceMean over [64, 32, 4882]'s middle axis ~90 us more than ReduceSum (1.6 ms).
  // The product differs from the quotient by at most an ulp of double before rounding to float.
  static float finish(double total, int64_t count) {
    if constexpr (K == ReduceKind::kMean) return count ? static_cast<float>(total * (1.0 / double(count))) : 0.f;
    if constexpr (K == ReduceKind::kL2) return static_cast<float>(std::sqrt(total));
    return static_cast<float>(total);
  }
};

template <ReduceKind K, int kR>
void short_rows_fixed(const float* x, float* y, int64_t outer) {
  using Op = FloatOp<K>;
#pragma omp parallel for if (outer * kR > kParallelWork)
  for (int64_t o = 0; o < outer; ++o) {
    const float* row = x + o * kR;
    if constexpr (kR % 8 == 0) {  // 8 independent lanes, then a tree: vectorises
      typename Op::Acc lane[8];
      for (int j = 0; j < 8; ++j) lane[j] = Op::map(row[j]);
      for (int r = 8; r < kR; r += 8)
        for (int j = 0; j < 8; ++j) lane[j] = Op::combine(lane[j], Op::map(row[r + j]));
      for (int w = 4; w >= 1; w /= 2)
        for (int j = 0; j < w; ++j) lane[j] = Op::combine(lane[j], lane[j + w]);
      y[o] = Op::finish(lane[0], kR);
    } else {
      typename Op::Acc a = Op::map(row[0]);
      for (int r = 1; r < kR; ++r) a = Op::combine(a, Op::map(row[r]));
      y[o] = Op::finish(a, kR);
    }
  }
}

#if defined(__AVX512F__)
// maxps(v, acc) / minps(v, acc): acc where v is NaN (the callers keep a NaN flag of their own).
template <ReduceKind K>
inline __m512 extremum16(__m512 v, __m512 acc) {
  return K == ReduceKind::kMax ? _mm512_max_ps(v, acc) : _mm512_min_ps(v, acc);
}
#endif

// Max/min of a block with a NaN flag (a NaN anywhere wins, as a quiet NaN). With AVX-512: four
// accumulators (a NaN element never enters one: maxps/minps return the accumulator, their second
// operand) and the lanes folded in registers; GCC 12's form of the OpenMP simd reduction below
// took ReduceMax over rows of 256 to 1.1-1.2x ONNX Runtime's time.
template <ReduceKind K>
float extremum_block(const float* x, int64_t n) {
#if defined(__AVX512F__)
  const __m512 init = _mm512_set1_ps(FloatOp<K>::init());
  constexpr auto step = extremum16<K>;
  __m512 m0 = init, m1 = init, m2 = init, m3 = init;
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {  // one unordered compare finds a NaN in either of two vectors
    const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
    const __m512 c = _mm512_loadu_ps(x + i + 32), d = _mm512_loadu_ps(x + i + 48);
    m0 = step(a, m0);
    m1 = step(b, m1);
    m2 = step(c, m2);
    m3 = step(d, m3);
    nan |= _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(c, d, _CMP_UNORD_Q);
  }
  m0 = step(m2, m0);
  m1 = step(m3, m1);
  for (; i < n; i += 16) {
    const __mmask16 in = n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 a = _mm512_mask_loadu_ps(init, in, x + i);
    m0 = step(a, m0);
    nan |= _mm512_mask_cmp_ps_mask(in, a, a, _CMP_UNORD_Q);
  }
  if (nan) return std::numeric_limits<float>::quiet_NaN();
  const __m512 m = step(m1, m0);
  return K == ReduceKind::kMax ? lanes_max(m) : lanes_min(m);
#else
  float m = FloatOp<K>::init();
  int nan = 0;
  if constexpr (K == ReduceKind::kMax) {
#pragma omp simd reduction(max : m) reduction(| : nan)
    for (int64_t i = 0; i < n; ++i) {
      m = x[i] > m ? x[i] : m;
      nan |= x[i] != x[i];
    }
  } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
    for (int64_t i = 0; i < n; ++i) {
      m = x[i] < m ? x[i] : m;
      nan |= x[i] != x[i];
    }
  }
  return nan ? std::numeric_limits<float>::quiet_NaN() : m;
#endif
}

// One long contiguous row (16 lanes per block for sums).
template <ReduceKind K>
double long_row(const float* x, int64_t R) {
  using Op = FloatOp<K>;
  if constexpr (Op::kExtremum) {
    float m = Op::init();
    for (int64_t b = 0; b < R; b += kBlock) m = Op::combine(m, extremum_block<K>(x + b, std::min(kBlock, R - b)));
    return m;
  } else if (R <= kBlock) {
    // A row of one block (softmax-like widths, 256 features): 64 float lanes (four vectors)
    // instead of 16 double ones: half the converts, enough independent adds to hide their
    // latency. Each lane sums at most 16 elements.
#if defined(__AVX512F__)
    return detail::float_lanes_sum16<64>(x, R, [](__m512 v) {
      if constexpr (K == ReduceKind::kSumSquare || K == ReduceKind::kL2) return _mm512_mul_ps(v, v);
      if constexpr (K == ReduceKind::kL1) return _mm512_abs_ps(v);
      static_assert(K == ReduceKind::kSum || K == ReduceKind::kMean || K == ReduceKind::kSumSquare ||
                        K == ReduceKind::kL1 || K == ReduceKind::kL2,
                    "the vector map covers FloatOp::map's cases");
      return v;
    });
#else
    return detail::float_lanes_sum<64>(x, R, [](float v) { return FloatOp<K, float>::map(v); });
#endif
  } else {
    double total = 0;
    for (int64_t b = 0; b < R; b += kBlock) {
      const int64_t n = std::min(kBlock, R - b);
      const float* p = x + b;
      double lane[16] = {};
      int64_t i = 0;
      for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; ++j) lane[j] += Op::map(p[i + j]);
      for (; i < n; ++i) lane[0] += Op::map(p[i]);
      for (int w = 8; w >= 1; w /= 2)
        for (int j = 0; j < w; ++j) lane[j] += lane[j + w];
      total += lane[0];
    }
    return total;
  }
}

template <ReduceKind K>
void rows_last_axis(const float* x, float* y, int64_t outer, int64_t R) {
  switch (R) {
    case 1: return short_rows_fixed<K, 1>(x, y, outer);
    case 2: return short_rows_fixed<K, 2>(x, y, outer);
    case 3: return short_rows_fixed<K, 3>(x, y, outer);
    case 4: return short_rows_fixed<K, 4>(x, y, outer);
    case 6: return short_rows_fixed<K, 6>(x, y, outer);
    case 8: return short_rows_fixed<K, 8>(x, y, outer);
    case 16: return short_rows_fixed<K, 16>(x, y, outer);  // attention heads of 16
    case 32: return short_rows_fixed<K, 32>(x, y, outer);
    default: break;
  }
  const int threads = omp_get_max_threads();
  if (outer < threads && R >= 4 * kParallelWork && threads > 1) {  // few huge rows: split each
    std::vector<double> part(static_cast<size_t>(threads));
    const int64_t chunk = (R + threads - 1) / threads;
    for (int64_t o = 0; o < outer; ++o) {
#pragma omp parallel for
      for (int t = 0; t < threads; ++t) {
        const int64_t b = std::min(R, t * chunk), e = std::min(R, b + chunk);
        part[t] = long_row<K>(x + o * R + b, e - b);  // an empty chunk gives the identity
      }
      double total = part[0];
      for (int t = 1; t < threads; ++t)
        total = FloatOp<K>::kExtremum ? FloatOp<K>::combine(float(total), float(part[t])) : total + part[t];
      y[o] = FloatOp<K>::finish(total, R);
    }
    return;
  }
#pragma omp parallel for if (outer * R > kParallelWork)
  for (int64_t o = 0; o < outer; ++o) y[o] = FloatOp<K>::finish(long_row<K>(x + o * R, R), R);
}

// acc[j] = combine(acc[j], map(row[j])) over one column block.
template <ReduceKind K, typename A>
inline void accumulate(A* __restrict acc, const float* __restrict row, int64_t n) {
  using Op = FloatOp<K, A>;
  for (int64_t j = 0; j < n; ++j) acc[j] = Op::combine(acc[j], Op::map(row[j]));
}

// Four rows at once: the accumulators are loaded and stored once per four rows, which is what
// bounds the loop above (a sum differs from four single-row steps only by double rounding).
template <ReduceKind K, typename A>
inline void accumulate4(A* __restrict acc, const float* __restrict row, int64_t stride, int64_t n) {
  using Op = FloatOp<K, A>;
  const float* __restrict r0 = row;
  const float* __restrict r1 = row + stride;
  const float* __restrict r2 = row + 2 * stride;
  const float* __restrict r3 = row + 3 * stride;
  for (int64_t j = 0; j < n; ++j) {
    const auto a = Op::combine(Op::map(r0[j]), Op::map(r1[j]));
    const auto b = Op::combine(Op::map(r2[j]), Op::map(r3[j]));
    acc[j] = Op::combine(acc[j], Op::combine(a, b));
  }
}

// [outer, R, inner] with inner > 1: blocks of kColBlock columns, every row added into the block.
// Max/min run over all R rows in float. Sums accumulate in float over chunks of kChunkRows rows
// (each 4-row step summed pairwise first; the error per output is that of a float sum of at most
// kChunkRows / 4 + 3 terms, as ONNX Runtime's float sums), chunks added in double when R is longer.
constexpr int64_t kChunkRows = 64;
constexpr int64_t kColBlock = 4096;  // 16 KiB of float accumulators: long contiguous row pieces

template <ReduceKind K>
void middle_axis(const float* x, float* y, int64_t outer, int64_t R, int64_t inner) {
  using Op = FloatOp<K>;
  using Chunk = FloatOp<K, float>;  // float accumulation within one chunk of rows (sums)
  const int64_t col_blocks = (inner + kColBlock - 1) / kColBlock;
  const int64_t jobs = outer * col_blocks;
#pragma omp parallel for schedule(static) if (outer * R * inner > kParallelWork)
  for (int64_t job = 0; job < jobs; ++job) {
    const int64_t o = job / col_blocks, c0 = (job % col_blocks) * kColBlock, n = std::min(kColBlock, inner - c0);
    const float* base = x + o * R * inner + c0;
    float* out = y + o * inner + c0;
    alignas(64) float acc[kColBlock];
    const int64_t chunk = Op::kExtremum ? R : kChunkRows;
    double total[kColBlock];  // only when R > chunk
    for (int64_t r0 = 0; r0 < R; r0 += chunk) {
      const int64_t r1 = std::min(R, r0 + chunk);
      std::fill(acc, acc + n, Chunk::init());
      int64_t r = r0;
      for (; r + 4 <= r1; r += 4) accumulate4<K, float>(acc, base + r * inner, inner, n);
      for (; r < r1; ++r) accumulate<K, float>(acc, base + r * inner, n);
      if (R <= chunk) break;
      if (r0 == 0)
        for (int64_t j = 0; j < n; ++j) total[j] = acc[j];
      else
        for (int64_t j = 0; j < n; ++j) total[j] += acc[j];
    }
    if (R <= chunk)
      for (int64_t j = 0; j < n; ++j) out[j] = Op::finish(acc[j], R);
    else
      for (int64_t j = 0; j < n; ++j) out[j] = Op::finish(total[j], R);
  }
}

// Max/min over a middle axis of narrow rows (inner < 64, e.g. [B, C, K, S] with few S): 16
// columns at a time stay in registers over all R rows, four rows combined pairwise per step (the
// block path above reloads and stores its accumulators every four rows and pays a loop setup per
// row piece, most of its work at this width). Same combine, so the same results.
template <ReduceKind K>
void middle_axis_narrow_extremum(const float* x, float* y, int64_t outer, int64_t R, int64_t inner) {
  using Op = FloatOp<K>;
  constexpr int kW = 16;
#pragma omp parallel for schedule(static) if (outer * R * inner > kParallelWork)
  for (int64_t o = 0; o < outer; ++o) {
    const float* base = x + o * R * inner;
    for (int64_t c0 = 0; c0 < inner; c0 += kW) {
      const int n = static_cast<int>(std::min<int64_t>(kW, inner - c0));
      const float* col = base + c0;
      float acc[kW];
      for (int j = 0; j < kW; ++j) acc[j] = Op::init();
#if defined(__AVX512F__)
      // The same combines in vectors: combine(p, q) is maxps(q, p) / minps(q, p) except for NaN,
      // which a per-lane flag turns into a quiet NaN at the end (GCC 12's form: 1.1-1.2x ORT).
      if (n == kW) {
        constexpr auto step = extremum16<K>;
        __m512 acc16 = _mm512_set1_ps(Op::init());
        __mmask16 nan = 0;
        int64_t r = 0;
        for (; r + 4 <= R; r += 4) {
          const float* c = col + r * inner;
          const __m512 c0 = _mm512_loadu_ps(c), c1 = _mm512_loadu_ps(c + inner);
          const __m512 c2 = _mm512_loadu_ps(c + 2 * inner), c3 = _mm512_loadu_ps(c + 3 * inner);
          nan |= _mm512_cmp_ps_mask(c0, c1, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(c2, c3, _CMP_UNORD_Q);
          acc16 = step(step(step(c3, c2), step(c1, c0)), acc16);
        }
        for (; r < R; ++r) {
          const __m512 v = _mm512_loadu_ps(col + r * inner);
          nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
          acc16 = step(v, acc16);
        }
        acc16 = _mm512_mask_mov_ps(acc16, nan, _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN()));
        _mm512_storeu_ps(y + o * inner + c0, acc16);
        continue;
      }
#endif
      if (n == kW) {  // whole-vector steps
        int64_t r = 0;
        for (; r + 4 <= R; r += 4)
          for (int j = 0; j < kW; ++j) {
            const float* c = col + r * inner + j;
            const float a = Op::combine(c[0], c[inner]), b = Op::combine(c[2 * inner], c[3 * inner]);
            acc[j] = Op::combine(acc[j], Op::combine(a, b));
          }
        for (; r < R; ++r)
          for (int j = 0; j < kW; ++j) acc[j] = Op::combine(acc[j], col[r * inner + j]);
      } else {
        for (int64_t r = 0; r < R; ++r)
          for (int j = 0; j < n; ++j) acc[j] = Op::combine(acc[j], col[r * inner + j]);
      }
      for (int j = 0; j < n; ++j) y[o * inner + c0 + j] = acc[j];
    }
  }
}

// LogSumExp in two sweeps: the maximum m, then sum exp(x - m) (a vectorised exp, float within
// blocks, double across them); the result is m + log(sum). NaN anywhere gives NaN; an infinite
// maximum is the result itself (as the reference: +inf wins, all -inf gives -inf).
inline float lse_finish(float m, double sum) {
  if (m != m || std::isinf(m)) return m;
  return static_cast<float>(static_cast<double>(m) + std::log(sum));
}

void lse_rows(const float* x, float* y, int64_t outer, int64_t R) {
#pragma omp parallel for if (outer * R > kParallelWork / 4)
  for (int64_t o = 0; o < outer; ++o) {
    const float* row = x + o * R;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t b = 0; b < R; b += kBlock)
      m = FloatOp<ReduceKind::kMax>::combine(m, extremum_block<ReduceKind::kMax>(row + b, std::min(kBlock, R - b)));
    double total = 0;
    if (m == m && !std::isinf(m))
      for (int64_t b = 0; b < R; b += kBlock) {
        const int64_t e = std::min(R, b + kBlock);
        float sum = 0;
#pragma omp simd reduction(+ : sum)
        for (int64_t r = b; r < e; ++r) sum += detail::exp_nonpositive(row[r] - m);
        total += sum;
      }
    y[o] = lse_finish(m, total);
  }
}

// exp(row[j] - m[j]) added into acc over one column block.
inline void lse_accumulate(float* __restrict acc, const float* __restrict row, const float* __restrict m, int64_t n) {
  for (int64_t j = 0; j < n; ++j) acc[j] += detail::exp_nonpositive(row[j] - m[j]);
}

void lse_middle(const float* x, float* y, int64_t outer, int64_t R, int64_t inner) {
  constexpr int64_t kCols = 256;  // the maxima, the sums and one chunk of rows stay in L1/L2
  const int64_t col_blocks = (inner + kCols - 1) / kCols;
  const int64_t jobs = outer * col_blocks;
#pragma omp parallel for schedule(static) if (outer * R * inner > kParallelWork / 4)
  for (int64_t job = 0; job < jobs; ++job) {
    const int64_t o = job / col_blocks, c0 = (job % col_blocks) * kCols, n = std::min(kCols, inner - c0);
    const float* base = x + o * R * inner + c0;
    alignas(64) float m[kCols], acc[kCols];
    double total[kCols];
    std::fill(m, m + n, -std::numeric_limits<float>::infinity());
    for (int64_t r = 0; r < R; ++r) accumulate<ReduceKind::kMax, float>(m, base + r * inner, n);
    // An infinite or NaN maximum makes x - m NaN somewhere; lse_finish ignores the sum then.
    for (int64_t r0 = 0; r0 < R; r0 += kChunkRows) {
      const int64_t r1 = std::min(R, r0 + kChunkRows);
      std::fill(acc, acc + n, 0.f);
      for (int64_t r = r0; r < r1; ++r) lse_accumulate(acc, base + r * inner, m, n);
      for (int64_t j = 0; j < n; ++j) total[j] = (r0 == 0 ? 0.0 : total[j]) + acc[j];
    }
    float* out = y + o * inner + c0;
    for (int64_t j = 0; j < n; ++j) out[j] = lse_finish(m[j], total[j]);
  }
}

template <ReduceKind K>
void single_group(const float* x, float* y, int64_t outer, int64_t R, int64_t inner) {
  if constexpr (K == ReduceKind::kLogSumExp) {
    if (inner == 1)
      lse_rows(x, y, outer, R);
    else
      lse_middle(x, y, outer, R, inner);
  } else if (inner == 1) {
    rows_last_axis<K>(x, y, outer, R);
  } else if (FloatOp<K>::kExtremum && inner < 64) {
    middle_axis_narrow_extremum<K>(x, y, outer, R, inner);
  } else {
    middle_axis<K>(x, y, outer, R, inner);
  }
}

}  // namespace

bool reduce_float32_fast(ReduceKind kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  if (x.dtype() != DType::kFloat32 || x.numel() == 0 || y.numel() == 0) return false;
  // [outer, R, inner] when the reduced axes (ignoring size-1 axes) are adjacent.
  int64_t outer = 1, R = 1, inner = 1;
  int state = 0;  // 0: before the group, 1: in it, 2: after it
  for (size_t i = 0; i < reduced.size(); ++i) {
    const int64_t d = x.dim(i);
    if (d == 1) continue;
    if (reduced[i]) {
      if (state == 2) return false;  // a second reduced group
      state = 1;
      R *= d;
    } else {
      if (state == 1) state = 2;
      (state == 0 ? outer : inner) *= d;
    }
  }
  const float* px = x.data_as<float>();
  float* py = y.data_as<float>();
  switch (kind) {
    case ReduceKind::kSum: single_group<ReduceKind::kSum>(px, py, outer, R, inner); return true;
    case ReduceKind::kMean: single_group<ReduceKind::kMean>(px, py, outer, R, inner); return true;
    case ReduceKind::kSumSquare: single_group<ReduceKind::kSumSquare>(px, py, outer, R, inner); return true;
    case ReduceKind::kL1: single_group<ReduceKind::kL1>(px, py, outer, R, inner); return true;
    case ReduceKind::kL2: single_group<ReduceKind::kL2>(px, py, outer, R, inner); return true;
    case ReduceKind::kMax: single_group<ReduceKind::kMax>(px, py, outer, R, inner); return true;
    case ReduceKind::kMin: single_group<ReduceKind::kMin>(px, py, outer, R, inner); return true;
    case ReduceKind::kLogSumExp: single_group<ReduceKind::kLogSumExp>(px, py, outer, R, inner); return true;
    default: return false;
  }
}

}  // namespace pointrt::reduce
