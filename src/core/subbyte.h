// ONNX's 4-bit integers (IR 10, opset 21): packed two per byte in files, low nibble first, the
// last byte's high nibble unused (zero) when the count is odd. pointrt keeps them unpacked, one
// per byte (see DType::kInt4): that costs 2x memory on the rare int4 tensor, and in exchange
// every kernel that moves bytes (Reshape, Identity, Transpose, ...) and every size check works
// on them unchanged.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pointrt/pointrt.h"

namespace pointrt {

inline bool is_int4_type(DType t) { return t == DType::kInt4 || t == DType::kUInt4; }

/// Bytes of n packed 4-bit elements.
inline size_t packed_int4_bytes(int64_t n) { return static_cast<size_t>(n / 2 + n % 2); }

/// Range of a 4-bit type: [-8, 7] for int4, [0, 15] for uint4.
inline void int4_range(DType t, int64_t& lo, int64_t& hi) {
  lo = t == DType::kInt4 ? -8 : 0;
  hi = t == DType::kInt4 ? 7 : 15;
}

/// packed (packed_int4_bytes(n) bytes) -> n bytes, int4 sign-extended.
inline void unpack_int4(const uint8_t* packed, int64_t n, bool is_signed, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    uint8_t v = static_cast<uint8_t>((packed[i / 2] >> (i % 2 ? 4 : 0)) & 0x0f);
    if (is_signed && (v & 0x08)) v = static_cast<uint8_t>(v | 0xf0);
    out[i] = v;
  }
}

/// n unpacked bytes -> packed_int4_bytes(n) bytes (the unused nibble is 0).
inline void pack_int4(const uint8_t* values, int64_t n, uint8_t* packed) {
  for (int64_t i = 0; i < n; i += 2) {
    const uint8_t lo = values[i] & 0x0f, hi = i + 1 < n ? values[i + 1] & 0x0f : 0;
    packed[i / 2] = static_cast<uint8_t>(lo | (hi << 4));
  }
}

}  // namespace pointrt
