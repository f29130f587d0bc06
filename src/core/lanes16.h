// Folding the 16 float lanes of an AVX-512 vector into one value in registers, pairing lane i
// with i + 8, then i + 4, i + 2, i + 1 (GCC 12's _mm512_reduce_* headers warn of an uninitialised
// temporary). Through memory and a scalar loop such a fold sat on the critical path of every row
// of Softmax and the last-axis reductions. max/min: for vectors without NaN, or with all lanes
// NaN (maxps/minps return the second operand when one is NaN).
#pragma once

#if defined(__AVX512F__)
#include <immintrin.h>

namespace pointrt {

enum class LaneFold { kSum, kMax, kMin };

template <LaneFold F>
inline __m256 lane_op(__m256 a, __m256 b) {
  if constexpr (F == LaneFold::kSum) return _mm256_add_ps(a, b);
  if constexpr (F == LaneFold::kMax) return _mm256_max_ps(a, b);
  if constexpr (F == LaneFold::kMin) return _mm256_min_ps(a, b);
}
template <LaneFold F>
inline __m128 lane_op(__m128 a, __m128 b) {
  if constexpr (F == LaneFold::kSum) return _mm_add_ps(a, b);
  if constexpr (F == LaneFold::kMax) return _mm_max_ps(a, b);
  if constexpr (F == LaneFold::kMin) return _mm_min_ps(a, b);
}

template <LaneFold F>
inline float fold_lanes(__m512 v) {
  const __m256 upper = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  const __m256 a = lane_op<F>(_mm512_castps512_ps256(v), upper);
  __m128 b = lane_op<F>(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  b = lane_op<F>(b, _mm_movehl_ps(b, b));
  return _mm_cvtss_f32(lane_op<F>(b, _mm_movehdup_ps(b)));
}
inline float lanes_sum(__m512 v) { return fold_lanes<LaneFold::kSum>(v); }
inline float lanes_max(__m512 v) { return fold_lanes<LaneFold::kMax>(v); }
inline float lanes_min(__m512 v) { return fold_lanes<LaneFold::kMin>(v); }

}  // namespace pointrt
#endif
