// CastLike: input 0 converted to input 1's element type with Cast's rules; the target's values
// are never read (an empty target works), and casting to the same type aliases the input.
#include <gtest/gtest.h>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(CastLike, TakesTheTargetsTypeNotItsValues) {
  NodeCase c{"CastLike", 15, "", {{"x", tensor_of<float>({4}, {1.5f, -2.7f, 1e20f, 0})}, {"like", iota_tensor({0})}}};
  c.inputs[1].second = Tensor::allocate(DType::kInt8, {0});
  const Tensor y = run_node(c)[0];
  ASSERT_EQ(y.dtype(), DType::kInt8);
  EXPECT_EQ(values_of<int8_t>(y), (std::vector<int8_t>{1, -2, 127, 0}));  // saturates like Cast

  c.inputs[1].second = Tensor::allocate(DType::kFloat16, {3, 3});
  const Tensor h = run_node(c)[0];
  ASSERT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(half_to_float(h.data_as<uint16_t>()[0]), 1.5f);
  EXPECT_TRUE(std::isinf(half_to_float(h.data_as<uint16_t>()[2])));

  c.inputs[1].second = Tensor::allocate(DType::kBool, {1});
  EXPECT_EQ(values_of<bool>(run_node(c)[0]), (std::vector<bool>{true, true, true, false}));
}

TEST(CastLike, SameTypeIsTheInput) {
  NodeCase c{"CastLike", 19, "", {{"x", iota_tensor({3})}, {"like", iota_tensor({1})}}};
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{0, 1, 2}));
}
