// MatMul / Gemm. float32 runs on oneDNN: dnnl_sgemm (row-major, OpenMP inside) per matrix, or,
// when B is a constant and A's shape is fixed in the model, a PackedMatmul (packed_matmul.h)
// created once at prepare time with B reordered into oneDNN's blocked weights layout and Gemm's
// constant one-row C as its bias. Other element types use a cache-friendly i-k-j loop.
#include "ops/onnx/reduce/matmul.h"

#include <omp.h>

#include <immintrin.h>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <dnnl.hpp>
#include <limits>
#include <vector>

#include "core/stream_store.h"
#include "ops/onnx/reduce/packed_matmul.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

using namespace detail;

template <typename T>
void gemm_generic(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                  int64_t ldb, T beta, T* C, int64_t ldc, bool parallel) {
  auto row = [&](int64_t i) {
    T* c = C + i * ldc;
    // Integers wrap on overflow (wadd/wmul), never undefined behaviour.
    if (beta == T(0))
      std::fill(c, c + N, T(0));
    else if (beta != T(1))
      for (int64_t j = 0; j < N; ++j) c[j] = wmul(c[j], beta);
    if (!tb) {
      for (int64_t k = 0; k < K; ++k) {
        const T a = wmul(alpha, ta ? A[k * lda + i] : A[i * lda + k]);
        const T* b = B + k * ldb;
        for (int64_t j = 0; j < N; ++j) c[j] = wadd(c[j], wmul(a, b[j]));
      }
    } else {
      for (int64_t j = 0; j < N; ++j) {
        const T* b = B + j * ldb;
        T sum = T(0);
        if (!ta)
          for (int64_t k = 0; k < K; ++k) sum = wadd(sum, wmul(A[i * lda + k], b[k]));
        else
          for (int64_t k = 0; k < K; ++k) sum = wadd(sum, wmul(A[k * lda + i], b[k]));
        c[j] = wadd(c[j], wmul(alpha, sum));
      }
    }
  };
  // No parallel construct at all when serial: an `if(false)` region nested in the batch loop's
  // region still builds a team of one (an allocation and several futex calls per product).
  if (parallel && M * N * K > (1 << 15) && omp_get_max_threads() > 1) {
#pragma omp parallel for
    for (int64_t i = 0; i < M; ++i) row(i);
  } else {
    for (int64_t i = 0; i < M; ++i) row(i);
  }
}

// Short inner dimension (K <= 16: squared distances with K = 3, attention heads of 16) or a
// tiny product (K <= 32): oneDNN's packing costs more than the product. C is built in tiles of
// 2 rows x 64 columns held in registers (GCC/Clang vector types: 8 vectors of 16 floats, each B
// load used twice); B is row-major [K, N] (transposed into a buffer first when given as [N, K]).
using f32x16 = float __attribute__((vector_size(64)));

inline f32x16 load16(const float* p) {
  f32x16 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline void store16(float* p, f32x16 v) { std::memcpy(p, &v, sizeof(v)); }
// A store that bypasses the caches (an aligned AVX-512 non-temporal store): for a C larger than
// the last-level cache share, whose lines would otherwise be read before written. The caller
// streams only a 64-byte aligned C with ldc % 16 == 0, so every tile column is aligned.
inline void store16_stream(float* p, f32x16 v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, (__m512)v);
#else
  store16(p, v);
#endif
}
// The tile's acc += a * b is meant to be a fused multiply-add (the build turns contraction off
// globally, for the kernels whose evaluation order OPS.md fixes; a GEMM has no such order).
#if defined(__clang__)
#define POINTRT_CONTRACT_FMA
#define POINTRT_CONTRACT_FMA_BODY _Pragma("clang fp contract(fast)")
#else
#define POINTRT_CONTRACT_FMA __attribute__((optimize("fp-contract=fast")))
#define POINTRT_CONTRACT_FMA_BODY
#endif

