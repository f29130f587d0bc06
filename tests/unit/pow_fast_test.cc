// Pow's scalar-exponent fast paths (x ** 2, x ** 3, x ** 1 as multiplies or a copy) against
// std::pow, including infinities, NaN and signed zeros.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "support/node_runner.h"

namespace pointrt {
namespace {

using test::NodeCase;
using test::tensor_of;
using test::values_of;

template <typename T>
void check_exponent(T e) {
  std::vector<T> x = {T(0),
                      T(-0.0),
                      T(1.5),
                      T(-2.25),
                      std::numeric_limits<T>::infinity(),
                      -std::numeric_limits<T>::infinity(),
                      std::numeric_limits<T>::quiet_NaN(),
                      T(1e30)};
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i) x.push_back(static_cast<T>(std::uniform_real_distribution<double>(-50, 50)(rng)));
  NodeCase c{"Pow", 15};
  c.inputs = {{"x", tensor_of<T>({static_cast<int64_t>(x.size())}, x)}, {"e", tensor_of<T>({}, {e})}};
  const auto got = values_of<T>(test::run_node(c)[0]);
  for (size_t i = 0; i < x.size(); ++i) {
    const T want = std::pow(x[i], e);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got[i])) << x[i];
    } else if (std::isinf(want) || want == 0) {
      EXPECT_EQ(got[i], want) << x[i];
      EXPECT_EQ(std::signbit(got[i]), std::signbit(want)) << x[i];
    } else {
      EXPECT_NEAR(got[i], want, std::fabs(want) * 4 * std::numeric_limits<T>::epsilon()) << x[i] << " ** " << e;
    }
  }
}

TEST(PowFast, SmallIntegerExponentsMatchStdPow) {
  for (double e : {1.0, 2.0, 3.0, 4.0, 0.5, -1.0}) {
    check_exponent<float>(static_cast<float>(e));
    check_exponent<double>(e);
  }
}

}  // namespace
}  // namespace pointrt
