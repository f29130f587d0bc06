// TopK's optimised selection strategies (counting sort for small integer ranges, one-pass small
// k, radix sort, nth_element) against the naive reference, bit for bit, on the sizes where each
// strategy starts and stops, with ties, NaN, -0/+0 and every key width.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "ops/onnx/reduce/topk.h"

namespace pointrt {
namespace {

using namespace reduce;

// Values drawn from `distinct` levels (few levels: many ties) or spread widely.
template <typename T>
Tensor random_values(const Shape& s, uint32_t seed, int64_t distinct, bool specials) {
  Tensor t = Tensor::allocate(DTypeOf<T>::value, s);
  std::mt19937_64 rng(seed);
  T* p = t.data_as<T>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t level = static_cast<int64_t>(rng() % static_cast<uint64_t>(distinct));
    if constexpr (std::is_floating_point_v<T>)
      p[i] = static_cast<T>(level - distinct / 2) * T(0.37);
    else if constexpr (std::is_signed_v<T>)
      p[i] = static_cast<T>(distinct > 1000 ? static_cast<T>(rng()) : static_cast<T>(level - distinct / 2));
    else
      p[i] = static_cast<T>(distinct > 1000 ? static_cast<T>(rng()) : static_cast<T>(level));
  }
  if constexpr (std::is_floating_point_v<T>)
    if (specials && t.numel() > 6) {
      p[1] = std::numeric_limits<T>::quiet_NaN();
      p[3] = -std::numeric_limits<T>::quiet_NaN();
      p[4] = T(-0.0);
      p[5] = T(0.0);
      p[2] = -std::numeric_limits<T>::infinity();
    }
  return t;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

template <typename T>
void check_against_reference(const Shape& s, int64_t axis, int64_t distinct, bool specials, uint32_t seed) {
  Tensor x = random_values<T>(s, seed, distinct, specials);
  const int64_t R = s[axis];
  for (int64_t k :
       {int64_t(0), int64_t(1), int64_t(3), int64_t(16), int64_t(32), int64_t(33), R / 4 - 1, R / 4, R / 2, R - 1, R}) {
    if (k < 0 || k > R) continue;
    Shape out = s;
    out[axis] = k;
    for (bool largest : {true, false}) {
      Tensor va = Tensor::allocate(x.dtype(), out), ia = Tensor::allocate(DType::kInt64, out);
      Tensor vb = Tensor::allocate(x.dtype(), out), ib = Tensor::allocate(DType::kInt64, out);
      topk_optimized(x, axis, k, largest, va, ia);
      topk_reference(x, axis, k, largest, vb, ib);
      ASSERT_TRUE(same_bits(ia, ib)) << dtype_name(x.dtype()) << " " << shape_to_string(s) << " axis " << axis << " k "
                                     << k << " largest " << largest << " distinct " << distinct;
      ASSERT_TRUE(same_bits(va, vb)) << "values, " << shape_to_string(s) << " k " << k;
    }
  }
}

// Line lengths around the strategy switches (k 32 for small k, R 256 and k R/4 for radix) and the
// 64-key blocks of the one-pass scans (63, 64, 65, 128, 129).
const std::vector<Shape> kShapes = {{1},      {7},      {3, 17},  {2, 63},  {2, 64},   {1, 65},   {3, 128},
                                    {2, 129}, {2, 255}, {2, 256}, {1, 257}, {3, 1000}, {5, 3, 40}};

TEST(TopKFast, FloatsWithTiesNaNAndSignedZeros) {
  uint32_t seed = 1;
  for (const Shape& s : kShapes)
    for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis)
      for (int64_t distinct : {int64_t(3), int64_t(1) << 20}) {
        check_against_reference<float>(s, axis, distinct, true, seed++);
        check_against_reference<double>(s, axis, distinct, true, seed++);
      }
}

TEST(TopKFast, NaNAndTiesInLaterBlocks) {
  // The best keys arrive after the k-th is bounded: NaN and ties of the maximum in blocks 2-4.
  for (int64_t R : {int64_t(129), int64_t(200), int64_t(256)}) {
    Tensor x = random_values<float>({2, R}, static_cast<uint32_t>(R), 7, false);
    float* p = x.data_as<float>();
    for (int64_t at : {int64_t(70), int64_t(128), R - 1}) p[at] = std::numeric_limits<float>::quiet_NaN();
    for (int64_t at : {int64_t(100), int64_t(101), int64_t(190) % R}) p[R + at] = 5.f;
    p[R + 64] = -std::numeric_limits<float>::quiet_NaN();
    for (int64_t k : {int64_t(1), int64_t(2), int64_t(3), int64_t(4), int64_t(8), int64_t(9), int64_t(16), int64_t(32)})
      for (bool largest : {true, false}) {
        Tensor va = Tensor::allocate(x.dtype(), {2, k}), ia = Tensor::allocate(DType::kInt64, {2, k});
        Tensor vb = Tensor::allocate(x.dtype(), {2, k}), ib = Tensor::allocate(DType::kInt64, {2, k});
        topk_optimized(x, 1, k, largest, va, ia);
        topk_reference(x, 1, k, largest, vb, ib);
        ASSERT_TRUE(same_bits(ia, ib)) << "R " << R << " k " << k << " largest " << largest;
        ASSERT_TRUE(same_bits(va, vb)) << "R " << R << " k " << k << " largest " << largest;
      }
  }
}

float float_from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(TopKFast, ContiguousFloatKeysOfEverySpecialValue) {
  // Long contiguous float lines, whose whole 16-key blocks are keyed in one vector: NaN of both
  // signs and several payloads, +-0, +-inf, denormals and the extremes at random places among
  // ordinary values, ties included, against the reference bit for bit.
  const float specials[] = {float_from_bits(0x7FC00000u),
                            float_from_bits(0xFFC00000u),
                            float_from_bits(0x7F800001u),
                            float_from_bits(0xFFFFFFFFu),
                            float_from_bits(0x7FC00123u),
                            0.f,
                            -0.f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            -std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::max(),
                            1.f,
                            -1.f};
  std::mt19937 rng(17);
  for (int64_t R : {int64_t(16), int64_t(33), int64_t(100), int64_t(1000), int64_t(5003)}) {
    Tensor x = Tensor::allocate(DType::kFloat32, {R});
    float* p = x.data_as<float>();
    std::normal_distribution<float> normal;
    for (int64_t i = 0; i < R; ++i)
      p[i] = rng() % 5 == 0 ? specials[rng() % (sizeof(specials) / sizeof(float))] : std::round(normal(rng) * 8) / 8;
    for (int64_t k : {int64_t(1), int64_t(7), int64_t(32), int64_t(33), int64_t(100), R / 2, R}) {
      if (k > R) continue;
      for (bool largest : {true, false}) {
        Tensor va = Tensor::allocate(x.dtype(), {k}), ia = Tensor::allocate(DType::kInt64, {k});
        Tensor vb = Tensor::allocate(x.dtype(), {k}), ib = Tensor::allocate(DType::kInt64, {k});
        topk_optimized(x, 0, k, largest, va, ia);
        topk_reference(x, 0, k, largest, vb, ib);
        ASSERT_TRUE(same_bits(ia, ib)) << "R " << R << " k " << k << " largest " << largest;
        ASSERT_TRUE(same_bits(va, vb)) << "R " << R << " k " << k << " largest " << largest;
      }
    }
  }
}

TEST(TopKFast, IntegersInSmallAndWideRanges) {
  uint32_t seed = 100;
  for (const Shape& s : kShapes)
    for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis)
      for (int64_t distinct : {int64_t(1), int64_t(5), int64_t(600), int64_t(1) << 40}) {
        check_against_reference<int64_t>(s, axis, distinct, false, seed++);
        check_against_reference<int32_t>(s, axis, distinct, false, seed++);
        check_against_reference<uint64_t>(s, axis, distinct, false, seed++);
        check_against_reference<int8_t>(s, axis, std::min<int64_t>(distinct, 200), false, seed++);
        check_against_reference<uint16_t>(s, axis, std::min<int64_t>(distinct, 60000), false, seed++);
      }
}

TEST(TopKFast, BallQueryPatternSortsIndicesWithMostAtTheSentinel) {
  // yanx27's query_ball_point: arange(N) with the points outside the ball set to N, sorted.
  const int64_t S = 9, N = 300;
  Tensor x = Tensor::allocate(DType::kInt64, {1, S, N});
  std::mt19937 rng(5);
  for (int64_t i = 0; i < S * N; ++i) x.data_as<int64_t>()[i] = rng() % 10 == 0 ? i % N : N;
  Tensor va = Tensor::allocate(DType::kInt64, {1, S, N}), ia = Tensor::allocate(DType::kInt64, {1, S, N});
  Tensor vb = Tensor::allocate(DType::kInt64, {1, S, N}), ib = Tensor::allocate(DType::kInt64, {1, S, N});
  topk_optimized(x, 2, N, false, va, ia);
  topk_reference(x, 2, N, false, vb, ib);
  EXPECT_TRUE(same_bits(va, vb));
  EXPECT_TRUE(same_bits(ia, ib));
}

}  // namespace
}  // namespace pointrt
