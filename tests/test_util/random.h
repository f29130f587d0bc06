// Seeded random tensors for the operator tests: the same seed gives the same values everywhere.
#pragma once

#include <cstdint>
#include <random>

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

}  // namespace pointrt::test
