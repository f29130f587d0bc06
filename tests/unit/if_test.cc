// If: branches as subgraphs reading outer-scope values, nesting, shapes that differ between
// branches, folding of a constant condition, profiling, concurrent runs and the error messages.
#include <thread>

#include "control_flow_util.h"

namespace pointrt::test {
namespace {

// then: x + 1 (shape of x); else: Concat(x, x) (twice as long). Both read x from the main graph.
onnx::GraphProto add_one_branch() {
  onnx::GraphProto g;
  g.set_name("then");
  sub_initializer(g, "one", float_tensor({1}, {1.f}));
  sub_node(g, "Add", {"x", "one"}, {"t_out"}, "add_t");
  sub_value(g.mutable_output(), "t_out", DType::kFloat32);
  return g;
}
onnx::GraphProto concat_branch() {
  onnx::GraphProto g;
  g.set_name("else");
  auto& n = sub_node(g, "Concat", {"x", "x"}, {"e_out"}, "concat_e");
  ModelBuilder::attr_int(n, "axis", 0);
  sub_value(g.mutable_output(), "e_out", DType::kFloat32);
  return g;
}

Model if_model(bool constant_cond = false, bool cond_value = true, std::vector<DimSpec> cond_dims = {}) {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {std::string("n")});
  if (constant_cond)
    b.initializer("cond", bool_scalar(cond_value));
  else
    b.input("cond", DType::kBool, cond_dims);
  auto& n = b.node("If", {"cond"}, {"y"}, "", "if0");
  attr_graph(n, "then_branch", add_one_branch());
  attr_graph(n, "else_branch", concat_branch());
  b.output("y");
  return b.load();
}

TEST(If, RunsTheChosenBranchWithOuterScopeValues) {
  Model m = if_model();
  for (bool optimize : {false, true}) {
    auto t = run_model(m, {{"x", float_tensor({3}, {1, 2, 3})}, {"cond", bool_scalar(true)}}, optimize);
    EXPECT_EQ(values_of(t[0]), (std::vector<float>{2, 3, 4}));
    auto e = run_model(m, {{"x", float_tensor({3}, {1, 2, 3})}, {"cond", bool_scalar(false)}}, optimize);
    EXPECT_EQ(e[0].shape(), (Shape{6}));  // a branch output of another shape (If-11+)
    EXPECT_EQ(values_of(e[0]), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  }
}

TEST(If, SizesZeroAndOne) {
  Model m = if_model();
  auto z = run_model(m, {{"x", float_tensor({0}, {})}, {"cond", bool_scalar(false)}});
  EXPECT_EQ(z[0].shape(), (Shape{0}));
  auto o = run_model(m, {{"x", float_tensor({1}, {5})}, {"cond", bool_scalar(true)}});
  EXPECT_EQ(values_of(o[0]), (std::vector<float>{6}));
}

TEST(If, ConstantConditionIsFoldedIntoTheChosenBranch) {
  for (bool cond : {true, false}) {
    Model m = if_model(true, cond);
    SessionOptions o;
    Session s(m, o);
    for (const std::string& step : s.execution_plan()) EXPECT_EQ(step.find("If:"), std::string::npos) << step;
    auto r = s.run({{"x", float_tensor({2}, {1, 2})}});
    EXPECT_EQ(values_of(r[0]), cond ? (std::vector<float>{2, 3}) : (std::vector<float>{1, 2, 1, 2}));
  }
  // Without optimisation the If stays, and builds only the chosen branch.
  SessionOptions plain;
  plain.optimize = false;
  Session s(if_model(true, false), plain);
  EXPECT_EQ(s.execution_plan().size(), 1u);
  EXPECT_EQ(values_of(s.run({{"x", float_tensor({1}, {7})}})[0]), (std::vector<float>{7, 7}));
}

TEST(If, ConstantIfWhoseBranchReusesAnOuterNameStaysAnIf) {
  // The then-branch defines `one` (an initializer), which the main graph defines too: inlining would clash.
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {std::string("n")});
  b.initializer("cond", bool_scalar(true));
  auto& n = b.node("If", {"cond"}, {"y"}, "", "if_clash");
  attr_graph(n, "then_branch", add_one_branch());
  attr_graph(n, "else_branch", concat_branch());
  b.node("Neg", {"y"}, {"one"}, "", "neg");
  b.output("one");
  Session s(b.load());
  bool has_if = false;
  for (const std::string& step : s.execution_plan()) has_if = has_if || step.rfind("If:", 0) == 0;
  EXPECT_TRUE(has_if);
  EXPECT_EQ(values_of(s.run({{"x", float_tensor({2}, {1, 2})}})[0]), (std::vector<float>{-2, -3}));
}

TEST(If, ConstantIfInsideALoopBodyIsFoldedThere) {
  // body(i, cond, v): v' = If(true) then v + x else Concat(x, x); the body's own passes inline it.
  onnx::GraphProto then_g;
  sub_node(then_g, "Add", {"v", "x"}, {"plus"}, "plus_x");
  sub_value(then_g.mutable_output(), "plus", DType::kFloat32);
  onnx::GraphProto body = body_around_if("always", then_g, concat_branch());
  sub_initializer(body, "always", bool_scalar(true));
  SessionOptions o;
  o.profile = true;
  Session s(single_value_loop(body, "loop"), o);
  auto r = s.run({{"x", float_tensor({1}, {2})}, {"v0", float_tensor({1}, {1})}, {"M", int64_scalar(3)}});
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{7}));
  std::set<std::string> names;
  for (const auto& p : s.last_profile()) names.insert(p.node_name);
  EXPECT_TRUE(names.count("loop/body/plus_x"));
  EXPECT_FALSE(names.count("loop/body/choose"));
}