// Rows i0 (and i0 + 1 when two) x columns [j0, j0 + 16 kVecs) of C = alpha A B + beta C.
template <int kRows, int kVecs, bool kStream = false>
POINTRT_CONTRACT_FMA void small_sgemm_tile(const float* a, int64_t K, const float* B, int64_t ldb, int64_t j0,
                                           float beta, float* c0, float* c1) {
  POINTRT_CONTRACT_FMA_BODY
  // The fixed-count loops are unrolled explicitly: GCC 12 left them rolled, so the accumulators
  // lived on the stack (zeroed with `rep stos` per tile; K = 3 ran 7x slower than ORT).
  f32x16 acc[kRows][kVecs] = {};
  for (int64_t k = 0; k < K; ++k) {
    const float* b = B + k * ldb + j0;
    f32x16 bv[kVecs];
#pragma GCC unroll 8
    for (int q = 0; q < kVecs; ++q) bv[q] = load16(b + 16 * q);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const float ak = a[r * 32 + k];
#pragma GCC unroll 8
      for (int q = 0; q < kVecs; ++q) acc[r][q] += ak * bv[q];
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    float* c = (r == 0 ? c0 : c1) + j0;
#pragma GCC unroll 8
    for (int q = 0; q < kVecs; ++q) {
      if constexpr (kStream)  // beta == 0 (the caller checks)
        store16_stream(c + 16 * q, acc[r][q]);
      else
        store16(c + 16 * q, beta == 0.f ? acc[r][q] : acc[r][q] + beta * load16(c + 16 * q));
    }
  }
}

// One row of a streamed C for K <= 4 (squared distances): 16 columns at a time from the first to
// the last, each vector stored as soon as it is computed, so the non-temporal stores fill the
// row's lines in order ([9765, 3] x [3, 1024]: 2.5 ms through the 2 x 64 tiles, 1.7 ms this way,
// the machine's write bandwidth). The same multiply-adds in the same order as the tile; C's last
// N % 16 columns take plain stores.
POINTRT_CONTRACT_FMA void small_sgemm_stream_row(const float* a, int64_t K, const float* B, int64_t ldb, int64_t N,
                                                 float* c) {
  POINTRT_CONTRACT_FMA_BODY
  const int64_t full = N / 16 * 16;
  for (int64_t j = 0; j < full; j += 16) {
    f32x16 acc = {};
    for (int64_t k = 0; k < K; ++k) acc += a[k] * load16(B + k * ldb + j);
    store16_stream(c + j, acc);
  }
  for (int64_t j = full; j < N; ++j) {
    float acc = 0.f;
    for (int64_t k = 0; k < K; ++k) acc += a[k] * B[k * ldb + j];
    c[j] = acc;
  }
}

template <int kVecs>
inline void small_sgemm_rows(int64_t rows, const float* a, int64_t K, const float* B, int64_t ldb, int64_t j0,
                             float beta, float* c0, float* c1, bool stream = false) {
  if (rows == 2 && stream)
    small_sgemm_tile<2, kVecs, true>(a, K, B, ldb, j0, beta, c0, c1);
  else if (rows == 2)
    small_sgemm_tile<2, kVecs>(a, K, B, ldb, j0, beta, c0, c1);
  else
    small_sgemm_tile<1, kVecs>(a, K, B, ldb, j0, beta, c0, c1);
}

