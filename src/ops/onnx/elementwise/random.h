// Random generators (ONNX): RandomUniform, RandomNormal (shape attribute), RandomUniformLike,
// RandomNormalLike (input's shape, and its type unless `dtype` is given), Bernoulli (y = 1 with
// probability x, type `dtype` or x's), Multinomial (input [batch, classes] of unnormalised log
// probabilities -> int32/int64 [batch, sample_size] class indices).
//
// The stream: MT19937 seeded with int(seed) when the node has a `seed` attribute, else freshly
// from std::random_device on every run (ONNX: "if not specified, one will be auto generated").
// Uniform draws are numpy's 53-bit doubles (RandomState.random_sample); normal draws use
// Box-Muller on two such doubles; Bernoulli is u < p; Multinomial inverts the cumulative softmax.
// A seeded node gives the same values on every run and platform. These operators are never
// constant-folded. float16/bfloat16 outputs are rounded from float32.
#pragma once

#include <random>

#include "ops/kernel.h"

namespace pointrt::elementwise {

/// The random stream of one node run (see above).
class RandomStream {
 public:
  explicit RandomStream(uint32_t seed) : rng_(seed) {}
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() {
    const uint32_t a = rng_() >> 5, b = rng_() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }
  /// Standard normal (Box-Muller; the second value of each pair is kept for the next call).
  double normal();

 private:
  std::mt19937 rng_;
  bool have_spare_ = false;
  double spare_ = 0;
};

enum class RandomOp { kUniform, kNormal, kUniformLike, kNormalLike, kBernoulli, kMultinomial };
KernelFactory random_factory(RandomOp op);

}  // namespace pointrt::elementwise
