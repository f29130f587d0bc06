// Copies of short rows (a part of a row in Concat/Split, a gathered or sliced row), inline: a
// call to memcpy per row of tens of bytes cost as much as the copy (Split of 1562 rows into
// halves of 128 bytes: 13.5 -> 10 us). Rows of at most 256 bytes move as whole vectors plus one
// vector ending at the row's end (overlapping the previous one), or as two overlapping moves of
// the largest size that fits, as glibc's memcpy does after its call; longer rows go to memcpy.
// No masked accesses: masked 64-byte stores of 12-byte rows ran 1.25x slower out of cache.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace pointrt {

namespace detail {
// Two moves of one Word (an integer or a vector: the memcpys compile to single loads and stores).
template <typename Word>
inline void copy_two_overlapping(char* d, const char* s, int64_t bytes) {  // sizeof(Word) <= bytes <= 2x
  Word head, tail;
  std::memcpy(&head, s, sizeof(Word));
  std::memcpy(&tail, s + bytes - sizeof(Word), sizeof(Word));
  std::memcpy(d, &head, sizeof(Word));
  std::memcpy(d + bytes - sizeof(Word), &tail, sizeof(Word));
}
}  // namespace detail

/// dst[0, bytes) = src[0, bytes); the ranges must not overlap. bytes >= 0.
inline void copy_row_bytes(void* dst, const void* src, int64_t bytes) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
#if defined(__AVX512F__)
  if (bytes >= 64 && bytes <= 256) {
    for (int64_t j = 0; j + 64 < bytes; j += 64) _mm512_storeu_si512(d + j, _mm512_loadu_si512(s + j));
    _mm512_storeu_si512(d + bytes - 64, _mm512_loadu_si512(s + bytes - 64));
    return;
  }
  if (bytes >= 32 && bytes < 64) return detail::copy_two_overlapping<__m256i>(d, s, bytes);
  if (bytes >= 16 && bytes < 32) return detail::copy_two_overlapping<__m128i>(d, s, bytes);
#endif
  if (bytes >= 8 && bytes < 16) return detail::copy_two_overlapping<uint64_t>(d, s, bytes);
  if (bytes >= 4 && bytes < 8) return detail::copy_two_overlapping<uint32_t>(d, s, bytes);
  if (bytes > 0 && bytes < 4) {
    for (int64_t j = 0; j < bytes; ++j) d[j] = s[j];
    return;
  }
  if (bytes > 0) std::memcpy(d, s, static_cast<size_t>(bytes));
}

}  // namespace pointrt
