// Hardmax: one 1 at the first maximum of each row, both axis semantics (flattened before opset
// 13, one axis from 13), ties, NaN, float16, and sizes 0 and 1.
#include <gtest/gtest.h>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(Hardmax, OneAxisFromOpset13) {
  NodeCase c{"Hardmax", 13, "", {{"x", tensor_of<float>({2, 3}, {1, 3, 3, 2, NAN, 0})}}};
  // Row 0: tie between 1 and 2 -> the first. Row 1: NaN never wins.
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{0, 1, 0, 1, 0, 0}));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "axis", 0); };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{0, 1, 1, 1, 0, 0}));
}

TEST(Hardmax, FlattenedBeforeOpset13) {
  // [1, 2, 3] at axis 1 (default): each batch row of 6 elements has one 1.
  Tensor x = iota_tensor({2, 2, 3});
  x.data_as<float>()[2] = 100;
  NodeCase c{"Hardmax", 11, "", {{"x", x}}};
  const auto y = values_of<float>(run_node(c)[0]);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "axis", 3); };  // rank: rows of one
  EXPECT_EQ(values_of<float>(run_node(c)[0]), std::vector<float>(12, 1));
}

TEST(Hardmax, Float16AndEmpty) {
  Tensor h = Tensor::allocate(DType::kFloat16, {1, 3});
  for (int i = 0; i < 3; ++i) h.data_as<uint16_t>()[i] = float_to_half(static_cast<float>(i % 2));
  NodeCase c{"Hardmax", 13, "", {{"x", h}}};
  const Tensor y = run_node(c)[0];
  ASSERT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(half_to_float(y.data_as<uint16_t>()[1]), 1.f);
  NodeCase e{"Hardmax", 13, "", {{"x", iota_tensor({0, 4})}}};
  EXPECT_EQ(run_node(e)[0].shape(), (Shape{0, 4}));
}
