// Det: known determinants (permutation sign, singular, triangular), batches, M = 0 and 1, a
// random matrix against the Leibniz formula, and the shape errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(Det, KnownValuesAndBatches) {
  NodeCase c{"Det", 11, "", {{"x", tensor_of<double>({3, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0, 2, 4, 1, 2})}}};
  EXPECT_EQ(values_of<double>(run_node(c)[0]), (std::vector<double>{-2, -1, 0}));  // swap sign, singular
  NodeCase one{"Det", 11, "", {{"x", tensor_of<float>({1, 1}, {-7})}}};
  EXPECT_EQ(run_node(one)[0].shape(), Shape{});
  EXPECT_EQ(run_node(one)[0].data_as<float>()[0], -7.f);
  NodeCase empty{"Det", 11, "", {{"x", iota_tensor({2, 0, 0})}}};
  EXPECT_EQ(values_of<float>(run_node(empty)[0]), (std::vector<float>{1, 1}));
}

TEST(Det, RandomMatrixMatchesLeibniz) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> a(25);
  for (auto& v : a) v = d(rng);
  std::vector<int> perm(5);
  std::iota(perm.begin(), perm.end(), 0);
  double want = 0;
  do {
    int inversions = 0;
    for (int i = 0; i < 5; ++i)
      for (int j = i + 1; j < 5; ++j) inversions += perm[i] > perm[j];
    double term = inversions % 2 ? -1 : 1;
    for (int i = 0; i < 5; ++i) term *= a[i * 5 + perm[i]];
    want += term;
  } while (std::next_permutation(perm.begin(), perm.end()));
  NodeCase c{"Det", 11, "", {{"x", tensor_of<double>({5, 5}, a)}}};
  EXPECT_NEAR(run_node(c)[0].data_as<double>()[0], want, 1e-12);
}

TEST(Det, Errors) {
  NodeCase c{"Det", 11, "", {{"x", iota_tensor({2, 3})}}};
  EXPECT_NE(node_error(c).find("must be [..., M, M], got shape [2, 3]"), std::string::npos) << node_error(c);
}
