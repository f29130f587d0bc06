// Loop: trip counts and conditions (either absent), early exit, zero iterations, loop-carried
// values whose shape changes, scan outputs, outer-scope reads, concurrent runs and the errors.
#include <thread>

#include "control_flow_util.h"

namespace pointrt::test {
namespace {

// body(i, cond, acc): acc' = acc + x (x from the main graph); cond' = i < limit (from the main
// graph); scan output: acc'.
onnx::GraphProto accumulate_body() {
  onnx::GraphProto g;
  g.set_name("body");
  sub_value(g.mutable_input(), "i", DType::kInt64, 0);
  sub_value(g.mutable_input(), "cond_in", DType::kBool, 0);
  sub_value(g.mutable_input(), "acc", DType::kFloat32);
  sub_node(g, "Add", {"acc", "x"}, {"acc_out"}, "add");
  sub_node(g, "Less", {"i", "limit"}, {"cond_out"}, "less");
  sub_node(g, "Identity", {"acc_out"}, {"scan_out"}, "copy");
  sub_value(g.mutable_output(), "cond_out", DType::kBool);
  sub_value(g.mutable_output(), "acc_out", DType::kFloat32);
  sub_value(g.mutable_output(), "scan_out", DType::kFloat32);
  return g;
}

// Loop(M, cond, acc0) with M and cond optional ("" = absent).
Model loop_model(bool with_m, bool with_cond) {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {std::string("n")});
  b.input("acc0", DType::kFloat32, {std::string("n")});
  b.input("limit", DType::kInt64, {});
  if (with_m) b.input("M", DType::kInt64, {});
  if (with_cond) b.input("cond", DType::kBool, {});
  auto& n = b.node("Loop", {with_m ? "M" : "", with_cond ? "cond" : "", "acc0"}, {"acc", "scan"}, "", "loop0");
  attr_graph(n, "body", accumulate_body());
  b.output("acc");
  b.output("scan");
  return b.load();
}

TEST(Loop, TripCountRunsMIterationsWithScanOutputs) {
  Model m = loop_model(true, false);
  for (bool optimize : {false, true}) {
    auto r = run_model(m,
                       {{"x", float_tensor({2}, {1, 2})},
                        {"acc0", float_tensor({2}, {0, 10})},
                        {"limit", int64_scalar(100)},
                        {"M", int64_scalar(3)}},
                       optimize);
    EXPECT_EQ(values_of(r[0]), (std::vector<float>{3, 16}));
    EXPECT_EQ(r[1].shape(), (Shape{3, 2}));
    EXPECT_EQ(values_of(r[1]), (std::vector<float>{1, 12, 2, 14, 3, 16}));
  }
}

TEST(Loop, ZeroAndOneIterations) {
  Model m = loop_model(true, false);
  std::map<std::string, Tensor> feeds{
      {"x", float_tensor({2}, {1, 2})}, {"acc0", float_tensor({2}, {5, 6})}, {"limit", int64_scalar(100)}};
  feeds["M"] = int64_scalar(0);
  auto r = run_model(m, feeds);
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{5, 6}));
  EXPECT_EQ(r[1].shape(), (Shape{0}));
  feeds["M"] = int64_scalar(1);
  r = run_model(m, feeds);
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{6, 8}));
  EXPECT_EQ(r[1].shape(), (Shape{1, 2}));
}

TEST(Loop, ConditionExitsEarly) {
  // No trip count: runs while i < limit holds after each iteration (i = 0..limit).
  Model m = loop_model(false, true);
  auto r = run_model(m, {{"x", float_tensor({1}, {1})},
                         {"acc0", float_tensor({1}, {0})},
                         {"limit", int64_scalar(2)},
                         {"cond", bool_scalar(true)}});
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{3}));
  EXPECT_EQ(r[1].shape(), (Shape{3, 1}));
  // An initial condition false: no iteration.
  r = run_model(m, {{"x", float_tensor({1}, {1})},
                    {"acc0", float_tensor({1}, {0})},
                    {"limit", int64_scalar(2)},
                    {"cond", bool_scalar(false)}});
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{0}));
  // Both: the trip count stops it first.
  Model both = loop_model(true, true);
  r = run_model(both, {{"x", float_tensor({1}, {1})},
                       {"acc0", float_tensor({1}, {0})},
                       {"limit", int64_scalar(10)},
                       {"M", int64_scalar(4)},
                       {"cond", bool_scalar(true)}});
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{4}));
}

