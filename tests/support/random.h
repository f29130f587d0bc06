// Seeded random tensors for the operator tests: the same seed gives the same values everywhere.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

#include "core/half.h"
#include "pointrt/pointrt.h"

namespace pointrt::test {

/// A float32 tensor of `shape`, uniform in [lo, hi): std::mt19937(seed), element by element in order.
inline Tensor random_floats(const Shape& shape, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::allocate(DType::kFloat32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

/// A tensor of `dtype` and `shape` from uniform doubles in [lo, hi) (std::mt19937(seed), element by
/// element in order): float types take the value rounded, uint8 |v| * 60, int32/int64 v * 1000.
inline Tensor random_values(DType dtype, const Shape& shape, uint32_t seed, double lo = -4, double hi = 4) {
  Tensor t = Tensor::allocate(dtype, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = u(rng);
    switch (dtype) {
      case DType::kFloat32: t.data_as<float>()[i] = static_cast<float>(v); break;
      case DType::kFloat64: t.data_as<double>()[i] = v; break;
      case DType::kFloat16: t.data_as<uint16_t>()[i] = float_to_half(static_cast<float>(v)); break;
      case DType::kUInt8: t.data_as<uint8_t>()[i] = static_cast<uint8_t>(std::fabs(v) * 60); break;
      case DType::kInt32: t.data_as<int32_t>()[i] = static_cast<int32_t>(v * 1000); break;
      case DType::kInt64: t.data_as<int64_t>()[i] = static_cast<int64_t>(v * 1000); break;
      default: ADD_FAILURE() << "random_values: unsupported dtype";
    }
  }
  return t;
}

}  // namespace pointrt::test
