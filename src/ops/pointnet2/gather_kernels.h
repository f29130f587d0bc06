// Building blocks shared by the optimised GatherPoints, GroupPoints and ThreeInterpolate kernels.
//
// These operators move memory and compute almost nothing, so the kernels are organised around
// the caches:
//  - channels are processed in blocks whose feature rows fit in L2 (the random reads of a gather
//    then hit L2, not L3/DRAM);
//  - indices (and weights) are processed in tiles that stay in L1 while every row of the block
//    reads them, and are converted once per tile (int64 -> int32, AoS -> SoA);
//  - output rows are written contiguously, with non-temporal stores when the whole output is
//    too large to stay in the last-level cache anyway (saves the read-for-ownership traffic);
//  - OpenMP splits the (batch, channel block, tile) tasks statically, so each thread keeps one
//    channel block most of the time.
// The values written are exactly the reference's (a gather copies; ThreeInterpolate evaluates
// three_interpolate_one's mul/add sequence lane by lane, without FMA).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace pointrt {
namespace pointnet2 {
namespace gather_detail {

constexpr int64_t kIndexTile = 1024;            // indices per tile (4 KiB as int32)
constexpr int64_t kRowBlockBytes = 384 << 10;   // feature rows of one channel block (L2 is 1 MiB)
constexpr int64_t kStreamOutputBytes = 24 << 20;  // larger outputs bypass the caches

inline int64_t channel_block(int64_t channels, int64_t row_floats) {
  const int64_t fit = kRowBlockBytes / std::max<int64_t>(1, row_floats * 4);
  return std::max<int64_t>(1, std::min<int64_t>(fit, std::max<int64_t>(1, channels)));
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// dst[j] = row[ids[j]] for j < len (int32 indices, already validated).
inline void gather_span(const float* __restrict row, const int32_t* __restrict ids, int64_t len,
                        float* __restrict dst, bool stream) {
  int64_t j = 0;
#if defined(__AVX512F__)
  if (stream) {
    for (; j < len && (reinterpret_cast<uintptr_t>(dst + j) & 63) != 0; ++j) dst[j] = row[ids[j]];
    for (; j + 16 <= len; j += 16)
      _mm512_stream_ps(dst + j, _mm512_i32gather_ps(_mm512_loadu_si512(ids + j), row, 4));
  } else {
    for (; j + 16 <= len; j += 16)
      _mm512_storeu_ps(dst + j, _mm512_i32gather_ps(_mm512_loadu_si512(ids + j), row, 4));
  }
#else
  (void)stream;
#endif
  for (; j < len; ++j) dst[j] = row[ids[j]];
}

/// The int32 form of ids[0, len): the input itself when it is int32, else a copy into buf.
inline const int32_t* as_int32(const int32_t* ids, int64_t, int32_t*) { return ids; }
inline const int32_t* as_int32(const int64_t* ids, int64_t len, int32_t* buf) {
  for (int64_t j = 0; j < len; ++j) buf[j] = static_cast<int32_t>(ids[j]);
  return buf;
}

/// Ends a run of non-temporal stores (they are weakly ordered).
inline void stream_fence(bool stream) {
#if defined(__AVX512F__)
  if (stream) _mm_sfence();
#else
  (void)stream;
#endif
}

}  // namespace gather_detail
}  // namespace pointnet2
}  // namespace pointrt
