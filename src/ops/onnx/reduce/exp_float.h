// Vectorisable exp for float32 loops (Softmax, LogSumExp): arithmetic and bit operations only,
// so the compiler vectorises loops over it; the double overloads are plain std::exp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/exp_poly.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace pointrt::reduce::detail {

// exp for float written with arithmetic and bit operations only, so loops over it vectorise
// (glibc's expf does not without -ffast-math). Cephes' polynomial on [-ln2/2, ln2/2]: within
// 2 ulp of expf; exactly 0 below -87.3 (so -inf masks give 0), inf above 88.7, NaN stays NaN.
inline float fast_exp(float x) {
  const float clamped = std::min(std::max(x, -87.3f), 88.7f);
  const float magic = 12582912.f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
  const float t = clamped * 1.44269504088896341f + magic;
  const float n = t - magic;
  uint32_t t_bits;  // unsigned: the bit arithmetic below must not overflow or shift a negative
  std::memcpy(&t_bits, &t, 4);
  const float r = clamped - n * 0.693359375f + n * 2.12194440e-4f;
  float p = exp_poly(r);
  p = p * r * r + r + 1.0f;
  const uint32_t scale_bits = (t_bits - 0x4B400000u + 127u) << 23;  // 2^n: n = t_bits - bits of `magic`
  float scale;
  std::memcpy(&scale, &scale_bits, 4);
  float result = p * scale;
  result = x < -87.3f ? 0.0f : result;
  result = x > 88.7f ? INFINITY : result;
  return x != x ? x : result;
}
inline double fast_exp(double x) { return std::exp(x); }

// exp(x) for x <= 0 (softmax's x - max): fast_exp without the overflow fix. Below -87.3 (and
// at -inf) the result is 0; NaN gives NaN.
// Explicit fused multiply-adds (the build turns contraction off): half the polynomial's cost.
inline float exp_nonpositive(float x) {
  const float clamped = std::max(x, -87.3f);
  const float magic = 12582912.f;
  const float t = std::fma(clamped, 1.44269504088896341f, magic);
  const float n = t - magic;
  uint32_t t_bits;
  std::memcpy(&t_bits, &t, 4);
  const float r = std::fma(n, 2.12194440e-4f, std::fma(n, -0.693359375f, clamped));
  float p = kExpPoly[0];
  for (int i = 1; i < 6; ++i) p = std::fma(p, r, kExpPoly[i]);
  p = std::fma(p * r, r, r + 1.0f);
  const uint32_t scale_bits = (t_bits - 0x4B400000u + 127u) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, 4);
  return x < -87.3f ? 0.0f : p * scale;
}
inline double exp_nonpositive(double x) { return std::exp(x); }

#if defined(__AVX512F__)
// exp_nonpositive on 16 floats, written with intrinsics: the same operations in the same order
// (so the same values); GCC 12's vectorisation of the scalar form ran softmax rows 1.6x slower.
// The clamp's operand order keeps a NaN (maxps returns its second operand when one is NaN).
inline __m512 exp_nonpositive16(__m512 x) {
  const __m512 clamped = _mm512_max_ps(_mm512_set1_ps(-87.3f), x);
  const __m512 magic = _mm512_set1_ps(12582912.f);
  const __m512 t = _mm512_fmadd_ps(clamped, _mm512_set1_ps(1.44269504088896341f), magic);
  const __m512 n = _mm512_sub_ps(t, magic);
  const __m512 r =
      _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), clamped));
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpPoly[i]));
  p = _mm512_fmadd_ps(_mm512_mul_ps(p, r), r, _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i scale_bits =
      _mm512_slli_epi32(_mm512_add_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(-0x4B400000 + 127)), 23);
  const __m512 result = _mm512_mul_ps(p, _mm512_castsi512_ps(scale_bits));
  return _mm512_mask_mov_ps(result, _mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_LT_OQ), _mm512_setzero_ps());
}
#endif

}  // namespace pointrt::reduce::detail