void small_sgemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                 const float* B, int64_t ldb, float beta, float* C, int64_t ldc, bool parallel) {
  std::vector<float> bt;
  if (tb) {
    bt.resize(static_cast<size_t>(K * N));
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k) bt[k * N + j] = B[j * ldb + k];
    B = bt.data();
    ldb = N;
  }
  const int64_t full = N / 64 * 64, tail = N - full, tail_vecs = (tail + 15) / 16, pairs = (M + 1) / 2;
  // The last N % 64 columns of B, zero-padded to whole vectors (so the tail runs the same code).
  float b_tail[32 * 64];
  for (int64_t k = 0; k < K && tail; ++k) {
    std::copy(B + k * ldb + full, B + k * ldb + N, b_tail + k * 64);
    std::fill(b_tail + k * 64 + tail, b_tail + k * 64 + 16 * tail_vecs, 0.f);
  }
  const bool stream =
      beta == 0.f && M * N * 4 > kStreamOutputBytes && (reinterpret_cast<uintptr_t>(C) & 63) == 0 && ldc % 16 == 0;
  if (stream && K <= 4) {
    auto row = [&](int64_t i) {
      float a[4];
      for (int64_t k = 0; k < K; ++k) a[k] = alpha * (ta ? A[k * lda + i] : A[i * lda + k]);
      small_sgemm_stream_row(a, K, B, ldb, N, C + i * ldc);
    };
#pragma omp parallel if (parallel && omp_get_max_threads() > 1)
    {
#pragma omp for
      for (int64_t i = 0; i < M; ++i) row(i);
#if defined(__AVX512F__)
      _mm_sfence();  // this thread's non-temporal stores before anyone reads C
#endif
    }
    return;
  }
  auto pair = [&](int64_t p) {
    const int64_t i0 = 2 * p, rows = std::min<int64_t>(2, M - i0);
    float a[64];  // alpha * A rows i0, i0 + 1 (32 apart)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < K; ++k) a[r * 32 + k] = alpha * (ta ? A[k * lda + i0 + r] : A[(i0 + r) * lda + k]);
    float* c0 = C + i0 * ldc;
    float* c1 = rows == 2 ? c0 + ldc : c0;
    for (int64_t j0 = 0; j0 < full; j0 += 64) small_sgemm_rows<4>(rows, a, K, B, ldb, j0, beta, c0, c1, stream);
#if defined(__AVX512F__)
    if (stream) _mm_sfence();  // this thread's non-temporal stores before anyone reads C
#endif
    if (!tail) return;
    float t0[64], t1[64];  // the tail through a padded tile of C
    if (beta != 0.f) {
      std::copy(c0 + full, c0 + N, t0);
      std::copy(c1 + full, c1 + N, t1);
    }
    switch (tail_vecs) {
      case 1: small_sgemm_rows<1>(rows, a, K, b_tail, 64, 0, beta, t0, t1); break;
      case 2: small_sgemm_rows<2>(rows, a, K, b_tail, 64, 0, beta, t0, t1); break;
      case 3: small_sgemm_rows<3>(rows, a, K, b_tail, 64, 0, beta, t0, t1); break;
      default: small_sgemm_rows<4>(rows, a, K, b_tail, 64, 0, beta, t0, t1); break;
    }
    std::copy(t0, t0 + tail, c0 + full);
    if (rows == 2) std::copy(t1, t1 + tail, c1 + full);
  };
  if (parallel && M * N * K > (1 << 18) && omp_get_max_threads() > 1) {  // no nested team of one
#pragma omp parallel for
    for (int64_t p = 0; p < pairs; ++p) pair(p);
  } else {
    for (int64_t p = 0; p < pairs; ++p) pair(p);
  }
}

template <typename T>
void gemm_impl(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
               int64_t ldb, T beta, T* C, int64_t ldc, bool parallel) {
  if (M == 0 || N == 0) return;
  if constexpr (std::is_same<T, float>::value) {
    // K <= 16: this tile beats dnnl_sgemm's packing (measured: K = 3 twice as fast, K = 32 slower).
    if (K > 0 && K <= 32 && (K <= 16 || M * N * K <= (1 << 14)) && (!tb || K * N <= (1 << 16))) {
      small_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, parallel);
      return;
    }
    if (K > 0) {
      // oneDNN wants leading dimensions >= 1 even for degenerate shapes.
      dnnl_status_t st = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, std::max<int64_t>(lda, 1), B,
                                    std::max<int64_t>(ldb, 1), beta, C, std::max<int64_t>(ldc, 1));
      if (st == dnnl_success) return;
    }
  }
  gemm_generic<T>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, parallel);
}

// Fixed shape of a graph value, or empty when any dimension is unknown.
bool fixed_shape(const Value* v, Shape& out) {
  if (!v || !v->has_shape) return false;
  out.clear();
  for (const Dim& d : v->shape) {
    if (!d.is_fixed()) return false;
    out.push_back(d.value);
  }
  return true;
}

