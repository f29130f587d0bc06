// Shape ops (Reshape, Squeeze/Unsqueeze, Flatten, Shape, Size, Constant, Range, NonZero, OneHot):
// rules, zero-copy reshape, errors naming the node; the tensor family's table rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;

TEST(TensorShapeOps, ReshapeRulesAndZeroCopy) {
  Tensor x = f32({2, 3, 4}, std::vector<float>(24, 1.f));
  auto y = run_op("Reshape", 13, {x, i64({3}, {0, -1, 2})});
  EXPECT_EQ(y[0].shape(), (Shape{2, 6, 2}));
  EXPECT_EQ(y[0].data(), x.data());  // aliasing, no copy
  Tensor empty = f32({0, 3}, {});
  y = run_op("Reshape", 14, {empty, i64({2}, {3, 0})}, {{"allowzero", attr_int(1)}});
  EXPECT_EQ(y[0].shape(), (Shape{3, 0}));
  // Without allowzero the 0 copies dim 1 (3): [3, 3] has 9 elements, not 0.
  std::string msg = error_of([&] { run_op("Reshape", 14, {empty, i64({2}, {3, 0})}); });
  EXPECT_NE(msg.find("cannot reshape"), std::string::npos) << msg;
}

TEST(TensorShapeOps, ReshapeErrors) {
  Tensor x = f32({2, 3}, std::vector<float>(6, 1.f));
  std::string msg = error_of([&] { run_op("Reshape", 13, {x, i64({2}, {-1, -1})}); });
  EXPECT_NE(msg.find("more than one -1"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Reshape", 13, {x, i64({2}, {4, -1})}); });
  EXPECT_NE(msg.find("cannot reshape"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Reshape", 14, {x, i64({2}, {0, -1})}, {{"allowzero", attr_int(1)}}); });
  EXPECT_NE(msg.find("allowzero"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Reshape", 13, {x, i64({3}, {1, 1, 0})}); });
  EXPECT_NE(msg.find("rank 2"), std::string::npos) << msg;
  // Requested sizes whose product overflows int64 (found by fuzz_run): an error, not UB.
  const int64_t big = int64_t(1) << 40;
  msg = error_of([&] { run_op("Reshape", 13, {x, i64({3}, {big, big, -1})}); });
  EXPECT_NE(msg.find("overflows int64"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Reshape", 13, {x, i64({2}, {big, big})}); });
  EXPECT_NE(msg.find("overflows int64"), std::string::npos) << msg;
}

TEST(TensorShapeOps, SqueezeUnsqueezeFlattenShapeSize) {
  Tensor x = f32({1, 3, 1}, {1, 2, 3});
  EXPECT_EQ(run_op("Squeeze", 13, {x})[0].shape(), (Shape{3}));
  EXPECT_EQ(run_op("Squeeze", 13, {x, i64({1}, {-1})})[0].shape(), (Shape{1, 3}));
  EXPECT_EQ(run_op("Squeeze", 11, {x}, {{"axes", attr_ints({0})}})[0].shape(), (Shape{3, 1}));
  std::string msg = error_of([&] { run_op("Squeeze", 13, {x, i64({1}, {1})}); });
  EXPECT_NE(msg.find("not 1"), std::string::npos) << msg;
  EXPECT_EQ(run_op("Unsqueeze", 13, {x, i64({2}, {0, -1})})[0].shape(), (Shape{1, 1, 3, 1, 1}));
  EXPECT_EQ(run_op("Unsqueeze", 11, {x}, {{"axes", attr_ints({1})}})[0].shape(), (Shape{1, 1, 3, 1}));
  msg = error_of([&] { run_op("Unsqueeze", 13, {x, i64({2}, {0, 0})}); });
  EXPECT_NE(msg.find("twice"), std::string::npos) << msg;
  EXPECT_EQ(run_op("Flatten", 13, {x}, {{"axis", attr_int(-1)}})[0].shape(), (Shape{3, 1}));
  EXPECT_EQ(run_op("Flatten", 13, {x}, {{"axis", attr_int(0)}})[0].shape(), (Shape{1, 3}));
  auto s = run_op("Shape", 15, {x}, {{"start", attr_int(-2)}})[0];
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(s.shape(), (Shape{2}));
  EXPECT_EQ(s.data_as<int64_t>()[0], 3);
  EXPECT_EQ(run_op("Shape", 15, {x}, {{"start", attr_int(2)}, {"end", attr_int(1)}})[0].numel(), 0);
  auto n = run_op("Size", 13, {x})[0];
  EXPECT_EQ(n.rank(), 0u);
  EXPECT_EQ(*n.data_as<int64_t>(), 3);
}

TEST(TensorShapeOps, ConstantRangeNonZeroOneHot) {
  auto c = run_op("Constant", 13, {}, {{"value_ints", attr_ints({4, 5})}})[0];
  EXPECT_EQ(c.shape(), (Shape{2}));
  auto cs = run_op("ConstantOfShape", 20, {i64({2}, {2, 3})}, {{"value", attr_tensor(i64({1}, {7}))}})[0];
  EXPECT_EQ(cs.shape(), (Shape{2, 3}));
  EXPECT_EQ(cs.data_as<int64_t>()[5], 7);
  auto r = run_op("Range", 11, {i64({}, {10}), i64({}, {4}), i64({}, {-3})})[0];
  EXPECT_EQ(r.numel(), 2);
  EXPECT_EQ(r.data_as<int64_t>()[1], 7);
  std::string msg = error_of([&] { run_op("Range", 11, {i64({}, {0}), i64({}, {4}), i64({}, {0})}); });
  EXPECT_NE(msg.find("delta"), std::string::npos) << msg;
  auto nz = run_op("NonZero", 13, {f32({2, 2}, {1, 0, 0, 3})})[0];
  EXPECT_EQ(nz.shape(), (Shape{2, 2}));
  EXPECT_EQ(nz.data_as<int64_t>()[1], 1);  // row of the second non-zero
  auto oh = run_op("OneHot", 11, {i64({3}, {0, -1, 5}), i64({}, {3}), f32({2}, {0, 1})})[0];
  EXPECT_EQ(oh.shape(), (Shape{3, 3}));
  EXPECT_EQ(oh.data_as<float>()[0], 1.f);
  EXPECT_EQ(oh.data_as<float>()[5], 1.f);
  for (int i = 6; i < 9; ++i) EXPECT_EQ(oh.data_as<float>()[i], 0.f);  // out of range: all off
}

TEST(TensorShapeOps, MoreErrorPathsNameTheNode) {
  auto expect_error = [](const std::function<void()>& f, const char* needle) {
    std::string msg = error_of(f);
    EXPECT_NE(msg.find("node 'n1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  };
  Tensor x = f32({2, 3}, std::vector<float>(6, 0.f));
  expect_error([&] { run_op("Tile", 13, {x, i64({1}, {2})}); }, "rank 2");
  expect_error([&] { run_op("Tile", 13, {x, i64({2}, {1, -1})}); }, "negative");
  expect_error([&] { run_op("Expand", 13, {x, i64({2}, {2, -3})}); }, "negative");
  expect_error([&] { run_op("ConstantOfShape", 9, {i64({2}, {2, -1})}); }, "negative");
  expect_error([&] { run_op("OneHot", 11, {i64({1}, {0}), i64({}, {0}), f32({2}, {0, 1})}); }, "depth");
  expect_error([&] { run_op("OneHot", 11, {i64({1}, {0}), i64({}, {2}), f32({3}, {0, 1, 2})}); }, "values");
  expect_error([&] { run_op("Concat", 13, {x, i64({2, 3}, {0, 0, 0, 0, 0, 0})}, {{"axis", attr_int(0)}}); }, "int64");
  expect_error([&] { run_op("Concat", 13, {x}, {{"axis", attr_int(2)}}); }, "axis 2");
  expect_error([&] { run_op("Flatten", 13, {x}, {{"axis", attr_int(3)}}); }, "'axis'");
  expect_error([&] { run_op("Pad", 13, {x, i64({4}, {0, 0, 0, 0})}, {{"mode", attr_str("mirror")}}); }, "mirror");
  expect_error([&] { run_op("GatherND", 13, {x, i64({1, 3}, {0, 0, 0})}); }, "last dimension");
  expect_error([&] { run_op("ScatterND", 13, {x, i64({1, 1}, {0}), f32({1, 2}, {0, 0})}); }, "updates");
  expect_error([&] { run_op("Split", 18, {x}, {{"num_outputs", attr_int(3)}}, 2); }, "num_outputs");
  expect_error([&] { run_op("Range", 11, {i64({}, {0}), i64({2}, {4, 5}), i64({}, {1})}); }, "scalar");
}

TEST(TensorShapeOps, ShapeAndSizeReadOnlyTheShape) {
  // Constant folding feeds Shape/Size a placeholder without data for statically shaped values.
  Tensor placeholder = Tensor::wrap(DType::kFloat32, {4, 0, 7}, nullptr);
  auto s = run_op("Shape", 13, {placeholder})[0];
  EXPECT_EQ(s.data_as<int64_t>()[2], 7);
  EXPECT_EQ(*run_op("Size", 13, {placeholder})[0].data_as<int64_t>(), 0);
}

// Every op of the family has rows with no gaps from its first opset (>= 7) up to 21.
TEST(TensorTable, RowsCoverOpsetsWithoutGaps) {
  const char* ops[] = {"Concat", "ConstantOfShape", "Constant", "Expand",  "Flatten",
                       "Gather", "GatherElements",  "GatherND", "Reshape", "Shape",
                       "Size",   "Slice",           "Split",    "Squeeze", "Unsqueeze",
                       "Tile",   "Transpose",       "Pad",      "Range",   "NonZero",
                       "OneHot", "ScatterElements", "ScatterND"};
  for (const char* op : ops) {
    auto rows = op_table().find_all("", op);
    ASSERT_FALSE(rows.empty()) << op;
    int first = 99;
    for (auto* e : rows) first = std::min(first, e->since);
    for (int v = first; v <= 21; ++v) EXPECT_NE(op_table().find("", op, v), nullptr) << op << " opset " << v;
  }
}

}  // namespace
}  // namespace pointrt::tensor