// body(i, cond, v): v' = Concat(v, x): the carried value grows by len(x) each iteration.
Model growing_model() {
  onnx::GraphProto g;
  sub_value(g.mutable_input(), "i", DType::kInt64, 0);
  sub_value(g.mutable_input(), "cond_in", DType::kBool, 0);
  sub_value(g.mutable_input(), "v", DType::kFloat32);
  auto& c = sub_node(g, "Concat", {"v", "x"}, {"v_out"}, "grow");
  ModelBuilder::attr_int(c, "axis", 0);
  sub_node(g, "Identity", {"cond_in"}, {"cond_out"}, "keep");
  sub_value(g.mutable_output(), "cond_out", DType::kBool);
  sub_value(g.mutable_output(), "v_out", DType::kFloat32);
  ModelBuilder b(13);
  b.input("x", DType::kFloat32, {std::string("n")});
  b.input("v0", DType::kFloat32, {std::string("k")});
  b.input("M", DType::kInt64, {});
  auto& n = b.node("Loop", {"M", "", "v0"}, {"v"}, "", "loop_grow");
  attr_graph(n, "body", g);
  b.output("v");
  return b.load();
}

TEST(Loop, LoopCarriedValueChangesShapeEachIteration) {
  Model m = growing_model();
  auto r = run_model(m, {{"x", float_tensor({2}, {1, 2})}, {"v0", float_tensor({1}, {0})}, {"M", int64_scalar(3)}});
  EXPECT_EQ(r[0].shape(), (Shape{7}));
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{0, 1, 2, 1, 2, 1, 2}));
}

TEST(Loop, BodyWithAnIfReadsTheBodyAndTheMainGraph) {
  // body(i, cond, v): v' = If(i is even) then v + x else v - 1; x from the main graph, v from the body.
  onnx::GraphProto then_g, else_g;
  sub_node(then_g, "Add", {"v", "x"}, {"plus"}, "plus_x");
  sub_value(then_g.mutable_output(), "plus", DType::kFloat32);
  sub_initializer(else_g, "one", float_tensor({1}, {1}));
  sub_node(else_g, "Sub", {"v", "one"}, {"minus"}, "minus_one");
  sub_value(else_g.mutable_output(), "minus", DType::kFloat32);
  onnx::GraphProto body = body_around_if("even", then_g, else_g);
  sub_initializer(body, "two", int64_scalar(2));
  sub_initializer(body, "zero", int64_scalar(0));
  sub_node(body, "Mod", {"i", "two"}, {"parity"});
  sub_node(body, "Equal", {"parity", "zero"}, {"even"});
  SessionOptions o;
  o.profile = true;
  Session s(single_value_loop(body, "loop_if"), o);
  auto r = s.run({{"x", float_tensor({1}, {10})}, {"v0", float_tensor({1}, {0})}, {"M", int64_scalar(5)}});
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{28}));  // +10 -1 +10 -1 +10
  int then_rows = 0;
  for (const auto& p : s.last_profile()) then_rows += p.node_name == "loop_if/body/choose/then_branch/plus_x";
  EXPECT_EQ(then_rows, 3);
}

