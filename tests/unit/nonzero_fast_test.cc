// NonZero (counted, then written row by row) against a naive element-by-element oracle: ranks 0
// to 4, empty and all-zero inputs, densities, and the zero rules of each type (float -0 is zero,
// NaN is not; float16 by its bits, where 0x8000 is -0 but uint16 0x8000 is 32768).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/node_runner.h"

namespace pointrt {
namespace {

// Row-major coordinates of the elements `nonzero(i)` says are non-zero, as [rank, count].
template <typename F>
std::vector<int64_t> oracle(const Shape& shape, F nonzero) {
  const Shape s = shape.empty() ? Shape{1} : shape;
  std::vector<std::vector<int64_t>> coords;
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t i = 0; i < shape_numel(s); ++i) {
    if (nonzero(i)) coords.push_back(idx);
    for (size_t d = s.size(); d-- > 0;) {
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
  std::vector<int64_t> out;
  for (size_t d = 0; d < s.size(); ++d)
    for (const auto& c : coords) out.push_back(c[d]);
  return out;
}

std::vector<int64_t> run_nonzero(const Tensor& x) {
  test::NodeCase c{"NonZero", 13};
  c.inputs = {{"x", x}};
  return test::values_of<int64_t>(test::run_node(c)[0]);
}

TEST(NonZeroFast, FloatsAcrossRanksAndDensities) {
  std::mt19937 rng(4);
  for (const Shape& s : std::vector<Shape>{{}, {0}, {1}, {7}, {3, 0}, {2, 5}, {3, 1, 4}, {2, 3, 4, 5}, {1, 1024}})
    for (int density : {0, 10, 50, 100}) {
      Tensor x = Tensor::allocate(DType::kFloat32, s);
      float* p = x.data_as<float>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const bool keep = static_cast<int>(rng() % 100) < density;
        p[i] = keep ? (rng() % 5 == 0 ? NAN : 1.5f) : (rng() % 2 ? -0.f : 0.f);
      }
      EXPECT_EQ(run_nonzero(x), oracle(s, [&](int64_t i) { return !(p[i] == 0.f); })) << shape_to_string(s);
    }
}

TEST(NonZeroFast, BoolIntAndSixteenBitRules) {
  Tensor b = test::tensor_of<bool>({2, 3}, {true, false, false, true, true, false});
  EXPECT_EQ(run_nonzero(b), (std::vector<int64_t>{0, 1, 1, 0, 0, 1}));
  Tensor u = test::tensor_of<uint16_t>({4}, {0, 0x8000, 1, 0});
  EXPECT_EQ(run_nonzero(u), (std::vector<int64_t>{1, 2}));
  Tensor h = Tensor::allocate(DType::kFloat16, {4});
  const uint16_t halves[4] = {0x8000, 0x3c00, 0x0000, 0x7e00};  // -0, 1, +0, NaN
  std::memcpy(h.data(), halves, sizeof(halves));
  EXPECT_EQ(run_nonzero(h), (std::vector<int64_t>{1, 3}));
  Tensor i = test::tensor_of<int64_t>({2, 2}, {0, -3, 0, 0});
  EXPECT_EQ(run_nonzero(i), (std::vector<int64_t>{0, 1}));
}

}  // namespace
}  // namespace pointrt
