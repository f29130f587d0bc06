// Internal helpers shared by every part of the runtime: error formatting, dtype dispatch,
// (float16/bfloat16 conversion: core/half.h) and a parallel loop.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>

#include "core/half.h"
#include "pointrt/pointrt.h"

namespace pointrt {

namespace detail_fmt {
// Strings, characters and integers are appended directly: messages and node descriptions are
// also built on hot paths, where an ostringstream (locale, facets) costs a microsecond each.
// Anything else (floating point, Shape printers, ...) goes through a stream.
template <typename T>
void append_one(std::string& out, const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, std::string> || std::is_array_v<T>) {  // string literals: never null
    out += v;
  } else if constexpr (std::is_same_v<D, const char*> || std::is_same_v<D, char*>) {
    out += v ? v : "(null)";
  } else if constexpr (std::is_same_v<D, char>) {
    out += v;
  } else if constexpr (std::is_integral_v<D> && !std::is_same_v<D, bool>) {
    out += std::to_string(v);
  } else {
    std::ostringstream os;
    os << v;
    out += os.str();
  }
}
}  // namespace detail_fmt

/// Concatenate anything streamable into one string.
template <typename... Args>
std::string str_cat(const Args&... args) {
  std::string out;
  (detail_fmt::append_one(out, args), ...);
  return out;
}

/// Throw pointrt::Error with the concatenated message.
template <typename... Args>
[[noreturn]] void fail(const Args&... args) {
  throw Error(str_cat(args...));
}

#define PRT_CHECK(cond, ...)                   \
  do {                                         \
    if (!(cond)) ::pointrt::fail(__VA_ARGS__); \
  } while (0)

inline bool is_float_type(DType t) { return t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16; }
inline bool is_signed_int_type(DType t) {
  return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
}
inline bool is_unsigned_int_type(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}
inline bool is_int_type(DType t) { return is_signed_int_type(t) || is_unsigned_int_type(t); }

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int16_t> {
  static constexpr DType value = DType::kInt16;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUInt8;
};
template <>
struct DTypeOf<uint16_t> {
  static constexpr DType value = DType::kUInt16;
};
template <>
struct DTypeOf<uint32_t> {
  static constexpr DType value = DType::kUInt32;
};
template <>
struct DTypeOf<uint64_t> {
  static constexpr DType value = DType::kUInt64;
};
template <>
struct DTypeOf<bool> {
  static constexpr DType value = DType::kBool;
};

/// "<where><suffix>" (a node's description and a fixed label such as " input 0") for messages,
/// concatenated only when streamed: kernels pass it to dispatch_* on every run, and it costs
/// nothing unless the dtype is rejected. `where` must outlive it.
struct WhereAnd {
  const std::string& where;
  const char* suffix;
};
inline std::ostream& operator<<(std::ostream& os, const WhereAnd& w) { return os << w.where << w.suffix; }

/// A shape printed as "[2, 3]" when streamed: for message parts that are built only on failure.
struct ShapeText {
  const Shape& shape;
};
inline std::ostream& operator<<(std::ostream& os, const ShapeText& s) { return os << shape_to_string(s.shape); }

// Dispatch a generic lambda `f(T{})` on a runtime dtype (`what`: anything streamable that names
// the tensor in the error). Bool is stored as one byte: it is
// dispatched as `bool` (sizeof(bool) == 1 on every platform we build for).
template <typename What, typename F>
void dispatch_numeric(DType t, const What& what, F&& f) {
  switch (t) {
    case DType::kFloat32: f(float{}); return;
    case DType::kFloat64: f(double{}); return;
    case DType::kInt8: f(int8_t{}); return;
    case DType::kInt16: f(int16_t{}); return;
    case DType::kInt32: f(int32_t{}); return;
    case DType::kInt64: f(int64_t{}); return;
    case DType::kUInt8: f(uint8_t{}); return;
    case DType::kUInt16: f(uint16_t{}); return;
    case DType::kUInt32: f(uint32_t{}); return;
    case DType::kUInt64: f(uint64_t{}); return;
    default: fail(what, ": unsupported element type ", dtype_name(t));
  }
}
template <typename What, typename F>
void dispatch_all(DType t, const What& what, F&& f) {
  if (t == DType::kBool) {
    f(bool{});
    return;
  }
  dispatch_numeric(t, what, std::forward<F>(f));
}
template <typename What, typename F>
void dispatch_float(DType t, const What& what, F&& f) {
  switch (t) {
    case DType::kFloat32: f(float{}); return;
    case DType::kFloat64: f(double{}); return;
    default: fail(what, ": unsupported element type ", dtype_name(t), " (expected float32 or float64)");
  }
}
/// Copy elements by raw bytes regardless of type (any dtype of the given size).
template <typename What, typename F>
void dispatch_by_size(DType t, const What& what, F&& f) {
  switch (dtype_size(t)) {
    case 1: f(uint8_t{}); return;
    case 2: f(uint16_t{}); return;
    case 4: f(uint32_t{}); return;
    case 8: f(uint64_t{}); return;
    default: fail(what, ": unsupported element type ", dtype_name(t));
  }
}

/// Normalise a possibly negative axis into [0, rank); error names the node.
inline int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& where) {
  if (axis < -rank || axis >= rank) fail(where, ": axis ", axis, " is out of range for a tensor of rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

}  // namespace pointrt
