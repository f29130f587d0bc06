// Checked size arithmetic: every place where a shape becomes an element count or a byte size
// (allocation, readers, feeds) goes through these, so a hostile shape is an Error naming it, never
// a wrapped product and a short buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/common.h"
#include "pointrt/pointrt.h"

namespace pointrt {

/// a * b for non-negative operands; false (and *out untouched) when the product overflows int64.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

/// a * b for a dimension computed from others (Tile's in x repeats, a Reshape's product, ...);
/// on overflow an Error "<what...>: the dimension a x b overflows int64". `what` is any streamable
/// parts (see ShapeText), concatenated only then: callers run this per dim on every run.
template <typename... What>
int64_t checked_dim_product(int64_t a, int64_t b, const What&... what) {
  int64_t r = 0;
  if (!checked_mul(a, b, &r)) fail(what..., ": the dimension ", a, " x ", b, " overflows int64");
  return r;
}

/// Element count of `shape`. Error "<what>: shape [..] has a negative dimension" or "... has more
/// elements than int64 can count" (`what` names the node, tensor or file).
int64_t checked_numel(const Shape& shape, const std::string& what);

/// Bytes of a `dtype` tensor of `shape`; errors as checked_numel, and when the byte count
/// overflows size_t.
size_t checked_nbytes(DType dtype, const Shape& shape, const std::string& what);

/// Error unless a `dtype` tensor of `shape` fits in `limit` bytes:
/// "<what>: float32 [1000000000000] needs 4000000000000 bytes (3.6 TiB), above the limit of ...".
/// Returns the byte size.
size_t check_tensor_size(DType dtype, const Shape& shape, size_t limit, const std::string& what);
/// True when check_tensor_size would pass (no dimension negative, no overflow, within `limit`);
/// for hot paths that build check_tensor_size's message only when it fails.
bool tensor_size_within(DType dtype, const Shape& shape, size_t limit);

/// "512 bytes", "4000000000000 bytes (3.6 TiB)": sizes in messages, exact and readable.
std::string format_bytes(size_t bytes);

/// Memory this process may use: the physical memory, or the cgroup's memory limit when lower.
size_t usable_memory_bytes();

/// Parse a byte count for options: "1000000", "512M", "2G", "1.5GiB" (K/M/G/T, powers of 1024);
/// Error naming `what` for anything else (negative, garbage, overflow).
size_t parse_byte_count(const std::string& text, const std::string& what);

/// Parse a whole decimal number (digits only, optional leading '-' when `allow_negative`), no
/// trailing characters, no overflow; Error naming `what` and the text otherwise.
int64_t parse_int64_strict(const std::string& text, const std::string& what, bool allow_negative = false);

}  // namespace pointrt
