// Runtime plugins (include/pointrt/plugin.h): the example plugin runs, and each way a plugin can be
// wrong or fail is one clear error naming the library (and the node where there is one).
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "support/expect_error.h"
#include "support/model_builder.h"

namespace pointrt {
namespace {

using test::expect_error;
using test::ModelBuilder;

std::string plugin(const std::string& name) { return std::string(POINTRT_TEST_PLUGIN_DIR) + "/lib" + name + ".so"; }

// y = domain::op(x), x float32 [rows, cols].
ModelBuilder one_node(const std::string& domain, const std::string& op, int64_t rows, int64_t cols,
                      onnx::NodeProto** node = nullptr) {
  ModelBuilder b;
  b.add_opset(domain, 1);
  b.input("x", DType::kFloat32, {rows, cols});
  onnx::NodeProto& n = b.node(op, {"x"}, {"y"}, domain, "custom");
  if (node) *node = &n;
  b.output("y", DType::kFloat32);
  return b;
}

SessionOptions with_plugins(std::vector<std::string> libs) {
  SessionOptions o;
  o.plugins = std::move(libs);
  return o;
}

Tensor ramp(int64_t rows, int64_t cols) {
  Tensor t = Tensor::allocate(DType::kFloat32, {rows, cols});
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = 0.25f * static_cast<float>(i % 13) - 1.0f;
  return t;
}

double expected_norm(const Tensor& x, int64_t row, double p) {
  double acc = 0;
  int64_t cols = x.dim(1);
  for (int64_t c = 0; c < cols; ++c) {
    double v = x.data_as<float>()[row * cols + c];
    acc += p == 2.0 ? v * v : std::pow(std::fabs(v), p);
  }
  return p == 2.0 ? std::sqrt(acc) : std::pow(acc, 1.0 / p);
}

TEST(Plugin, ExamplePointNormMatchesItsDefinition) {
  for (int64_t rows : {0, 1, 7, 33}) {
    for (int64_t keepdims : {0, 1}) {
      onnx::NodeProto* n = nullptr;
      ModelBuilder b = one_node("example", "PointNorm", rows, 3, &n);
      ModelBuilder::attr_float(*n, "p", 3.0f);
      ModelBuilder::attr_int(*n, "keepdims", keepdims);
      Session s(b.load(), with_plugins({plugin("point_norm_plugin")}));
      Tensor x = ramp(rows, 3);
      Tensor y = s.run({{"x", x}})[0];
      EXPECT_EQ(y.shape(), keepdims ? Shape({rows, 1}) : Shape({rows}));
      for (int64_t r = 0; r < rows; ++r)
        EXPECT_EQ(y.data_as<float>()[r], static_cast<float>(expected_norm(x, r, 3.0))) << "row " << r;
    }
  }
}

TEST(Plugin, ConcurrentRunsAgree) {
  Session s(one_node("example", "PointNorm", 64, 5).load(), with_plugins({plugin("point_norm_plugin")}));
  Tensor x = ramp(64, 5);
  Tensor first = s.run({{"x", x}})[0];
  std::vector<Tensor> results(4);
  std::vector<std::thread> threads;
  for (auto& r : results) threads.emplace_back([&] { r = s.run({{"x", x}})[0]; });
  for (auto& t : threads) t.join();
  for (const Tensor& r : results)
    for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(r.data_as<float>()[i], first.data_as<float>()[i]);
}

TEST(Plugin, LibraryProblemsNameTheLibrary) {
  Model m = one_node("test", "Copy", 2, 2).load();
  expect_error([&] { Session(m, with_plugins({"/nonexistent/libnothing.so"})); },
               {"test.onnx", "plugin '/nonexistent/libnothing.so'", "cannot load the library"});
  expect_error([&] { Session(m, with_plugins({plugin("test_plugin_no_entry")})); },
               {"test_plugin_no_entry.so", "no symbol 'pointrt_plugin_entry'"});
  expect_error([&] { Session(m, with_plugins({plugin("test_plugin_abi_mismatch")})); },
               {"test_plugin_abi_mismatch.so", "plugin ABI version 2", "this pointrt has version 1", "rebuild"});
  expect_error([&] { Session(m, with_plugins({plugin("test_plugin_refuses")})); },
               {"test_plugin_refuses.so", "refused"});
  expect_error([&] { Session(m, with_plugins({plugin("test_plugin_taken_domain")})); },
               {"test_plugin_taken_domain.so", "domain 'pointrt'", "which pointrt serves itself"});
}

// check-supported lists every node that cannot run, one per line after a header line.
std::string unsupported_message(const Model& m, const SessionOptions& o) {
  try {
    Session s(m, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Plugin, OperatorNotInTheLibrary) {
  Model m = one_node("test", "Missing", 2, 2).load();
  std::string with = unsupported_message(m, with_plugins({plugin("test_plugin_ok")}));
  for (const char* fragment : {"node 'custom'", "test::Missing is not supported",
                               "none of the loaded plugins provides it", "test_plugin_ok.so"})
    EXPECT_NE(with.find(fragment), std::string::npos) << with;
  std::string without = unsupported_message(m, {});
  EXPECT_NE(without.find("load the plugin that provides it"), std::string::npos) << without;
}

TEST(Plugin, KernelFailuresNameNodeAndLibrary) {
  SessionOptions o = with_plugins({plugin("test_plugin_ok")});
  Tensor x = ramp(2, 2);
  Session throws(one_node("test", "Throws", 2, 2).load(), o);
  expect_error(
      [&] {
        throws.run({{"x", x}});
      },
      {"node 'custom'", "test_plugin_ok.so", "threw a C++ exception from compute", "kernel exploded"});
  Session fails(one_node("test", "Fails", 2, 2).load(), o);
  expect_error(
      [&] {
        fails.run({{"x", x}});
      },
      {"node 'custom'", "compute failed (status 7)", "the input is not sorted"});
  Session negative(one_node("test", "NegativeShape", 2, 2).load(), o);
  expect_error([&] { negative.run({{"x", x}}); }, {"node 'custom'", "infer gave output 0 the negative dimension -5"});
  onnx::NodeProto* n = nullptr;
  ModelBuilder bad = one_node("test", "Copy", 2, 2, &n);
  ModelBuilder::attr_int(*n, "bad", 3);
  expect_error([&] { Session(bad.load(), o); }, {"node 'custom'", "create failed", "attribute 'bad' is 3"});
  Session copy(one_node("test", "Copy", 2, 2).load(), o);
  EXPECT_EQ(copy.run({{"x", x}})[0].data_as<float>()[3], x.data_as<float>()[3]);
}

TEST(Plugin, WrongArityIsAPrepareError) {
  ModelBuilder b;
  b.add_opset("example", 1);
  b.input("x", DType::kFloat32, {2, 3});
  b.node("PointNorm", {"x", "x"}, {"y"}, "example", "two_inputs");
  b.output("y", DType::kFloat32);
  expect_error([&] { Session(b.load(), with_plugins({plugin("point_norm_plugin")})); },
               {"node 'two_inputs'", "1..1 inputs; the node has 2"});
}

}  // namespace
}  // namespace pointrt

namespace pointrt {
namespace {

// A plugin operator inside an If's branches (the bodies' plans take the session's table).
TEST(Plugin, RunsInsideSubgraphs) {
  ModelBuilder b;
  b.add_opset("example", 1);
  b.input("cond", DType::kBool, {});
  b.input("x", DType::kFloat32, {4, 3});
  onnx::NodeProto& n = b.node("If", {"cond"}, {"y"}, "", "choose");
  for (const auto& [branch, p] : {std::pair<const char*, float>{"then_branch", 2.0f}, {"else_branch", 1.0f}}) {
    auto* a = n.add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* g = a->mutable_g();
    g->set_name(branch);
    onnx::NodeProto* inner = g->add_node();
    inner->set_op_type("PointNorm");
    inner->set_domain("example");
    inner->set_name(std::string(branch) + "_norm");
    inner->add_input("x");  // the main graph's x (outer scope)
    inner->add_output(std::string(branch) + "_y");
    ModelBuilder::attr_float(*inner, "p", p);
    auto* out = g->add_output();
    out->set_name(std::string(branch) + "_y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  b.output("y", DType::kFloat32);
  Session s(b.load(), with_plugins({plugin("point_norm_plugin")}));
  Tensor x = ramp(4, 3);
  for (bool c : {true, false}) {
    Tensor cond = Tensor::allocate(DType::kBool, {});
    cond.data_as<uint8_t>()[0] = c;
    Tensor y = s.run({{"cond", cond}, {"x", x}})[0];
    ASSERT_EQ(y.shape(), Shape({4}));
    for (int64_t r = 0; r < 4; ++r)
      EXPECT_EQ(y.data_as<float>()[r], static_cast<float>(expected_norm(x, r, c ? 2.0 : 1.0)));
  }
}

}  // namespace
}  // namespace pointrt
