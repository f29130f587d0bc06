// Vectorisable exp for float32 loops (Softmax, LogSumExp): arithmetic and bit operations only,
// so the compiler vectorises loops over it; the double overloads are plain std::exp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/exp_poly.h"

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
  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  p = std::fma(p * r, r, r + 1.0f);
  const uint32_t scale_bits = (t_bits - 0x4B400000u + 127u) << 23;
  float scale;
  std::memcpy(&scale, &scale_bits, 4);
  return x < -87.3f ? 0.0f : p * scale;
}
inline double exp_nonpositive(double x) { return std::exp(x); }

}  // namespace pointrt::reduce::detail