// Three Ifs nested: the innermost reads x (main graph) and `mid` (the middle If's branch).
Model nested_model() {
  onnx::GraphProto inner_then;
  sub_node(inner_then, "Add", {"x", "mid"}, {"inner_out"}, "add_inner");
  sub_value(inner_then.mutable_output(), "inner_out", DType::kFloat32);
  onnx::GraphProto inner_else;
  sub_node(inner_else, "Sub", {"x", "mid"}, {"inner_else_out"}, "sub_inner");
  sub_value(inner_else.mutable_output(), "inner_else_out", DType::kFloat32);

  onnx::GraphProto mid_then;
  sub_node(mid_then, "Mul", {"x", "x"}, {"mid"}, "square");
  auto& inner = sub_node(mid_then, "If", {"c2"}, {"mid_out"}, "if_inner");
  attr_graph(inner, "then_branch", inner_then);
  attr_graph(inner, "else_branch", inner_else);
  sub_value(mid_then.mutable_output(), "mid_out", DType::kFloat32);
  onnx::GraphProto mid_else;
  sub_node(mid_else, "Neg", {"x"}, {"neg_out"}, "neg");
  sub_value(mid_else.mutable_output(), "neg_out", DType::kFloat32);

  onnx::GraphProto outer_then;
  auto& mid = sub_node(outer_then, "If", {"c1"}, {"outer_out"}, "if_mid");
  attr_graph(mid, "then_branch", mid_then);
  attr_graph(mid, "else_branch", mid_else);
  sub_value(outer_then.mutable_output(), "outer_out", DType::kFloat32);
  onnx::GraphProto outer_else;
  sub_node(outer_else, "Identity", {"x"}, {"id_out"}, "identity");
  sub_value(outer_else.mutable_output(), "id_out", DType::kFloat32);

  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {std::string("n")});
  for (const char* c : {"c0", "c1", "c2"}) b.input(c, DType::kBool, {});
  auto& n = b.node("If", {"c0"}, {"y"}, "", "if_outer");
  attr_graph(n, "then_branch", outer_then);
  attr_graph(n, "else_branch", outer_else);
  b.output("y");
  return b.load();
}

TEST(If, NestedThreeDeepReadsEveryEnclosingScope) {
  Model m = nested_model();
  auto run = [&](bool c0, bool c1, bool c2) {
    return values_of(run_model(m, {{"x", float_tensor({2}, {2, 3})},
                                   {"c0", bool_scalar(c0)},
                                   {"c1", bool_scalar(c1)},
                                   {"c2", bool_scalar(c2)}})[0]);
  };
  EXPECT_EQ(run(true, true, true), (std::vector<float>{6, 12}));    // x + x*x
  EXPECT_EQ(run(true, true, false), (std::vector<float>{-2, -6}));  // x - x*x
  EXPECT_EQ(run(true, false, true), (std::vector<float>{-2, -3}));
  EXPECT_EQ(run(false, true, true), (std::vector<float>{2, 3}));
}

TEST(If, ProfileRowsOfTheBranchCarryTheOwningNodesName) {
  SessionOptions o;
  o.profile = true;
  o.optimize = false;
  Session s(nested_model(), o);
  s.run({{"x", float_tensor({2}, {2, 3})},
         {"c0", bool_scalar(true)},
         {"c1", bool_scalar(true)},
         {"c2", bool_scalar(true)}});
  std::set<std::string> names;
  for (const auto& p : s.last_profile()) names.insert(p.node_name);
  EXPECT_TRUE(names.count("if_outer"));
  EXPECT_TRUE(names.count("if_outer/then_branch/if_mid"));
  EXPECT_TRUE(names.count("if_outer/then_branch/if_mid/then_branch/square"));
  EXPECT_TRUE(names.count("if_outer/then_branch/if_mid/then_branch/if_inner/then_branch/add_inner"));
  for (const auto& p : s.last_profile()) EXPECT_GE(p.milliseconds, 0.0) << p.node_name;
}