class MatMulKernel : public OpKernel {
 public:
  explicit MatMulKernel(const KernelInit& init) {
    const Tensor* b = init.constant_input(1);
    Shape a_shape;
    if (b && b->dtype() == DType::kFloat32 && b->rank() == 2 && fixed_shape(init.input_value(0), a_shape) &&
        !a_shape.empty() && a_shape.back() == b->dim(0)) {
      const int64_t M = shape_numel(a_shape) / std::max<int64_t>(1, a_shape.back());
      PackedMatmul::Spec spec;
      spec.M = M, spec.K = b->dim(0), spec.N = b->dim(1), spec.weights = b->data_as<float>();
      packed_ = PackedMatmul::create(spec);
      packed_b_ = *b;
    }
  }
  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != b.dtype())
      fail(ctx.where(), ": inputs have different element types (", dtype_name(a.dtype()), " and ",
           dtype_name(b.dtype()), ")");
    Tensor& y = ctx.output(0, a.dtype(), matmul_output_shape(a.shape(), b.shape(), ctx.where()));
    if (packed_ && a.dtype() == DType::kFloat32 && b.data() == packed_b_.data() && a.rank() >= 1 &&
        a.numel() == packed_->M() * packed_->K() && a.dim(a.rank() - 1) == packed_->K() && y.numel() > 0) {
      packed_->run(a.data_as<float>(), y.data_as<float>());
      return;
    }
    matmul_optimized(a, b, y);
  }

 private:
  std::unique_ptr<PackedMatmul> packed_;
  Tensor packed_b_;  // keeps the constant alive; identifies it at run time
};

class GemmKernel : public OpKernel {
 public:
  GemmKernel(const KernelInit& init, bool c_optional) : c_optional_(c_optional) {
    trans_a_ = init.attrs().get_int("transA", 0) != 0;
    trans_b_ = init.attrs().get_int("transB", 0) != 0;
    alpha_ = init.attrs().get_float("alpha", 1.0f);
    beta_ = init.attrs().get_float("beta", 1.0f);
    // Before opset 7, C broadcasts only with broadcast = 1; otherwise it has the output's shape.
    c_exact_ = init.opset() < 7 && init.attrs().get_int("broadcast", 0) == 0;
    const Tensor* b = init.constant_input(1);
    Shape a_shape;
    if (b && b->dtype() == DType::kFloat32 && b->rank() == 2 && alpha_ == 1.0f &&
        fixed_shape(init.input_value(0), a_shape) && a_shape.size() == 2) {
      const int64_t M = trans_a_ ? a_shape[1] : a_shape[0], K = trans_a_ ? a_shape[0] : a_shape[1];
      const int64_t N = trans_b_ ? b->dim(0) : b->dim(1), Kb = trans_b_ ? b->dim(1) : b->dim(0);
      PackedMatmul::Spec spec;
      spec.M = M, spec.K = K, spec.N = N, spec.trans_a = trans_a_, spec.weights = b->data_as<float>();
      spec.trans_w = trans_b_, spec.beta = beta_;
      // A constant C of one row ([N] or [1, N], the usual Linear bias) becomes the primitive's
      // bias, scaled by beta: no pass that copies C into Y before the product.
      const Tensor* c = init.constant_input(2);
      std::vector<float> bias;
      if (beta_ != 0.0f && c && c->dtype() == DType::kFloat32 && c->numel() == N &&
          (c->shape() == Shape{N} || c->shape() == Shape{1, N}) && (!c_exact_ || M == 1)) {
        bias.assign(c->data_as<float>(), c->data_as<float>() + N);
        for (float& v : bias) v *= beta_;
        spec.bias = bias.data();
        packed_c_ = *c;
      } else {
        spec.accumulate = init.has_input(2) && beta_ != 0.0f;
      }
      if (K == Kb) packed_ = PackedMatmul::create(spec);
      packed_b_ = *b;
    }
  }
  void run(KernelContext& ctx) const override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (!c_optional_ && !ctx.has_input(2)) fail(ctx.where(), ": input C is required before opset 11");
    const Tensor* c = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (a.rank() != 2 || b.rank() != 2)
      fail(ctx.where(), ": A and B must be 2-D, got A ", shape_to_string(a.shape()), " and B ",
           shape_to_string(b.shape()));
    if (a.dtype() != b.dtype() || (c && c->dtype() != a.dtype()))
      fail(ctx.where(), ": inputs have different element types (A ", dtype_name(a.dtype()), ", B ",
           dtype_name(b.dtype()), c ? str_cat(", C ", dtype_name(c->dtype())) : std::string(), ")");
    const int64_t M = trans_a_ ? a.dim(1) : a.dim(0), K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t Kb = trans_b_ ? b.dim(1) : b.dim(0), N = trans_b_ ? b.dim(0) : b.dim(1);
    if (K != Kb)
      fail(ctx.where(), ": inner dimensions differ: A ", shape_to_string(a.shape()), (trans_a_ ? " (transposed)" : ""),
           " gives K = ", K, ", B ", shape_to_string(b.shape()), (trans_b_ ? " (transposed)" : ""), " gives K = ", Kb);
    if (c && c_exact_ && c->shape() != Shape{M, N})
      fail(ctx.where(), ": C of shape ", shape_to_string(c->shape()), " must be the output's [", M, ", ", N,
           "] (before opset 7 C broadcasts only with attribute broadcast = 1)");
    if (c && !broadcastable_to(c->shape(), {M, N}))
      fail(ctx.where(), ": C of shape ", shape_to_string(c->shape()), " does not broadcast to the output [", M, ", ", N,
           "]");
    Tensor& y = ctx.output(0, a.dtype(), {M, N});
    if (packed_ && b.data() == packed_b_.data() && a.dtype() == DType::kFloat32 && M == packed_->M() &&
        K == packed_->K() && (!packed_c_.defined() || (c && c->data() == packed_c_.data()))) {
      float* out = y.data_as<float>();
      if (packed_->accumulates()) expand_to(c->data_as<float>(), c->shape(), {M, N}, out);
      packed_->run(a.data_as<float>(), out);
      return;
    }
    gemm_optimized(a, b, c, trans_a_, trans_b_, alpha_, beta_, y);
  }

 private:
  bool c_optional_, c_exact_ = false;
  bool trans_a_ = false, trans_b_ = false;
  float alpha_ = 1, beta_ = 1;
  std::unique_ptr<PackedMatmul> packed_;
  Tensor packed_b_, packed_c_;  // keep the constants alive; identify them at run time
};

}  // namespace

