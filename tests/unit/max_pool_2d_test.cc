// The plain 2-D MaxPool (one vectorised pass per window tap) against max_pool_ref, bit for bit:
// kernels, strides, dilations, pads, ceil mode, NaN-filled windows and signed zeros.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>

#include "ops/onnx/nn/pool.h"

namespace pointrt::nn {
namespace {

void check(const Shape& x_shape, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> d,
           std::vector<int64_t> pads, bool ceil_mode, uint32_t seed) {
  PoolAttrs a;
  a.kind = PoolKind::kMax;
  a.kernel_shape = k;
  a.strides = s;
  a.dilations = d;
  a.pads = pads;
  a.ceil_mode = ceil_mode;
  const PoolGeometry g = pool_geometry(a, x_shape, "test");
  Tensor x = Tensor::allocate(DType::kFloat32, x_shape);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < x.numel(); ++i) {
    const uint32_t r = rng() % 16;
    x.data_as<float>()[i] = r == 0 ? NAN : r == 1 ? -0.f : r == 2 ? 0.f : static_cast<float>(rng() % 9) - 4.f;
  }
  if (x.numel() > 8)
    for (int64_t i = 0; i < 8; ++i) x.data_as<float>()[i] = NAN;  // an all-NaN corner window
  const Shape ys = g.output_shape();
  Tensor y = Tensor::allocate(DType::kFloat32, ys), r = Tensor::allocate(DType::kFloat32, ys);
  ASSERT_TRUE(max_pool_2d_plain(g, x.data_as<float>(), y.data_as<float>()));
  max_pool_ref<float>(g, 0, x.data_as<float>(), r.data_as<float>(), nullptr);
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float a1 = y.data_as<float>()[i], b1 = r.data_as<float>()[i];
    if (std::isnan(b1)) {
      ASSERT_TRUE(std::isnan(a1)) << shape_to_string(x_shape) << " at " << i;
    } else {
      ASSERT_EQ(0, std::memcmp(&a1, &b1, 4))
          << shape_to_string(x_shape) << " k " << k[0] << " s " << s[0] << " at " << i << ": " << a1 << " vs " << b1;
    }
  }
}

