// GatherElements(data, Expand(i, shape)) folded into GatherElementsExpanded (the tensor pass):
// the kernel on broadcast indices against Expand's and GatherElements' references (awkward sizes,
// int32/int64, negative indices, broadcast on the last, a middle or a prepended dim), and through
// Session: the fold happens only when nothing else reads the Expand, its result equals the
// unoptimised session's, and a bad index is reported at its position in the expanded indices.
#include <random>

#include "ops/onnx/tensor/expand.h"
#include "ops/onnx/tensor/gather.h"
#include "support/model_builder.h"
#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;
using pointrt::test::ModelBuilder;

TEST(GatherElementsExpanded, BroadcastIndicesMatchExpandThenGatherReference) {
  std::mt19937 rng(11);
  int checked = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = 1 + iter % 4;
    Shape data = random_shape(rng, rank, false);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    static const int64_t sizes[] = {0, 1, 2, 3, 5, 16, 17};
    Shape target = data;  // the expanded indices: any size on the axis, at most data's elsewhere
    for (int d = 0; d < rank; ++d)
      target[d] = d == axis ? sizes[rng() % 7] : static_cast<int64_t>(rng() % (data[d] + 1));
    Shape small = target;  // what Expand reads: some dims 1 (broadcast), maybe fewer leading dims
    for (int d = 0; d < rank; ++d)
      if (rng() % 2) small[d] = 1;
    const size_t drop = rng() % 2 ? 0 : rng() % rank;
    bool leading_ones = true;
    for (size_t d = 0; d < drop; ++d) leading_ones &= small[d] == 1;
    if (leading_ones) small.erase(small.begin(), small.begin() + drop);
    for (DType index_type : {DType::kInt64, DType::kInt32}) {
      Tensor idx = index_tensor(index_type, small, data[axis], rng);
      Tensor expanded = Tensor::zeros(index_type, target);
      expand_ref(idx, expanded);
      for (DType dt : {DType::kUInt8, DType::kFloat32, DType::kInt64}) {
        Tensor x = random_tensor(dt, data, rng);
        Tensor fast = Tensor::zeros(dt, target), ref = Tensor::zeros(dt, target);
        gather_elements_cpu(x, idx, target, axis, fast, "test", "indices");
        gather_elements_ref(x, expanded, axis, ref);
        ASSERT_TRUE(same_bytes(fast, ref)) << "data " << shape_to_string(data) << " indices " << shape_to_string(small)
                                           << " -> " << shape_to_string(target) << " axis " << axis;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 300 * 2 * 3);
  // Threads: kNN grouping's shape (every row one index), large enough to run in parallel.
  Tensor x = random_tensor(DType::kFloat32, {1, 4000, 40}, rng);
  Tensor idx = index_tensor(DType::kInt64, {1, 16000, 1}, 4000, rng),
         expanded = Tensor::zeros(DType::kInt64, {1, 16000, 40});
  expand_ref(idx, expanded);
  Tensor fast = Tensor::zeros(DType::kFloat32, {1, 16000, 40}), ref = Tensor::zeros(DType::kFloat32, {1, 16000, 40});
  gather_elements_cpu(x, idx, {1, 16000, 40}, 1, fast, "test", "indices");
  gather_elements_ref(x, expanded, 1, ref);
  EXPECT_TRUE(same_bytes(fast, ref));
}

// data [1, N, C] float, idx [B, M, 1] int64 (graph inputs, so nothing folds to a constant),
// shape [B, M, C] from Concat(Shape(idx)[0:2], Shape(data)[2:]) as torch exports it.
ModelBuilder gather_of_expanded(bool expanded_is_output) {
  ModelBuilder mb(13);
  mb.input("data", DType::kFloat32, {1, "N", "C"});
  mb.input("idx", DType::kInt64, {"B", "M", 1});
  mb.initializer("zero", i64({1}, {0}));
  mb.initializer("two", i64({1}, {2}));
  mb.initializer("three", i64({1}, {3}));
  mb.node("Shape", {"idx"}, {"idx_shape"}, "", "idx_shape");
  mb.node("Shape", {"data"}, {"data_shape"}, "", "data_shape");
  mb.node("Slice", {"idx_shape", "zero", "two"}, {"lead"}, "", "lead");
  mb.node("Slice", {"data_shape", "two", "three"}, {"channels"}, "", "channels");
  ModelBuilder::attr_int(mb.node("Concat", {"lead", "channels"}, {"shape"}, "", "shape"), "axis", 0);
  mb.node("Expand", {"idx", "shape"}, {"expanded"}, "", "expand");
  ModelBuilder::attr_int(mb.node("GatherElements", {"data", "expanded"}, {"Y"}, "", "gather"), "axis", 1);
  mb.output("Y");
  if (expanded_is_output) mb.output("expanded");
  return mb;
}

std::string plan_text(const Session& s) {
  std::string all;
  for (const std::string& p : s.execution_plan()) all += p + " ";
  return all;
}

TEST(GatherElementsExpanded, SessionFoldsTheExpandAndMatchesUnoptimised) {
  const Model m = gather_of_expanded(false).load("gather_expand.onnx");
  SessionOptions plain;
  plain.optimize = false;
  Session folded(m), unfolded(m, plain);
  const std::string plan = plan_text(folded);
  EXPECT_NE(plan.find("GatherElementsExpanded:gather"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("Expand:expand"), std::string::npos) << plan;
  EXPECT_NE(plan_text(unfolded).find("Expand:expand"), std::string::npos);
  std::mt19937 rng(3);
  for (int64_t n : {1, 7, 64})
    for (int64_t c : {1, 3, 64})
      for (int64_t mm : {0, 1, 17, 1024}) {
        const Tensor data = random_tensor(DType::kFloat32, {1, n, c}, rng);
        const Tensor idx = index_tensor(DType::kInt64, {1, mm, 1}, n, rng);
        const Tensor a = folded.run({{"data", data}, {"idx", idx}})[0];
        const Tensor b = unfolded.run({{"data", data}, {"idx", idx}})[0];
        ASSERT_TRUE(same_bytes(a, b)) << n << " " << c << " " << mm;
      }
}

TEST(GatherElementsExpanded, ExpandReadElsewhereIsNotFolded) {
  Session s(gather_of_expanded(true).load("gather_expand.onnx"));
  const std::string plan = plan_text(s);
  EXPECT_NE(plan.find("Expand:expand"), std::string::npos) << plan;
  EXPECT_NE(plan.find("GatherElements:gather"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("GatherElementsExpanded"), std::string::npos) << plan;
}

TEST(GatherElementsExpanded, BadIndexNamedAtItsExpandedPosition) {
  Session s(gather_of_expanded(false).load("gather_expand.onnx"));
  const Tensor data = f32({1, 4, 4}, std::vector<float>(16, 1.f));
  // Row 1 of the expanded [1, 3, 4] indices holds 5: its first element is position 4.
  pointrt::test::expect_error(
      [&] {
        s.run({{"data", data}, {"idx", i64({1, 3, 1}, {0, 5, 1})}});
      },
      {"gather_expand.onnx", "node 'gather'", "holds 5 at position 4", "[-4, 3]"});
  // Indices larger than data off the axis (batch 2 of 1): the expanded shape is checked as
  // GatherElements checks its indices.
  pointrt::test::expect_error(
      [&] {
        s.run({{"data", data}, {"idx", i64({2, 3, 1}, {0, 1, 1, 2, 3, 0})}});
      },
      {"node 'gather'", "indices [2, 3, 4] exceed data [1, 4, 4] on dimension 0"});
}

}  // namespace
}  // namespace pointrt::tensor
