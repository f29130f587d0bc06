// eliminate-common-subexpressions: duplicate nodes (same operator, inputs, attributes) merge,
// duplicates of duplicates too; nodes that differ in an attribute, random draws, graph outputs and
// values a subgraph reads stay; results equal the unoptimised session's.
#include <gtest/gtest.h>

#include <string>

#include "io/tensor_compare.h"
#include "unit/control_flow_util.h"

namespace pointrt {
namespace {

using test::ModelBuilder;

int plan_count(const Session& s, const std::string& op) {
  int n = 0;
  for (const std::string& step : s.execution_plan()) n += step.rfind(op + ":", 0) == 0;
  return n;
}

SessionOptions unoptimised() {
  SessionOptions o;
  o.optimize = false;
  return o;
}

// X -> Transpose a / b (same perm) -> Relu each -> Add; Transpose c with another perm.
ModelBuilder duplicate_chain() {
  ModelBuilder b(13);
  b.input("X", DType::kFloat32, {2, 3, 4});
  for (const char* name : {"ta", "tb"})
    ModelBuilder::attr_ints(b.node("Transpose", {"X"}, {std::string(name) + "_out"}, "", name), "perm", {0, 2, 1});
  ModelBuilder::attr_ints(b.node("Transpose", {"X"}, {"tc_out"}, "", "tc"), "perm", {2, 1, 0});
  b.node("Relu", {"ta_out"}, {"ra"}, "", "ra");
  b.node("Relu", {"tb_out"}, {"rb"}, "", "rb");  // a duplicate once tb is merged into ta
  b.node("Add", {"ra", "rb"}, {"Y"}, "", "add");
  b.node("ReduceSum", {"tc_out"}, {"Z"}, "", "sum");
  b.output("Y");
  b.output("Z");
  return b;
}

TEST(CommonSubexpressions, DuplicatesAndTheirDuplicatesMerge) {
  const Model m = duplicate_chain().load("cse.onnx");
  Session merged(m), plain(m, unoptimised());
  EXPECT_EQ(plan_count(merged, "Transpose"), 2);  // ta and tc (tc's perm differs)
  EXPECT_EQ(plan_count(merged, "Relu"), 1);
  EXPECT_EQ(plan_count(plain, "Transpose"), 3);
  EXPECT_EQ(plan_count(plain, "Relu"), 2);
  Tensor x = Tensor::allocate(DType::kFloat32, {2, 3, 4});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(i % 7) - 3.f;
  const auto a = merged.run({{"X", x}}), b = plain.run({{"X", x}});
  ASSERT_EQ(a.size(), 2u);
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].shape(), b[k].shape());
    EXPECT_EQ(0, std::memcmp(a[k].data(), b[k].data(), a[k].nbytes())) << k;
  }
}

TEST(CommonSubexpressions, RandomDrawsAndGraphOutputsStay) {
  ModelBuilder b(13);
  b.input("X", DType::kFloat32, {64});
  b.node("RandomUniformLike", {"X"}, {"u1"}, "", "u1");
  b.node("RandomUniformLike", {"X"}, {"u2"}, "", "u2");
  b.node("Neg", {"X"}, {"n1"}, "", "n1");
  b.node("Neg", {"X"}, {"n2"}, "", "n2");  // a duplicate, but both are graph outputs
  for (const char* o : {"u1", "u2", "n1", "n2"}) b.output(o);
  Session s(b.load("cse.onnx"));
  EXPECT_EQ(plan_count(s, "RandomUniformLike"), 2);
  EXPECT_EQ(plan_count(s, "Neg"), 2);
  Tensor x = Tensor::zeros(DType::kFloat32, {64});
  const auto y = s.run({{"X", x}});
  EXPECT_NE(0, std::memcmp(y[0].data(), y[1].data(), y[0].nbytes()));  // two draws, not one
}

TEST(CommonSubexpressions, ValueReadByASubgraphKeepsItsProducer) {
  // a = Neg(X), b = Neg(X); If(cond) then Identity(b) else Identity(a): the branches read a and
  // b by name, so neither Neg may be merged away.
  ModelBuilder b(13);
  b.input("X", DType::kFloat32, {3});
  b.input("cond", DType::kBool, {});
  b.node("Neg", {"X"}, {"a"}, "", "neg_a");
  b.node("Neg", {"X"}, {"b"}, "", "neg_b");
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  else_g.set_name("else");
  test::sub_node(then_g, "Identity", {"b"}, {"t_out"});
  test::sub_value(then_g.mutable_output(), "t_out", DType::kFloat32);
  test::sub_node(else_g, "Identity", {"a"}, {"e_out"});
  test::sub_value(else_g.mutable_output(), "e_out", DType::kFloat32);
  auto& n = b.node("If", {"cond"}, {"Y"}, "", "if0");
  test::attr_graph(n, "then_branch", then_g);
  test::attr_graph(n, "else_branch", else_g);
  b.output("Y");
  Session s(b.load("cse.onnx"));
  EXPECT_EQ(plan_count(s, "Neg"), 2);
  const Tensor x = test::float_tensor({3}, {1.f, -2.f, 3.f});
  for (bool c : {true, false}) {
    const auto y = s.run({{"X", x}, {"cond", test::bool_scalar(c)}});
    EXPECT_EQ(test::values_of(y[0]), (std::vector<float>{-1.f, 2.f, -3.f}));
  }
}

}  // namespace
}  // namespace pointrt
