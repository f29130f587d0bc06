// Small conversions shared by the image family (reading small parameter tensors of any numeric
// type, float16 staging, saturating truncation back to integer tensors).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/common.h"

namespace pointrt::image {

/// Every element of a numeric tensor as double (float16 included).
inline std::vector<double> tensor_to_doubles(const Tensor& t, const std::string& where, const char* name) {
  std::vector<double> r(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kFloat16) {
    const uint16_t* p = t.data_as<uint16_t>();
    for (size_t i = 0; i < r.size(); ++i) r[i] = half_to_float(p[i]);
    return r;
  }
  if (t.dtype() == DType::kBool) fail(where, ": input '", name, "' has element type bool, expected a numeric type");
  dispatch_numeric(t.dtype(), (where + " input '" + name + "'").c_str(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data_as<T>();
    for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<double>(p[i]);
  });
  return r;
}

/// A float16 tensor as float32 values.
inline std::vector<float> to_float_vector(const Tensor& t) {
  std::vector<float> r(static_cast<size_t>(t.numel()));
  const uint16_t* p = t.data_as<uint16_t>();
  for (size_t i = 0; i < r.size(); ++i) r[i] = half_to_float(p[i]);
  return r;
}

/// Write doubles into an integer tensor, truncating toward zero (numpy's astype) and
/// saturating at the type's range (NaN -> 0) so that nothing is undefined.
inline void doubles_to_tensor_truncating(const std::vector<double>& v, Tensor& t) {
  dispatch_numeric(t.dtype(), "doubles_to_tensor", [&](auto tag) {
    using T = decltype(tag);
    T* p = t.data_as<T>();
    const double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    const double hi = static_cast<double>(std::numeric_limits<T>::max());
    for (size_t i = 0; i < v.size(); ++i) {
      double x = std::trunc(v[i]);
      if (std::isnan(x)) x = 0;
      if (x <= lo)
        p[i] = std::numeric_limits<T>::lowest();
      else if (x >= hi)
        p[i] = std::numeric_limits<T>::max();
      else
        p[i] = static_cast<T>(x);
    }
  });
}

}  // namespace pointrt::image
