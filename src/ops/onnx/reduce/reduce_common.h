// Shape helpers shared by the reduce family: splitting a shape around one axis, reading axes
// inputs, accumulator types and NaN-propagating max/min.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "ops/kernel.h"

namespace pointrt {
namespace reduce_detail {

/// A shape seen as [outer, axis_dim, inner] around one axis (row-major).
struct AxisSplit {
  int64_t outer = 1, axis_dim = 1, inner = 1;
};
inline AxisSplit split_at_axis(const Shape& s, int64_t axis) {
  AxisSplit r;
  for (int64_t i = 0; i < static_cast<int64_t>(s.size()); ++i) {
    if (i < axis) r.outer *= s[i];
    else if (i == axis) r.axis_dim = s[i];
    else r.inner *= s[i];
  }
  return r;
}

/// Read a 1-D (or scalar) int32/int64 tensor as int64 values; errors name the node and input.
inline std::vector<int64_t> read_int_list(const Tensor& t, const std::string& where, const char* what) {
  std::vector<int64_t> r;
  if (t.rank() > 1) fail(where, ": input '", what, "' must be a scalar or 1-D, got shape ", shape_to_string(t.shape()));
  if (t.dtype() == DType::kInt64) r.assign(t.data_as<int64_t>(), t.data_as<int64_t>() + t.numel());
  else if (t.dtype() == DType::kInt32) r.assign(t.data_as<int32_t>(), t.data_as<int32_t>() + t.numel());
  else fail(where, ": input '", what, "' must be int32 or int64, got ", dtype_name(t.dtype()));
  return r;
}

/// Sum/product accumulator: float sums in double, integer sums in 64 bits.
template <typename T>
using WideAcc = std::conditional_t<std::is_floating_point<T>::value, double,
                                   std::conditional_t<std::is_signed<T>::value, int64_t, uint64_t>>;

/// max/min that propagate NaN (as numpy and ONNX Runtime do).
template <typename T>
inline T max_nan(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) return (b > a || b != b) ? b : a;
  else return b > a ? b : a;
}
template <typename T>
inline T min_nan(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) return (b < a || b != b) ? b : a;
  else return b < a ? b : a;
}

/// The lowest / highest value of T (infinities for floats).
template <typename T>
inline T lowest_value() {
  if constexpr (std::is_floating_point<T>::value) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}
template <typename T>
inline T highest_value() {
  if constexpr (std::is_floating_point<T>::value) return std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::max();
}

}  // namespace reduce_detail
}  // namespace pointrt
