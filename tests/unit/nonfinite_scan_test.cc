// The blocked bit-test scan of count_nonfinite against an element-by-element std::isfinite
// reference: every float type, sizes around the 1024-element block, NaN/Inf at block edges, and
// the finite extremes (max, denormals, -0) that must not count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/half.h"
#include "io/nonfinite.h"

namespace pointrt {
namespace {

double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data_as<float>()[i];
    case DType::kFloat64: return t.data_as<double>()[i];
    case DType::kFloat16: return half_to_float(t.data_as<uint16_t>()[i]);
    default: {  // bfloat16: the upper half of a float32
      uint32_t bits = static_cast<uint32_t>(t.data_as<uint16_t>()[i]) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
  }
}

NonfiniteCount reference_count(const Tensor& t) {
  NonfiniteCount c;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (!std::isfinite(element(t, i)) && c.count++ == 0) c.first = i;
  return c;
}

// Finite values of every kind, with NaN / Inf bit patterns at `bad` positions.
Tensor with_values(DType dt, int64_t n, const std::vector<int64_t>& bad, uint32_t seed) {
  Tensor t = Tensor::allocate(dt, {n});
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    const bool nonfinite = std::find(bad.begin(), bad.end(), i) != bad.end();
    const bool nan = rng() % 2;
    switch (dt) {
      case DType::kFloat32: {
        const float finite[] = {
            0.f, -0.f, 1.5f, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(), -3e38f};
        t.data_as<float>()[i] = nonfinite ? (nan ? std::nanf("") : -INFINITY) : finite[rng() % 6];
        break;
      }
      case DType::kFloat64: {
        const double finite[] = {0.0, -0.0, 1e308, std::numeric_limits<double>::denorm_min()};
        t.data_as<double>()[i] = nonfinite ? (nan ? std::nan("") : INFINITY) : finite[rng() % 4];
        break;
      }
      case DType::kFloat16: {  // 0x7bff: 65504, 0x0001: smallest denormal, 0x8000: -0
        const uint16_t finite[] = {0x0000, 0x8000, 0x7bff, 0x0001, 0x3c00};
        t.data_as<uint16_t>()[i] = nonfinite ? (nan ? 0x7e00 : 0xfc00) : finite[rng() % 5];
        break;
      }
      default: {  // bfloat16
        const uint16_t finite[] = {0x0000, 0x8000, 0x7f7f, 0x0001, 0x3f80};
        t.data_as<uint16_t>()[i] = nonfinite ? (nan ? 0x7fc0 : 0xff80) : finite[rng() % 5];
      }
    }
  }
  return t;
}

TEST(NonfiniteScan, MatchesTheElementwiseReferenceAroundTheBlockSize) {
  const std::vector<std::vector<int64_t>> placements = {{}, {0}, {1023}, {1024}, {1023, 1024, 2047}, {2999}};
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    for (int64_t n : {0, 1, 7, 1023, 1024, 1025, 3000}) {
      for (const auto& bad : placements) {
        std::vector<int64_t> inside;
        for (int64_t b : bad)
          if (b < n) inside.push_back(b);
        Tensor t = with_values(dt, n, inside, static_cast<uint32_t>(n * 31 + inside.size()));
        NonfiniteCount want = reference_count(t), got = count_nonfinite(t);
        EXPECT_EQ(got.count, want.count) << dtype_name(dt) << " n=" << n;
        EXPECT_EQ(got.first, want.first) << dtype_name(dt) << " n=" << n;
        EXPECT_EQ(got.count, static_cast<int64_t>(inside.size())) << dtype_name(dt) << " n=" << n;
      }
    }
  }
}

TEST(NonfiniteScan, OtherTypesAndStoragelessTensorsHaveNone) {
  Tensor ints = Tensor::allocate(DType::kInt32, {4});
  std::memset(ints.data(), 0xff, ints.nbytes());  // bit patterns that would be NaN as floats
  EXPECT_EQ(count_nonfinite(ints).count, 0);
  EXPECT_EQ(count_nonfinite(Tensor()).count, 0);
}

}  // namespace
}  // namespace pointrt
