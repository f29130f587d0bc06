// Compress, Unique, ReverseSequence and CenterCropPad: results against numpy's documented
// behaviour worked out by hand, sizes 0 and 1, both attribute forms, and the errors.
#include <gtest/gtest.h>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {
Tensor bools(const std::vector<bool>& v) {
  Tensor t = Tensor::allocate(DType::kBool, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<uint8_t>()[i] = v[i];
  return t;
}
}  // namespace

TEST(Compress, AxisFlattenShortConditionAndErrors) {
  NodeCase c{"Compress", 11, "", {{"x", iota_tensor({3, 2})}, {"cond", bools({false, true, true})}}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "axis", 0); };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{2, 3, 4, 5}));
  c.inputs[1].second = bools({false, true});  // shorter than the axis: the rest counts as false
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "axis", -1); };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 3, 5}));
  c.attrs = {};  // no axis: flattened
  c.inputs[1].second = bools({false, false, false, true, false, true});
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{3, 5}));
  c.inputs[1].second = bools(std::vector<bool>(7, true));
  EXPECT_NE(node_error(c).find("has 7 entries but the axis has only 6"), std::string::npos) << node_error(c);
  c.inputs[1].second = bools({});
  EXPECT_EQ(run_node(c)[0].numel(), 0);
}

TEST(Unique, SortedUnsortedAndAxis) {
  const Tensor x = tensor_of<float>({6}, {2, 1, 1, 3, 4, 3});
  NodeCase c{"Unique", 11, "", {{"x", x}}, {"y", "indices", "inverse", "counts"}};
  auto r = run_node(c);
  EXPECT_EQ(values_of<float>(r[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values_of<int64_t>(r[1]), (std::vector<int64_t>{1, 0, 3, 4}));
  EXPECT_EQ(values_of<int64_t>(r[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values_of<int64_t>(r[3]), (std::vector<int64_t>{2, 1, 2, 1}));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "sorted", 0); };
  r = run_node(c);
  EXPECT_EQ(values_of<float>(r[0]), (std::vector<float>{2, 1, 3, 4}));
  EXPECT_EQ(values_of<int64_t>(r[2]), (std::vector<int64_t>{0, 1, 1, 2, 3, 2}));
  // Rows of [[1, 0], [0, 1], [1, 0]] along axis 0: two distinct rows, [0, 1] first when sorted.
  NodeCase rows{"Unique", 11, "", {{"x", tensor_of<int32_t>({3, 2}, {1, 0, 0, 1, 1, 0})}}, {"y", "", "inv", "cnt"}};
  rows.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "axis", 0); };
  r = run_node(rows);
  EXPECT_EQ(values_of<int32_t>(r[0]), (std::vector<int32_t>{0, 1, 1, 0}));
  EXPECT_EQ(values_of<int64_t>(r[1]), (std::vector<int64_t>{1, 0, 1}));  // the omitted output is not returned
  EXPECT_EQ(values_of<int64_t>(r[2]), (std::vector<int64_t>{1, 2}));
  NodeCase empty{"Unique", 11, "", {{"x", iota_tensor({0})}}};
  EXPECT_EQ(run_node(empty)[0].numel(), 0);
}

TEST(ReverseSequence, BatchAndTimeAxes) {
  // time_axis 0, batch_axis 1: x[t, b]; batch 0 reverses 3 steps, batch 1 one step (unchanged).
  NodeCase c{"ReverseSequence", 10, "", {{"x", iota_tensor({3, 2})}, {"lens", tensor_of<int64_t>({2}, {3, 1})}}};
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{4, 1, 2, 3, 0, 5}));
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "batch_axis", 0);
    ModelBuilder::attr_int(n, "time_axis", 1);
  };
  c.inputs[1].second = tensor_of<int64_t>({3}, {2, 0, 1});
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 0, 2, 3, 4, 5}));
  c.inputs[1].second = tensor_of<int64_t>({3}, {2, 3, 1});
  EXPECT_NE(node_error(c).find("holds 3 at position 1, outside [0, 2]"), std::string::npos) << node_error(c);
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "batch_axis", 0); };
  EXPECT_NE(node_error(c).find("must be 0 and 1 or 1 and 0"), std::string::npos) << node_error(c);
}

TEST(CenterCropPad, CropsAndPadsAroundTheCentre) {
  NodeCase c{"CenterCropPad", 18, "", {{"x", iota_tensor({5, 2})}, {"shape", tensor_of<int64_t>({2}, {2, 5})}}};
  // Rows: (5 - 2) / 2 = 1 -> rows 1, 2. Columns: padded by (5 - 2) / 2 = 1 before, 2 after.
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{0, 2, 3, 0, 0, 0, 4, 5, 0, 0}));
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_ints(n, "axes", {-1}); };
  c.inputs[1].second = tensor_of<int64_t>({1}, {1});
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{0, 2, 4, 6, 8}));  // (2 - 1) / 2 = 0
  c.inputs[1].second = tensor_of<int64_t>({2}, {1, 1});
  EXPECT_NE(node_error(c).find("has 2 entries for 1 axes"), std::string::npos) << node_error(c);
}
