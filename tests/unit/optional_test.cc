// Optional values (src/ops/onnx/sequence/sequence.h): Optional, OptionalHasElement,
// OptionalGetElement, optional graph inputs and outputs (AnyValue::none()), If branches and Loop
// bodies that take or return sequences and optionals, and the errors.
#include <gtest/gtest.h>

#include <thread>

#include "support/sequence_models.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

// opt (input optional(T)) -> has = OptionalHasElement(opt), got = OptionalGetElement(opt).
Model has_and_get_model(Wrap wrap, int64_t opset = 18) {
  ModelBuilder b(opset);
  wrapped_input(b, "opt", DType::kFloat32, wrap);
  b.node("OptionalHasElement", {"opt"}, {"has"}, "", "has");
  b.node("OptionalGetElement", {"opt"}, {"got"}, "", "get");
  b.output("has").output("got");
  return b.load();
}

TEST(Optional, HasAndGetElementOfATensor) {
  Session s(has_and_get_model(Wrap::kOptionalTensor));
  EXPECT_EQ(s.inputs()[0].to_string(), "opt: optional(float32)");
  auto out = s.run_any({{"opt", f32({3}, {1, 2, 3})}});
  EXPECT_EQ(values_of<bool>(out[0].tensor()), std::vector<bool>{true});
  EXPECT_EQ(values_of<float>(out[1].tensor()), (std::vector<float>{1, 2, 3}));
  std::string e = error_text([&] { s.run_any({{"opt", AnyValue::none()}}); });
  EXPECT_NE(e.find("node 'get' (OptionalGetElement): input 0 'opt' is an empty optional"), std::string::npos) << e;
  e = error_text([&] { s.run_any({{"opt", seq_of({})}}); });
  EXPECT_NE(e.find("input 'opt' is declared optional(float32) but gets a sequence"), std::string::npos) << e;
}

TEST(Optional, HasAndGetElementOfASequence) {
  Session s(has_and_get_model(Wrap::kOptionalSequence));
  EXPECT_EQ(s.inputs()[0].type_string(), "optional(seq(float32))");
  for (size_t n : {0u, 1u, 3u}) {
    std::vector<Tensor> items(n, f32({1}, {4}));
    auto out = s.run_any({{"opt", seq_of(items)}});
    EXPECT_EQ(values_of<bool>(out[0].tensor()), std::vector<bool>{true});
    ASSERT_TRUE(out[1].is_sequence());
    EXPECT_EQ(out[1].sequence().size(), n);
  }
}

TEST(Optional, EmptyOptionalThroughTheGraph) {
  // Optional(type = float) without an input -> an empty optional output; HasElement says false.
  ModelBuilder b(18);
  auto& n = b.node("Optional", {}, {"none"}, "", "make");
  attr_type(n, "type", DType::kFloat32, false);
  b.node("OptionalHasElement", {"none"}, {"has"}, "", "has");
  b.node("OptionalHasElement", {""}, {"has_absent"}, "", "has_absent");  // opset 18: no input -> false
  b.output("none").output("has").output("has_absent");
  auto out = run_any(b.load(), {});
  EXPECT_TRUE(out[0].is_none());
  EXPECT_EQ(values_of<bool>(out[1].tensor()), std::vector<bool>{false});
  EXPECT_EQ(values_of<bool>(out[2].tensor()), std::vector<bool>{false});
}

TEST(Optional, OptionalOfAnInputAndErrors) {
  ModelBuilder b(15);
  b.input("x", DType::kInt64, {});
  b.node("Optional", {"x"}, {"o"}, "", "wrap");
  b.node("OptionalGetElement", {"o"}, {"y"}, "", "get");
  b.output("y");
  auto out = run_any(b.load(), {{"x", i64(9)}});
  EXPECT_EQ(values_of<int64_t>(out[0].tensor()), std::vector<int64_t>{9});
  ModelBuilder c(15);
  c.node("Optional", {}, {"o"}, "", "untyped");
  c.output("o");
  std::string e = error_text([&] { Session s(c.load()); });
  EXPECT_NE(e.find("node 'untyped' (Optional): an Optional without an input needs the attribute 'type'"),
            std::string::npos)
      << e;
}

TEST(Optional, TensorApiRefusesASequenceOutput) {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {1});
  b.node("SequenceConstruct", {"x"}, {"s"}, "", "make");
  b.output("s");
  Session s(b.load());
  std::string e = error_text([&] { s.run({{"x", f32({1}, {1})}}); });
  EXPECT_NE(e.find("output 's' is a sequence of 1 float32 tensors, not a tensor (run it with run_any)"),
            std::string::npos)
      << e;
  // run_any serves plain tensor models too.
  ModelBuilder t(17);
  t.input("x", DType::kFloat32, {1});
  t.node("Relu", {"x"}, {"y"});
  t.output("y");
  auto out = run_any(t.load(), {{"x", f32({1}, {-1})}});
  EXPECT_EQ(values_of<float>(out[0].tensor()), std::vector<float>{0});
}

