// Softmax/LogSoftmax over contiguous rows (the compile-time widths 8/16/32, float rows of 16
// in in-register transposed blocks of 16 rows, the transposed short-row blocks and long rows
// summed in blocks) against the long-double reference, with rows holding NaN, +inf, -inf and
// all -inf.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/onnx/reduce/softmax.h"

namespace pointrt {
namespace {

using namespace reduce;

void check_rows(int64_t outer, int64_t R, bool log, uint32_t seed) {
  Tensor x = Tensor::allocate(DType::kFloat32, {outer, R});
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 4.f);
  float* p = x.data_as<float>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = nd(rng);
  if (outer >= 5 && R >= 2) {
    p[1 * R + 1] = NAN;
    p[2 * R] = INFINITY;
    p[3 * R + R - 1] = -INFINITY;
    for (int64_t r = 0; r < R; ++r) p[4 * R + r] = -INFINITY;
  }
  Tensor a = Tensor::allocate(DType::kFloat32, x.shape()), b = Tensor::allocate(DType::kFloat32, x.shape());
  softmax_optimized(x, outer, R, 1, log, a);
  softmax_reference(x, outer, R, 1, log, b);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float got = a.data_as<float>()[i], want = b.data_as<float>()[i];
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << "R " << R << " log " << log << " at " << i;
    } else if (std::isinf(want)) {
      ASSERT_EQ(got, want) << "R " << R << " log " << log << " at " << i;
    } else {
      // LogSoftmax = x - max - log(sum): its float error scales with the inputs (|x| up to ~16
      // here), not with the result, which may be near 0; so it gets an absolute 1e-5.
      const double abs_tol = log ? 1e-5 : 1e-6;
      ASSERT_NEAR(got, want, abs_tol + 2e-5 * std::fabs(want)) << "R " << R << " log " << log << " at " << i;
    }
  }
}

TEST(SoftmaxRows, NarrowStridedAxesMatchTheReference) {
  // [outer, R, inner] softmax over R with inner < 16: lines gathered 16 at a time (R <= 64).
  uint32_t seed = 500;
  for (int64_t inner : {2, 4, 15, 16})
    for (int64_t R : {1, 3, 16, 64, 65})
      for (int64_t outer : {1, 7})
        for (bool log : {false, true}) {
          Tensor x = Tensor::allocate(DType::kFloat32, {outer, R, inner});
          std::mt19937 rng(seed++);
          std::normal_distribution<float> nd(0.f, 3.f);
          for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = nd(rng);
          if (x.numel() > 3) x.data_as<float>()[2] = NAN;
          Tensor a = Tensor::allocate(DType::kFloat32, x.shape()), b = Tensor::allocate(DType::kFloat32, x.shape());
          softmax_optimized(x, outer, R, inner, log, a);
          softmax_reference(x, outer, R, inner, log, b);
          for (int64_t i = 0; i < x.numel(); ++i) {
            const float got = a.data_as<float>()[i], want = b.data_as<float>()[i];
            if (std::isnan(want))
              ASSERT_TRUE(std::isnan(got)) << "inner " << inner << " R " << R << " at " << i;
            else
              ASSERT_NEAR(got, want, 1e-6 + 2e-5 * std::fabs(want)) << "inner " << inner << " R " << R << " at " << i;
          }
        }
}

TEST(SoftmaxRows, EveryRowPathMatchesTheReference) {
  uint32_t seed = 1;
  for (int64_t R : {1, 2, 7, 8, 9, 16, 17, 31, 32, 33, 1000, 1024, 1025, 3000})
    for (int64_t outer : {1, 5, 15, 16, 17, 40})  // 16-row blocks (R 16) and their tails
      for (bool log : {false, true}) check_rows(outer, R, log, seed++);
}

}  // namespace
}  // namespace pointrt
