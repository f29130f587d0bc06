// The float32 reduction fast paths (reduce_float.cc) against the naive reference: short rows
// unrolled at compile time, long rows in lanes and blocks, a middle or leading axis, huge rows
// split across threads, NaN propagation of Max/Min, size-1 axes around the reduced group,
// LogSumExp with infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "ops/onnx/reduce/reduce.h"
#include "support/op_tester.h"

namespace pointrt {
namespace {

using namespace reduce;

Tensor random_floats(const Shape& s, uint32_t seed) {
  Tensor t = Tensor::allocate(DType::kFloat32, s);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);  // positive: L1/L2/Mean and sums stay well conditioned
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = (rng() & 1 ? 1.f : -1.f) * u(rng);
  return t;
}

const ReduceKind kKinds[] = {ReduceKind::kSum, ReduceKind::kMean, ReduceKind::kSumSquare, ReduceKind::kL1,
                             ReduceKind::kL2,  ReduceKind::kMax,  ReduceKind::kMin,       ReduceKind::kLogSumExp};

void check(const Shape& s, const std::vector<bool>& reduced, uint32_t seed, bool with_nan) {
  Tensor x = random_floats(s, seed);
  if (with_nan && x.numel() > 5) x.data_as<float>()[x.numel() / 2 + 1] = NAN;
  for (ReduceKind kind : kKinds) {
    Tensor a = Tensor::allocate(DType::kFloat32, reduce_output_shape(s, reduced, true));
    Tensor b = Tensor::allocate(DType::kFloat32, a.shape());
    ASSERT_TRUE(reduce_float32_fast(kind, x, reduced, a)) << shape_to_string(s);
    reduce_reference(kind, x, reduced, b);
    test::expect_close(a, b, test::Tol{2e-5, 2e-5},
                       str_cat("kind ", static_cast<int>(kind), " shape ", shape_to_string(s), " nan ", with_nan));
  }
}

TEST(ReduceFloatFast, LastAxisShortAndLongRows) {
  uint32_t seed = 1;
  // 16-lane steps and their tails (31..49), the benchmark's rows of 256
  for (int64_t R : {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 33, 47, 48, 49, 256, 1023, 1024, 1025, 3000})
    for (int64_t rows : {1, 3, 70})
      for (bool nan : {false, true}) check({rows, R}, {false, true}, seed++, nan);
}

TEST(ReduceFloatFast, MiddleAndLeadingAxes) {
  uint32_t seed = 100;
  // 4-row steps and their tails; chunks of 64 rows (float sums) and their edges
  for (int64_t R : {1, 2, 3, 4, 5, 6, 7, 32, 63, 64, 65, 129, 1025})
    for (int64_t inner : {2, 3, 15, 16, 17, 48, 63, 64, 1023, 1025, 4095, 4097})  // narrow max/min below 64
      for (bool nan : {false, true}) {
        if (R * inner > 40000) continue;  // the reference is slow; these sizes cover every block edge
        check({2, R, inner}, {false, true, false}, seed++, nan);
        check({R, inner}, {true, false}, seed++, nan);
      }
}

TEST(ReduceFloatFast, SizeOneAxesAroundTheGroupAndAdjacentReducedAxes) {
  check({1, 5, 1, 4, 1, 3}, {false, false, true, true, true, false}, 7, false);
  check({1, 1, 6}, {true, false, false}, 8, false);
  check({4, 1, 6}, {false, true, false}, 9, true);  // only a size-1 axis reduced: R = 1
  check({3, 4, 5}, {true, true, true}, 10, false);  // everything
  Tensor x = random_floats({2, 3, 4}, 11);
  Tensor y = Tensor::allocate(DType::kFloat32, {1, 3, 1});
  EXPECT_FALSE(reduce_float32_fast(ReduceKind::kSum, x, {true, false, true}, y));  // two groups: generic path
}

TEST(ReduceFloatFast, LogSumExpInfinitiesAndColumnBlocks) {
  // Column blocks of 256 and their edges, and rows/columns holding -inf, +inf, or only -inf.
  for (int64_t inner : {255, 256, 257, 513})
    check({3, 7, inner}, {false, true, false}, 20 + static_cast<uint32_t>(inner), true);
  for (const std::vector<bool>& red : {std::vector<bool>{false, true}, std::vector<bool>{true, false}}) {
    Tensor x = random_floats({5, 6}, 30);
    float* p = x.data_as<float>();
    for (int64_t i = 0; i < 6; ++i) p[i] = -INFINITY;  // row 0 all -inf
    p[6 + 2] = INFINITY;                               // row 1 holds +inf
    p[12 + 1] = -INFINITY;                             // row 2 one -inf
    p[0 * 6 + 5] = -INFINITY;
    for (int64_t r = 0; r < 5; ++r) p[r * 6 + 4] = -INFINITY;  // column 4 all -inf
    p[3 * 6 + 3] = INFINITY;                                   // column 3 holds +inf
    Tensor a = Tensor::allocate(DType::kFloat32, reduce_output_shape(x.shape(), red, true));
    Tensor b = Tensor::allocate(DType::kFloat32, a.shape());
    ASSERT_TRUE(reduce_float32_fast(ReduceKind::kLogSumExp, x, red, a));
    reduce_reference(ReduceKind::kLogSumExp, x, red, b);
    for (int64_t i = 0; i < a.numel(); ++i) {
      const float u = a.data_as<float>()[i], v = b.data_as<float>()[i];
      if (std::isinf(v))
        EXPECT_EQ(u, v) << i;
      else
        EXPECT_NEAR(u, v, 2e-5 * (1 + std::fabs(v))) << i;
    }
  }
  Tensor big = random_floats({2, 3000}, 31);  // large values: no overflow (max subtracted first)
  for (int64_t i = 0; i < big.numel(); ++i) big.data_as<float>()[i] *= 100.f;
  Tensor a = Tensor::allocate(DType::kFloat32, {2, 1});
  Tensor b = Tensor::allocate(DType::kFloat32, {2, 1});
  ASSERT_TRUE(reduce_float32_fast(ReduceKind::kLogSumExp, big, {false, true}, a));
  reduce_reference(ReduceKind::kLogSumExp, big, {false, true}, b);
  test::expect_close(a, b, test::Tol{2e-5, 2e-5}, "large values");
}

TEST(ReduceFloatFast, HugeRowSplitAcrossThreads) {
  check({1, 300000}, {false, true}, 12, false);
  check({2, 140001}, {false, true}, 13, true);
}

}  // namespace
}  // namespace pointrt