// If(cond): then -> SequenceConstruct(x, x), else -> Optional(type = seq(float)) (empty).
Model if_sequence_model() {
  auto branch = [](bool then) {
    onnx::GraphProto g;
    g.set_name(then ? "then" : "else");
    auto* n = g.add_node();
    if (then) {
      n->set_op_type("SequenceConstruct");
      n->add_input("x");
      n->add_input("x");
      n->add_output("r_then");
      set_wrapped_type(g.add_output()->mutable_type(), DType::kFloat32, Wrap::kOptionalSequence);
      g.mutable_output(0)->set_name("r_then");
    } else {
      n->set_op_type("Optional");
      n->add_output("r_else");
      auto* a = n->add_attribute();
      a->set_name("type");
      a->set_type(onnx::AttributeProto::TYPE_PROTO);
      a->mutable_tp()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
      set_wrapped_type(g.add_output()->mutable_type(), DType::kFloat32, Wrap::kOptionalSequence);
      g.mutable_output(0)->set_name("r_else");
    }
    return g;
  };
  ModelBuilder b(18);
  b.input("cond", DType::kBool, {}).input("x", DType::kFloat32, {2});
  auto& n = b.node("If", {"cond"}, {"r"}, "", "if");
  attr_graph(n, "then_branch", branch(true));
  attr_graph(n, "else_branch", branch(false));
  b.node("OptionalHasElement", {"r"}, {"has"}, "", "has");
  wrapped_output(b, "r", DType::kFloat32, Wrap::kOptionalSequence);
  b.output("has");
  return b.load();
}

TEST(Optional, IfBranchesReturnSequencesAndOptionals) {
  Session s(if_sequence_model());
  EXPECT_EQ(s.outputs()[0].to_string(), "r: optional(seq(float32))");
  const Tensor x = f32({2}, {1, 2});
  auto out = s.run_any({{"cond", tensor_of<bool>({}, {true})}, {"x", x}});
  ASSERT_TRUE(out[0].is_sequence());
  EXPECT_EQ(out[0].sequence().size(), 2u);
  EXPECT_EQ(values_of<bool>(out[1].tensor()), std::vector<bool>{true});
  out = s.run_any({{"cond", tensor_of<bool>({}, {false})}, {"x", x}});
  EXPECT_TRUE(out[0].is_none());
  EXPECT_EQ(values_of<bool>(out[1].tensor()), std::vector<bool>{false});
}

TEST(Optional, UntypedBranchesMayReturnSequences) {
  // Opset 18: ONNX's shape inference (opset 17 here) leaves the values untyped; the kinds are the run's.
  auto branch = [](bool then) {
    onnx::GraphProto g;
    g.set_name(then ? "then" : "else");
    auto* n = g.add_node();
    n->set_op_type(then ? "SequenceConstruct" : "SequenceEmpty");
    if (then) n->add_input("x");
    n->add_output("r");
    g.add_output()->set_name("r");
    return g;
  };
  ModelBuilder b(18);
  b.input("cond", DType::kBool, {}).input("x", DType::kFloat32, {2});
  auto& n = b.node("If", {"cond"}, {"r"}, "", "if");
  attr_graph(n, "then_branch", branch(true));
  attr_graph(n, "else_branch", branch(false));
  b.node("SequenceLength", {"r"}, {"len"}, "", "len");
  b.output("len");
  Session s(b.load());
  for (bool c : {true, false}) {
    auto out = s.run({{"cond", tensor_of<bool>({}, {c})}, {"x", f32({2}, {1, 2})}});
    EXPECT_EQ(values_of<int64_t>(out[0]), std::vector<int64_t>{c ? 1 : 0});
  }
}

// Loop(M): carried seq; each iteration appends iteration_num (as float via Cast).
Model loop_sequence_model() {
  onnx::GraphProto body;
  body.set_name("body");
  auto input = [&](const char* name, int elem) {
    auto* v = body.add_input();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(elem);
  };
  input("i", 7);
  input("c", 9);
  auto* sv = body.add_input();
  sv->set_name("s_in");
  set_wrapped_type(sv->mutable_type(), DType::kInt64, Wrap::kSequence);
  auto node = [&](const char* op, std::vector<std::string> in, const char* out) {
    auto* n = body.add_node();
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Identity", {"c"}, "c_out");
  node("SequenceInsert", {"s_in", "i"}, "s_out");
  body.add_output()->set_name("c_out");
  body.add_output()->set_name("s_out");
  ModelBuilder b(17);
  b.input("m", DType::kInt64, {});
  ModelBuilder::attr_int(b.node("SequenceEmpty", {}, {"s0"}, "", "empty"), "dtype", 7);
  auto& n = b.node("Loop", {"m", "", "s0"}, {"s"}, "", "loop");
  attr_graph(n, "body", body);
  b.node("SequenceLength", {"s"}, {"len"}, "", "len");
  b.output("s").output("len");
  return b.load();
}

TEST(Optional, LoopCarriesASequence) {
  Session s(loop_sequence_model());
  for (int64_t m : {0, 1, 5}) {
    auto out = s.run_any({{"m", i64(m)}});
    ASSERT_TRUE(out[0].is_sequence()) << m;
    ASSERT_EQ(out[0].sequence().size(), static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) EXPECT_EQ(values_of<int64_t>(out[0].sequence().at(i)), std::vector<int64_t>{i});
    EXPECT_EQ(values_of<int64_t>(out[1].tensor()), std::vector<int64_t>{m});
  }
}

TEST(Optional, ConcurrentRunsOfOneSession) {
  Session s(if_sequence_model());
  auto work = [&](bool cond, bool& ok) {
    ok = true;
    for (int rep = 0; rep < 50; ++rep) {
      auto out = s.run_any({{"cond", tensor_of<bool>({}, {cond})}, {"x", f32({2}, {1, 2})}});
      ok = ok && (cond ? out[0].is_sequence() : out[0].is_none());
    }
  };
  bool ok1 = false, ok2 = false;
  std::thread t1(work, true, std::ref(ok1)), t2(work, false, std::ref(ok2));
  t1.join();
  t2.join();
  EXPECT_TRUE(ok1);
  EXPECT_TRUE(ok2);
}

}  // namespace