template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
          int64_t ldb, T beta, T* C, int64_t ldc) {
  gemm_impl<T>(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, true);
}

template <typename T>
void batched_matmul(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t stride_a, const T* B,
                    int64_t stride_b, T* C, bool trans_a, bool trans_b) {
  if (batch == 0 || M == 0 || N == 0) return;
  const int64_t lda = trans_a ? M : K, ldb = trans_b ? K : N;
  // One large product: let the GEMM thread itself. Many small ones, or a batch that splits
  // evenly over the threads (attention heads): one thread per product; a product of up to 2^22
  // multiply-adds split inside the GEMM kept 2 threads at 1.2x of one (8 heads of 111 x 111 x 32).
  // (Threads only when the whole batch is worth waking them for, and never a team of one.)
  const int64_t threads = omp_get_max_threads(), per_product = M * N * K;
  const bool many_small =
      threads > 1 && batch * per_product > (1 << 16) &&
      ((batch >= 2 * threads && per_product < (1 << 18)) || (batch % threads == 0 && per_product < (1 << 22)));
  if (!many_small) {
    for (int64_t i = 0; i < batch; ++i)
      gemm_impl<T>(trans_a, trans_b, M, N, K, T(1), A + i * stride_a, lda, B + i * stride_b, ldb, T(0), C + i * M * N,
                   N, true);
    return;
  }
#pragma omp parallel for
  for (int64_t i = 0; i < batch; ++i)
    gemm_impl<T>(trans_a, trans_b, M, N, K, T(1), A + i * stride_a, lda, B + i * stride_b, ldb, T(0), C + i * M * N, N,
                 false);
}

