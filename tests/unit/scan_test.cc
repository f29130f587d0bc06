// Scan: axes and directions of scan inputs and outputs, state carried across iterations, Scan-8's
// batch axis, zero-length scans, outer-scope reads and the errors.
#include "control_flow_util.h"

namespace pointrt::test {
namespace {

// body(sum, row): sum' = sum + row * w (w from the main graph); scan output: sum'.
onnx::GraphProto running_sum_body() {
  onnx::GraphProto g;
  sub_value(g.mutable_input(), "sum", DType::kFloat32);
  sub_value(g.mutable_input(), "row", DType::kFloat32);
  sub_node(g, "Mul", {"row", "w"}, {"scaled"}, "scale");
  sub_node(g, "Add", {"sum", "scaled"}, {"sum_out"}, "accumulate");
  sub_node(g, "Identity", {"sum_out"}, {"scan_out"}, "copy");
  sub_value(g.mutable_output(), "sum_out", DType::kFloat32);
  sub_value(g.mutable_output(), "scan_out", DType::kFloat32);
  return g;
}

struct ScanCase {
  int64_t in_axis = 0, in_direction = 0, out_axis = 0, out_direction = 0;
};

Model scan_model(const ScanCase& c, int64_t opset = 16) {
  ModelBuilder b(opset);
  b.input("w", DType::kFloat32, {});
  b.input("sum0", DType::kFloat32, {int64_t{2}});
  b.input("xs", DType::kFloat32, {std::string("a"), std::string("b")});
  auto& n = b.node("Scan", {"sum0", "xs"}, {"sum", "partial"}, "", "scan0");
  attr_graph(n, "body", running_sum_body());
  ModelBuilder::attr_int(n, "num_scan_inputs", 1);
  ModelBuilder::attr_ints(n, "scan_input_axes", {c.in_axis});
  ModelBuilder::attr_ints(n, "scan_input_directions", {c.in_direction});
  ModelBuilder::attr_ints(n, "scan_output_axes", {c.out_axis});
  ModelBuilder::attr_ints(n, "scan_output_directions", {c.out_direction});
  b.output("sum");
  b.output("partial");
  return b.load();
}

std::map<std::string, Tensor> feeds(const Tensor& xs) {
  return {{"w", scalar_of<float>(DType::kFloat32, 1.f)}, {"sum0", float_tensor({2}, {0, 0})}, {"xs", xs}};
}

TEST(Scan, ForwardAlongAxisZero) {
  auto r = run_model(scan_model({}), feeds(float_tensor({3, 2}, {1, 2, 3, 4, 5, 6})));
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{9, 12}));
  EXPECT_EQ(r[1].shape(), (Shape{3, 2}));
  EXPECT_EQ(values_of(r[1]), (std::vector<float>{1, 2, 4, 6, 9, 12}));
}

TEST(Scan, ReverseInputAndOutputDirections) {
  auto r = run_model(scan_model({0, 1, 0, 0}), feeds(float_tensor({3, 2}, {1, 2, 3, 4, 5, 6})));
  EXPECT_EQ(values_of(r[1]), (std::vector<float>{5, 6, 8, 10, 9, 12}));
  r = run_model(scan_model({0, 1, 0, 1}), feeds(float_tensor({3, 2}, {1, 2, 3, 4, 5, 6})));
  EXPECT_EQ(values_of(r[1]), (std::vector<float>{9, 12, 8, 10, 5, 6}));
}

TEST(Scan, InputAndOutputAxesIncludingNegative) {
  // Scanning axis 1 of a [2, 3] input: the rows are its columns.
  auto r = run_model(scan_model({1, 0, 1, 0}), feeds(float_tensor({2, 3}, {1, 3, 5, 2, 4, 6})));
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{9, 12}));
  EXPECT_EQ(r[1].shape(), (Shape{2, 3}));  // stacked along axis 1
  EXPECT_EQ(values_of(r[1]), (std::vector<float>{1, 4, 9, 2, 6, 12}));
  auto n = run_model(scan_model({-1, 0, -1, 0}), feeds(float_tensor({2, 3}, {1, 3, 5, 2, 4, 6})));
  EXPECT_EQ(values_of(n[1]), values_of(r[1]));
}

TEST(Scan, ZeroAndOneLength) {
  auto z = run_model(scan_model({}), feeds(float_tensor({0, 2}, {})));
  EXPECT_EQ(values_of(z[0]), (std::vector<float>{0, 0}));
  EXPECT_EQ(z[1].dim(0), 0);
  auto o = run_model(scan_model({}), feeds(float_tensor({1, 2}, {7, 8})));
  EXPECT_EQ(values_of(o[1]), (std::vector<float>{7, 8}));
}

TEST(Scan, Scan8HasABatchAxis) {
  ModelBuilder b(8);
  b.input("w", DType::kFloat32, {});
  b.input("sum0", DType::kFloat32, {int64_t{2}, int64_t{2}});
  b.input("xs", DType::kFloat32, {int64_t{2}, int64_t{3}, int64_t{2}});
  auto& n = b.node("Scan", {"", "sum0", "xs"}, {"sum", "partial"}, "", "scan8");
  attr_graph(n, "body", running_sum_body());
  ModelBuilder::attr_int(n, "num_scan_inputs", 1);
  b.output("sum");
  b.output("partial");
  Tensor xs = float_tensor({2, 3, 2}, {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60});
  auto r = run_model(
      b.load(),
      {{"w", scalar_of<float>(DType::kFloat32, 1.f)}, {"sum0", float_tensor({2, 2}, {0, 0, 1, 1})}, {"xs", xs}});
  EXPECT_EQ(values_of(r[0]), (std::vector<float>{9, 12, 91, 121}));
  EXPECT_EQ(r[1].shape(), (Shape{2, 3, 2}));
}

TEST(Scan, ErrorsNameTheNode) {
  Session s(scan_model({2, 0, 0, 0}));
  std::string e = error_of([&] { s.run(feeds(float_tensor({3, 2}, {1, 2, 3, 4, 5, 6}))); });
  EXPECT_NE(e.find("node 'scan0' (Scan): scan input axis 2 is out of range for rank 2"), std::string::npos) << e;
  // A body with the wrong number of inputs.
  onnx::GraphProto g = running_sum_body();
  sub_value(g.mutable_input(), "extra", DType::kFloat32);
  ModelBuilder b(16);
  b.input("w", DType::kFloat32, {});
  b.input("sum0", DType::kFloat32, {int64_t{2}});
  b.input("xs", DType::kFloat32, {int64_t{3}, int64_t{2}});
  auto& n = b.node("Scan", {"sum0", "xs"}, {"sum", "partial"}, "", "scan_bad");
  attr_graph(n, "body", g);
  ModelBuilder::attr_int(n, "num_scan_inputs", 1);
  b.output("sum");
  e = error_of([&] { Session bad(b.load()); });
  EXPECT_NE(e.find("node 'scan_bad' (Scan): the body takes 3 inputs, the node gives it 1 states and 1 scan elements"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace pointrt::test
