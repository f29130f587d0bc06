// Erf's vectorised float path (fast_erf_block: Taylor near 0, Abramowitz & Stegun 7.1.26 beyond)
// against std::erf over [-6, 6], tiny and subnormal arguments, infinities and NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ops/onnx/elementwise/elementwise.h"

namespace pointrt {
namespace {

TEST(ErfFast, CloseToStdErfEverywhere) {
  std::vector<float> x;
  for (int i = -60000; i <= 60000; ++i) x.push_back(i * 1e-4f);
  for (float v : {1e-30f, -1e-30f, 1e-40f, 0.f, -0.f, 0.35f, 0.3499999f, 3.99f, 4.f, 100.f, -100.f}) x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y(x.size());
  for (size_t b = 0; b < x.size(); b += 256)
    elementwise::fast_erf_block(x.data() + b, y.data() + b, static_cast<int64_t>(std::min<size_t>(256, x.size() - b)));
  double worst_abs = 0, worst_rel_small = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = std::erf(static_cast<double>(x[i]));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    worst_abs = std::max(worst_abs, std::fabs(y[i] - want));
    // Relative error only for normal results: a subnormal float holds fewer significant bits.
    if (std::fabs(x[i]) < 0.35f && std::fabs(want) >= std::numeric_limits<float>::min())
      worst_rel_small = std::max(worst_rel_small, std::fabs(y[i] - want) / std::fabs(want));
    if (x[i] == 0.f) {
      EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i]));
    }
  }
  EXPECT_LT(worst_abs, 4e-7);        // A&S 7.1.26's 1.5e-7 plus float rounding of the polynomial and 1 - p e
  EXPECT_LT(worst_rel_small, 3e-7);  // near 0 the error is relative, as GELU of small inputs needs
}

}  // namespace
}  // namespace pointrt