TEST(MaxPool2d, MatchesTheReference) {
  uint32_t seed = 1;
  for (int64_t kk : {1, 2, 3, 4})
    for (int64_t st : {1, 2, 3})
      for (int64_t dil : {1, 2})
        for (int64_t pad : {0, 1, 2}) {
          if (pad >= kk) continue;  // ONNX: pads smaller than the kernel
          for (bool ceil_mode : {false, true}) {
            check({1, 2, 11, 13}, {kk, kk}, {st, st}, {dil, dil}, {pad, pad, pad, pad}, ceil_mode, seed++);
            check({1, 1, 9, 40}, {kk, 1}, {st, 1}, {dil, 1}, {pad, 0, 0, 0}, ceil_mode, seed++);
          }
        }
  check({1, 3, 40, 48}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, seed++);  // CenterPoint's peak test
  // Rows of a vector width and one off it (whole-vector passes over padded rows), 1 and empty.
  for (int64_t w : {1, 15, 16, 17, 31, 32, 33, 128})
    for (int64_t pad : {0, 1}) {
      if (w + 2 * pad >= 3) check({1, 2, 5, w}, {3, 3}, {1, 1}, {1, 1}, {pad, pad, pad, pad}, false, seed++);
      if (w + 2 * pad >= 5) check({1, 2, 5, w}, {3, 3}, {1, 1}, {2, 2}, {pad, pad, pad, pad}, true, seed++);
      if (w + pad >= 3) check({1, 2, 5, w}, {2, 3}, {1, 2}, {1, 1}, {pad, 0, pad, pad}, true, seed++);
    }
  check({0, 2, 5, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, false, seed++);
  check({1, 2, 5, 7}, {3, 2}, {2, 1}, {1, 1}, {1, 0, 1, 1}, true, seed++);  // asymmetric everything
}

template <typename T>
void check_int(const Shape& x_shape, int64_t k, int64_t s, int64_t d, int64_t pad, bool ceil_mode, uint32_t seed) {
  PoolAttrs a;
  a.kind = PoolKind::kMax;
  a.kernel_shape = {k, k};
  a.strides = {s, s};
  a.dilations = {d, d};
  a.pads = {pad, pad, pad, pad};
  a.ceil_mode = ceil_mode;
  const PoolGeometry g = pool_geometry(a, x_shape, "test");
  const DType t = std::is_same_v<T, int8_t> ? DType::kInt8 : DType::kUInt8;
  Tensor x = Tensor::allocate(t, x_shape);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<T>()[i] = static_cast<T>(rng());  // the whole range
  const Shape ys = g.output_shape();
  Tensor y = Tensor::allocate(t, ys), r = Tensor::allocate(t, ys);
  max_pool_ref<T>(g, 0, x.data_as<T>(), r.data_as<T>(), nullptr);
  if (!max_pool_2d_plain<T>(g, x.data_as<T>(), y.data_as<T>())) return;  // an empty window: the reference's
  ASSERT_EQ(0, std::memcmp(y.data(), r.data(), r.nbytes()))
      << shape_to_string(x_shape) << " k " << k << " s " << s << " d " << d << " pad " << pad;
  // The NHWC kernel on the same values, channels-last in and out.
  auto to_nhwc = [](const Tensor& t) {
    const Shape& sh = t.shape();
    Tensor o = Tensor::allocate(t.dtype(), sh);
    for (int64_t n = 0; n < sh[0]; ++n)
      for (int64_t c = 0; c < sh[1]; ++c)
        for (int64_t p = 0; p < sh[2] * sh[3]; ++p)
          o.data_as<T>()[(n * sh[2] * sh[3] + p) * sh[1] + c] = t.data_as<T>()[(n * sh[1] + c) * sh[2] * sh[3] + p];
    return o;
  };
  const Tensor xn = to_nhwc(x), rn = to_nhwc(r);
  Tensor yn = Tensor::allocate(t, ys);
  ASSERT_TRUE(max_pool_2d_nhwc<T>(g, xn.data_as<T>(), yn.data_as<T>()));
  ASSERT_EQ(0, std::memcmp(yn.data(), rn.data(), rn.nbytes()))
      << "NHWC " << shape_to_string(x_shape) << " k " << k << " s " << s << " d " << d << " pad " << pad;
}

TEST(MaxPool2d, Int8AndUint8MatchTheReference) {
  uint32_t seed = 7;
  for (int64_t kk : {1, 2, 3})
    for (int64_t st : {1, 2})
      for (int64_t dil : {1, 2})
        for (int64_t pad : {0, 1})
          for (bool ceil_mode : {false, true}) {
            if (pad >= kk) continue;
            check_int<int8_t>({2, 3, 9, 14}, kk, st, dil, pad, ceil_mode, seed++);
            check_int<uint8_t>({1, 2, 17, 5}, kk, st, dil, pad, ceil_mode, seed++);
          }
  check_int<int8_t>({1, 64, 112, 112}, 3, 2, 1, 1, false, seed++);  // ResNet's stem
}

TEST(MaxPool2d, IntegerWindowWithoutTapsIsDeclined) {
  // Kernel 2, dilation 3, pad 1 on a width-2 input: output column 0 taps columns -1 and 2.
  PoolAttrs a;
  a.kind = PoolKind::kMax;
  a.kernel_shape = {1, 2};
  a.dilations = {1, 3};
  a.pads = {0, 1, 0, 1};
  const PoolGeometry g = pool_geometry(a, {1, 1, 1, 2}, "test");
  int8_t x[2] = {5, 6}, y[4] = {};
  EXPECT_FALSE(max_pool_2d_plain<int8_t>(g, x, y));
  EXPECT_FALSE(max_pool_2d_nhwc<int8_t>(g, x, y));
}

TEST(MaxPool2d, OtherRanksAreDeclined) {
  PoolAttrs a;
  a.kernel_shape = {2};
  const PoolGeometry g = pool_geometry(a, {1, 1, 8}, "test");
  float x[8] = {}, y[8] = {};
  EXPECT_FALSE(max_pool_2d_plain(g, x, y));
}

}  // namespace
}  // namespace pointrt::nn