#define POINTRT_GEMM_INSTANCES(T)                                                                                     \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, int64_t, T, T*,        \
                        int64_t);                                                                                     \
  template void batched_matmul<T>(int64_t, int64_t, int64_t, int64_t, const T*, int64_t, const T*, int64_t, T*, bool, \
                                  bool);
POINTRT_GEMM_INSTANCES(float)
POINTRT_GEMM_INSTANCES(double)
POINTRT_GEMM_INSTANCES(int8_t)
POINTRT_GEMM_INSTANCES(int16_t)
POINTRT_GEMM_INSTANCES(int32_t)
POINTRT_GEMM_INSTANCES(int64_t)
POINTRT_GEMM_INSTANCES(uint8_t)
POINTRT_GEMM_INSTANCES(uint16_t)
POINTRT_GEMM_INSTANCES(uint32_t)
POINTRT_GEMM_INSTANCES(uint64_t)
#undef POINTRT_GEMM_INSTANCES

Shape matmul_output_shape(const Shape& a, const Shape& b, const std::string& where) {
  if (a.empty() || b.empty())
    fail(where, ": MatMul operands must have rank >= 1, got A ", shape_to_string(a), " and B ", shape_to_string(b));
  Shape a2 = a, b2 = b;
  if (a2.size() == 1) a2.insert(a2.begin(), 1);
  if (b2.size() == 1) b2.push_back(1);
  const int64_t K = a2.back(), Kb = b2[b2.size() - 2];
  if (K != Kb)
    fail(where, ": inner dimensions differ: A ", shape_to_string(a), " has K = ", K, ", B ", shape_to_string(b),
         " has K = ", Kb);
  const size_t batch_rank = std::max(a2.size(), b2.size()) - 2;
  Shape out(batch_rank);
  for (size_t i = 0; i < batch_rank; ++i) {
    const int64_t da = i + a2.size() >= batch_rank + 2 ? a2[i + a2.size() - 2 - batch_rank] : 1;
    const int64_t db = i + b2.size() >= batch_rank + 2 ? b2[i + b2.size() - 2 - batch_rank] : 1;
    if (da != db && da != 1 && db != 1)
      fail(where, ": batch dimensions do not broadcast: A ", shape_to_string(a), ", B ", shape_to_string(b));
    out[i] = da == 1 ? db : da;
  }
  if (a.size() > 1) out.push_back(a2[a2.size() - 2]);
  if (b.size() > 1) out.push_back(b2.back());
  return out;
}

// Batch-broadcast driver shared by the optimised path; `per_matrix(ai, bi, yi)` gets element
// offsets of one product.
namespace {
struct MatmulLayout {
  int64_t M, N, K, batch;
  std::vector<int64_t> a_off, b_off;  // per batch element
  bool a_folds;                       // B has no batch dims: A's batch folds into M
};
MatmulLayout matmul_layout(const Shape& a, const Shape& b) {
  Shape a2 = a, b2 = b;
  if (a2.size() == 1) a2.insert(a2.begin(), 1);
  if (b2.size() == 1) b2.push_back(1);
  MatmulLayout l;
  l.M = a2[a2.size() - 2];
  l.K = a2.back();
  l.N = b2.back();
  l.a_folds = b2.size() == 2;
  const size_t br = std::max(a2.size(), b2.size()) - 2;
  Shape bs(br);
  std::vector<int64_t> sa(br, 0), sb(br, 0);
  int64_t ma = l.M * l.K, mb = l.K * l.N;
  for (size_t i = br; i-- > 0;) {
    const int64_t da = i + a2.size() >= br + 2 ? a2[i + a2.size() - 2 - br] : 1;
    const int64_t db = i + b2.size() >= br + 2 ? b2[i + b2.size() - 2 - br] : 1;
    bs[i] = da == 1 ? db : da;
    sa[i] = da == 1 ? 0 : ma;
    sb[i] = db == 1 ? 0 : mb;
    ma *= da;
    mb *= db;
  }
  l.batch = shape_numel(bs);
  std::vector<int64_t> idx(br, 0);
  for (int64_t n = 0; n < l.batch; ++n) {
    int64_t oa = 0, ob = 0;
    for (size_t i = 0; i < br; ++i) {
      oa += idx[i] * sa[i];
      ob += idx[i] * sb[i];
    }
    l.a_off.push_back(oa);
    l.b_off.push_back(ob);
    for (size_t i = br; i-- > 0;) {
      if (++idx[i] < bs[i]) break;
      idx[i] = 0;
    }
  }
  return l;
}
}  // namespace

