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
// at -inf) the result is 0; NaN gives NaN. Explicit fused multiply-adds (the build turns
// contraction off), the polynomial as one Horner chain ending in "* r + 1" twice: 7 FMAs where
// fast_exp's association takes 8 operations, within 1 ulp of it.
inline float exp_nonpositive(float x) {
  const float clamped = std::max(x, -87.3f);
  const float magic = 12582912.f;
  const float t = std::fma(clamped, 1.44269504088896341f, magic);
  const float n = t - magic;
  uint32_t t_bits;
  std::memcpy(&t_bits, &t, 4);
  const float r = std::fma(n, 2.12194440e-4f, std::fma(n, -0.693359375f, clamped));
  const float* k = kExpPoly;  // written out: a loop here keeps callers' loops scalar (exp_poly)
  float p = std::fma(k[0], r, k[1]);
  p = std::fma(p, r, k[2]);
  p = std::fma(p, r, k[3]);
  p = std::fma(p, r, k[4]);
  p = std::fma(p, r, k[5]);
  p = std::fma(std::fma(p, r, 1.0f), r, 1.0f);
  const uint32_t scale_bits = (t_bits - 0x4B400000u + 127u) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, 4);
  return x < -87.3f ? 0.0f : p * scale;
}
inline double exp_nonpositive(double x) { return std::exp(x); }

#if defined(__AVX512F__)
// exp_nonpositive on 16 floats with intrinsics, the same values: the same polynomial, and 2^n
// applied by vscalefps (p * 2^n rounded once, as the scalar multiply by 2^n) to the lanes at or
// above -87.3 or NaN, zero elsewhere, which also covers -inf without the clamp. 13 vector
// operations; GCC 12's vectorisation of the scalar form ran softmax rows 1.6x slower.
inline __m512 exp_nonpositive16(__m512 x) {
  const __m512 magic = _mm512_set1_ps(12582912.f);
  const __m512 n = _mm512_sub_ps(_mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), magic), magic);
  const __m512 r =
      _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), x));
  __m512 p = _mm512_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kExpPoly[i]));
  const __m512 one = _mm512_set1_ps(1.0f);
  p = _mm512_fmadd_ps(_mm512_fmadd_ps(p, r, one), r, one);
  return _mm512_maskz_scalef_ps(_mm512_cmp_ps_mask(x, _mm512_set1_ps(-87.3f), _CMP_NLT_UQ), p, n);
}
#endif

}  // namespace pointrt::reduce::detail