TEST(Loop, ConcurrentRunsGiveIdenticalResults) {
  Model m = loop_model(true, false);
  Session s(m);
  std::vector<int> wrong(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 30; ++i) {
        auto r = s.run({{"x", float_tensor({2}, {1, 2})},
                        {"acc0", float_tensor({2}, {0, 0})},
                        {"limit", int64_scalar(100)},
                        {"M", int64_scalar(i % 5)}});
        const float k = static_cast<float>(i % 5);
        if (values_of(r[0]) != std::vector<float>{k, 2 * k} || r[1].dim(0) != i % 5) ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, (std::vector<int>{0, 0}));
}

TEST(Loop, WrongBodyArityIsAOneLineError) {
  for (bool extra_input : {true, false}) {
    onnx::GraphProto g = accumulate_body();
    if (extra_input)
      sub_value(g.mutable_input(), "extra", DType::kFloat32);
    else
      g.mutable_output()->DeleteSubrange(1, 2);
    ModelBuilder b(17);
    b.input("x", DType::kFloat32, {int64_t{1}});
    b.input("acc0", DType::kFloat32, {int64_t{1}});
    b.input("limit", DType::kInt64, {});
    auto& n = b.node("Loop", {"", "", "acc0"}, {"acc", "scan"}, "", "loop_bad");
    attr_graph(n, "body", g);
    b.output("acc");
    std::string e = error_of([&] { Session s(b.load()); });
    EXPECT_NE(e.find("node 'loop_bad' (Loop): the body "), std::string::npos) << e;
    EXPECT_NE(e.find(extra_input ? "takes 4 inputs" : "has 1 outputs"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

TEST(Loop, CarriedValueOfAnotherTypeThanTheBodyDeclaresIsAnError) {
  ModelBuilder b(17);
  b.input("x", DType::kInt64, {int64_t{2}});
  b.input("acc0", DType::kInt64, {int64_t{2}});
  b.input("limit", DType::kInt64, {});
  b.input("M", DType::kInt64, {});
  auto& n = b.node("Loop", {"M", "", "acc0"}, {"acc", "scan"}, "", "loop_typed");
  attr_graph(n, "body", accumulate_body());  // declares acc float32
  b.output("acc");
  Session s(b.load());
  Tensor ints = Tensor::zeros(DType::kInt64, {2});
  std::string e = error_of([&] {
    s.run({{"x", ints}, {"acc0", ints}, {"limit", int64_scalar(3)}, {"M", int64_scalar(1)}});
  });
  EXPECT_NE(e.find("node 'loop_typed' (Loop): subgraph 'body': graph 'body' input 'acc' is declared float32 but gets "
                   "int64"),
            std::string::npos)
      << e;
}

TEST(Loop, ScanOutputChangingShapeIsAnError) {
  // The scan output is the growing carried value itself.
  onnx::GraphProto g;
  sub_value(g.mutable_input(), "i", DType::kInt64, 0);
  sub_value(g.mutable_input(), "cond_in", DType::kBool, 0);
  sub_value(g.mutable_input(), "v", DType::kFloat32);
  auto& c = sub_node(g, "Concat", {"v", "v"}, {"v_out"}, "double");
  ModelBuilder::attr_int(c, "axis", 0);
  sub_node(g, "Identity", {"cond_in"}, {"cond_out"});
  sub_node(g, "Identity", {"v_out"}, {"s"});
  sub_value(g.mutable_output(), "cond_out");
  sub_value(g.mutable_output(), "v_out");
  sub_value(g.mutable_output(), "s");
  ModelBuilder b(17);
  b.input("v0", DType::kFloat32, {int64_t{1}});
  b.input("M", DType::kInt64, {});
  auto& n = b.node("Loop", {"M", "", "v0"}, {"v", "s_all"}, "", "loop_s");
  attr_graph(n, "body", g);
  b.output("v");
  b.output("s_all");
  Session s(b.load());
  std::string e = error_of([&] { s.run({{"v0", float_tensor({1}, {1})}, {"M", int64_scalar(2)}}); });
  EXPECT_NE(e.find("node 'loop_s' (Loop): scan output 0 is float32 [4] in iteration 1 but float32 [2] in iteration 0"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace pointrt::test