void matmul_optimized(const Tensor& a, const Tensor& b, Tensor& y) {
  if (y.numel() == 0) return;
  MatmulLayout l = matmul_layout(a.shape(), b.shape());
  dispatch_numeric(a.dtype(), "MatMul", [&](auto tag) {
    using T = decltype(tag);
    const T* A = a.data_as<T>();
    const T* B = b.data_as<T>();
    T* Y = y.data_as<T>();
    if (l.K == 0) {
      std::fill(Y, Y + y.numel(), T(0));
      return;
    }
    if (l.a_folds) {  // [batch*M, K] x [K, N]: one GEMM
      gemm<T>(false, false, l.batch * l.M, l.N, l.K, T(1), A, l.K, B, l.N, T(0), Y, l.N);
      return;
    }
    // Uniform strides (no broadcast inside the batch) go to batched_matmul directly.
    bool uniform = true;
    const int64_t sa = l.batch > 1 ? l.a_off[1] - l.a_off[0] : 0, sb = l.batch > 1 ? l.b_off[1] - l.b_off[0] : 0;
    for (int64_t i = 1; i < l.batch && uniform; ++i) uniform = l.a_off[i] == i * sa && l.b_off[i] == i * sb;
    if (uniform) {
      batched_matmul<T>(l.batch, l.M, l.N, l.K, A, sa, B, sb, Y);
      return;
    }
    const bool many_small = l.batch >= 2 * omp_get_max_threads() && l.M * l.N * l.K < (1 << 18) &&
                            l.batch * l.M * l.N * l.K > (1 << 16) && omp_get_max_threads() > 1;
#pragma omp parallel for if (many_small)
    for (int64_t i = 0; i < l.batch; ++i)
      gemm_impl<T>(false, false, l.M, l.N, l.K, T(1), A + l.a_off[i], l.K, B + l.b_off[i], l.N, T(0), Y + i * l.M * l.N,
                   l.N, !many_small);
  });
}

void gemm_optimized(const Tensor& a, const Tensor& b, const Tensor* c, bool trans_a, bool trans_b, float alpha,
                    float beta, Tensor& y) {
  const int64_t M = y.dim(0), N = y.dim(1), K = trans_a ? a.dim(0) : a.dim(1);
  if (M == 0 || N == 0) return;
  dispatch_numeric(a.dtype(), "Gemm", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral<T>::value) {
      // alpha/beta are float attributes; an integer Gemm needs them to be representable.
      for (float v : {alpha, beta})
        if (!(v == std::floor(v)) || v < static_cast<float>(std::numeric_limits<T>::lowest()) ||
            v > static_cast<float>(std::numeric_limits<T>::max()))
          fail("Gemm: alpha/beta ", v, " is not representable in ", dtype_name(a.dtype()));
    }
    T* Y = y.data_as<T>();
    T b_scale = T(0);
    if (c && beta != 0.0f) {
      expand_to(c->data_as<T>(), c->shape(), {M, N}, Y);
      b_scale = static_cast<T>(beta);
    }
    gemm<T>(trans_a, trans_b, M, N, K, static_cast<T>(alpha), a.data_as<T>(), a.dim(1), b.data_as<T>(), b.dim(1),
            b_scale, Y, N);
  });
}

std::unique_ptr<OpKernel> make_matmul_kernel(const KernelInit& init) { return std::make_unique<MatMulKernel>(init); }
std::unique_ptr<OpKernel> make_gemm_kernel(const KernelInit& init, bool c_optional) {
  return std::make_unique<GemmKernel>(init, c_optional);
}

}  // namespace pointrt::reduce
