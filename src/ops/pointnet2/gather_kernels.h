// Building blocks shared by the optimised GatherPoints, GroupPoints and ThreeInterpolate kernels.
//
// These operators move memory and compute almost nothing. When an operator reads each source
// point many times (GroupPoints: M*S >= N with rows longer than L1; ThreeInterpolate: n >= m)
// the AVX-512 kernels first copy the features point-major ([N, C padded to 16],
// transpose_features) and then read 16 channels of a point as one 64-byte load, turning
// 16 indices x 16 channels into 16 output-row pieces with a register transpose: one cache line
// per index and 16 channels instead of one random line per output element. Outputs larger than
// the last-level cache are written with non-temporal stores (no read-for-ownership traffic).
// ThreeInterpolate's other path processes channel blocks whose rows fit in L2 and point tiles
// whose indices/weights are converted once into L1-resident SoA arrays.
// The values written are exactly the reference's (a gather copies; ThreeInterpolate evaluates
// three_interpolate_one's mul/add sequence lane by lane, without FMA).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/stream_store.h"
#include "core/transpose16.h"
#include "ops/pointnet2/gather_points.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace pointrt::pointnet2 {
namespace detail {

constexpr int64_t kRowBlockBytes = 384 << 10;  // feature rows of one channel block (L2 is 1 MiB)
constexpr int64_t kL1RowBytes = 24 << 10;      // feature rows up to this long are gathered from L1

inline int64_t channel_block(int64_t channels, int64_t row_floats) {
  const int64_t fit = kRowBlockBytes / std::max<int64_t>(1, row_floats * 4);
  return std::max<int64_t>(1, std::min<int64_t>(fit, std::max<int64_t>(1, channels)));
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Ends a run of non-temporal stores (they are weakly ordered).
inline void stream_fence(bool stream) {
#if defined(__AVX512F__)
  if (stream) _mm_sfence();
#else
  (void)stream;
#endif
}

#if defined(__AVX512F__)
/// Stores r[k] at dst + k * stride for k < rows (16: the unrolled common case).
inline void store_rows(const __m512 r[16], int64_t rows, float* dst, int64_t stride, bool stream) {
  if (rows == 16 && stream) {
    for (int k = 0; k < 16; ++k) _mm512_stream_ps(dst + k * stride, r[k]);
  } else if (rows == 16) {
    for (int k = 0; k < 16; ++k) _mm512_storeu_ps(dst + k * stride, r[k]);
  } else {
    for (int64_t k = 0; k < rows; ++k) {
      if (stream)
        _mm512_stream_ps(dst + k * stride, r[k]);
      else
        _mm512_storeu_ps(dst + k * stride, r[k]);
    }
  }
}

/// Channels padded to a multiple of 16 (one zmm per 16 channels of a point).
inline int64_t padded_channels(int64_t channels) { return (channels + 15) / 16 * 16; }

/// Point-major copy of one batch's features: ft[i * padded + c] = f[c * n + i] (padding lanes
/// zero), by 16x16 register transposes. Called inside a parallel region (splits the points).
inline void transpose_features(const float* f, int64_t channels, int64_t n, float* ft) {
  const int64_t padded = padded_channels(channels);
#pragma omp for schedule(static)
  for (int64_t i0 = 0; i0 < n; i0 += 16) {
    const int64_t pts = std::min<int64_t>(16, n - i0);
    const __mmask16 live = static_cast<__mmask16>(pts == 16 ? 0xffffu : (1u << pts) - 1);
    for (int64_t c0 = 0; c0 < padded; c0 += 16) {
      __m512 r[16];
      for (int k = 0; k < 16; ++k)
        r[k] = c0 + k < channels ? _mm512_maskz_loadu_ps(live, f + (c0 + k) * n + i0) : _mm512_setzero_ps();
      transpose16x16(r);
      for (int64_t k = 0; k < pts; ++k) _mm512_storeu_ps(ft + (i0 + k) * padded + c0, r[k]);
    }
  }
}

/// The point-major copy's buffer, 64-byte aligned, for one kernel call: from the caller's
/// ScratchAllocator (in a session the run's allocator, whose pool/arena keeps the pages mapped
/// between runs — a fresh multi-MiB allocation per run spent more time in page faults than the
/// operator itself), else a heap block owned here.
class AlignedScratch {
 public:
  explicit AlignedScratch(const ScratchAllocator& allocator) : allocator_(allocator) {}
  float* get(size_t floats) {
    float* p = nullptr;
    if (allocator_) {
      p = allocator_(floats + 16);
    } else {
      own_.resize(floats + 16);
      p = own_.data();
    }
    return p + ((64 - (reinterpret_cast<uintptr_t>(p) & 63)) & 63) / sizeof(float);
  }

 private:
  const ScratchAllocator& allocator_;
  std::vector<float> own_;
};
#endif

}  // namespace detail
}  // namespace pointrt::pointnet2