TEST(If, ConcurrentRunsGiveIdenticalResults) {
  Model m = nested_model();
  Session s(m);
  std::vector<std::vector<float>> results(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        bool c2 = (i % 2) == 0;
        auto r = s.run({{"x", float_tensor({2}, {2, 3})},
                        {"c0", bool_scalar(true)},
                        {"c1", bool_scalar(true)},
                        {"c2", bool_scalar(c2)}});
        std::vector<float> want = c2 ? std::vector<float>{6, 12} : std::vector<float>{-2, -6};
        if (values_of(r[0]) != want) results[t] = values_of(r[0]);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_TRUE(results[0].empty());
  EXPECT_TRUE(results[1].empty());
}

TEST(If, BranchesOfDifferentTypeOrDeclaredRankAreOneLineErrors) {
  for (bool rank : {false, true}) {
    onnx::GraphProto then_g, else_g;
    sub_node(then_g, "Identity", {"x"}, {"a"});
    sub_value(then_g.mutable_output(), "a", DType::kFloat32, 1);
    sub_node(else_g, rank ? "Identity" : "Shape", {rank ? "x2" : "x"}, {"b"});
    sub_value(else_g.mutable_output(), "b", rank ? DType::kFloat32 : DType::kInt64, rank ? 2 : 1);
    ModelBuilder b(17);
    b.input("x", DType::kFloat32, {int64_t{3}});
    b.input("x2", DType::kFloat32, {int64_t{1}, int64_t{3}});
    b.input("cond", DType::kBool, {});
    auto& n = b.node("If", {"cond"}, {"y"}, "", "if_bad");
    attr_graph(n, "then_branch", then_g);
    attr_graph(n, "else_branch", else_g);
    b.output("y", DType::kFloat32, {std::string("m")}, true);  // a declared rank: both branches must have it
    std::string e = error_of([&] { Session s(b.load()); });
    EXPECT_NE(e.find("node 'if_bad' (If): output 0"), std::string::npos) << e;
    EXPECT_NE(e.find(rank ? "rank 1 in then_branch" : "float32 in then_branch"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(If, BranchesOfDifferentRankUnderAnOutputOfUnknownRank) {
  // As torch 1.13 writes squeeze() of a dynamic axis: Squeeze in one branch, Identity in the other.
  onnx::GraphProto then_g, else_g;
  sub_initializer(then_g, "axes", scalar_of<int64_t>(DType::kInt64, 0).reshaped({1}));
  sub_node(then_g, "Squeeze", {"x", "axes"}, {"squeezed"});
  sub_value(then_g.mutable_output(), "squeezed", DType::kFloat32, 1);
  sub_node(else_g, "Identity", {"x"}, {"same"});
  sub_value(else_g.mutable_output(), "same", DType::kFloat32, 2);
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {std::string("a"), int64_t{3}});
  b.input("cond", DType::kBool, {});
  auto& n = b.node("If", {"cond"}, {"y"}, "", "if_squeeze");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", else_g);
  b.output("y");
  Model m = b.load();
  EXPECT_EQ(run_model(m, {{"x", float_tensor({1, 3}, {1, 2, 3})}, {"cond", bool_scalar(true)}})[0].shape(), (Shape{3}));
  EXPECT_EQ(run_model(m, {{"x", float_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}, {"cond", bool_scalar(false)}})[0].shape(),
            (Shape{2, 3}));
}

TEST(If, ErrorsNameTheNodeAndTheValue) {
  // A branch reading a value nobody defines: at load.
  onnx::GraphProto then_g = add_one_branch();
  sub_node(then_g, "Identity", {"nobody"}, {"unused"});
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {int64_t{1}});
  b.input("cond", DType::kBool, {});
  auto& n = b.node("If", {"cond"}, {"y"}, "", "if_scope");
  attr_graph(n, "then_branch", then_g);
  attr_graph(n, "else_branch", concat_branch());
  b.output("y");
  std::string e = error_of([&] { b.load("scope.onnx"); });
  EXPECT_NE(e.find("scope.onnx: node 'if_scope' (If): subgraph 'then_branch' reads 'nobody'"), std::string::npos) << e;
  // A condition with two elements: at run time.
  Session s(if_model(false, true, {std::string("k")}));
  e = error_of([&] {
    Tensor c = Tensor::allocate(DType::kBool, {2});
    s.run({{"x", float_tensor({1}, {1})}, {"cond", c}});
  });
  EXPECT_NE(e.find("node 'if0' (If): the condition must have one element, got shape [2]"), std::string::npos) << e;
  // An operator inside a branch that pointrt does not have: named with its subgraph.
  onnx::GraphProto odd;
  sub_node(odd, "NoSuchOp", {"x"}, {"o"}, "odd");
  sub_value(odd.mutable_output(), "o");
  ModelBuilder b2(17);
  b2.input("x", DType::kFloat32, {int64_t{1}});
  b2.input("cond", DType::kBool, {});
  auto& n2 = b2.node("If", {"cond"}, {"y"}, "", "if_odd");
  attr_graph(n2, "then_branch", odd);
  attr_graph(n2, "else_branch", concat_branch());
  b2.output("y");
  e = error_of([&] { Session s2(b2.load()); });
  EXPECT_NE(e.find("subgraph 'then_branch' of node 'if_odd' (If): node 'odd' (NoSuchOp): operator ai.onnx::NoSuchOp "
                   "is not supported"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace pointrt::test
