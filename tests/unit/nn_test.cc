// nn family: oneDNN kernels against the naive references on awkward sizes, error paths, and the
// Conv+BatchNorm+Add+Relu fusion pass (fused result == unfused/reference result).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <thread>

#include "graph/onnx_import.h"
#include "onnx/onnx_pb.h"
#include "ops/kernel.h"
#include "ops/onnx/nn/batchnorm.h"
#include "ops/onnx/nn/conv.h"
#include "ops/onnx/nn/nn_kernels.h"
#include "ops/onnx/nn/pool.h"
#include "pointrt/pointrt.h"
#include "test_util/op_tester.h"
#include "test_util/random.h"

using namespace pointrt;
using namespace pointrt::nn;
using pointrt::test::expect_close;
using pointrt::test::random_floats;
using pointrt::test::Tol;

namespace {

// ---------------------------------------------------------------- model building helpers
struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto* graph;
  explicit ModelBuilder(int opset = 13) {
    model.set_ir_version(8);
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("test");
  }
  static void set_shape(onnx::ValueInfoProto* vi, const std::string& name, const Shape& shape, int elem = 1) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* sh = tt->mutable_shape();
    for (int64_t d : shape) {
      if (d < 0)
        sh->add_dim()->set_dim_param(sh->dim_size() == 0 ? "N" : "S" + std::to_string(sh->dim_size()));
      else
        sh->add_dim()->set_dim_value(d);
    }
  }
  void input(const std::string& name, const Shape& shape) { set_shape(graph->add_input(), name, shape); }
  void output(const std::string& name) {
    auto* vi = graph->add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  }
  void initializer(const std::string& name, const Tensor& t) {
    auto* tp = graph->add_initializer();
    tp->set_name(name);
    tp->set_data_type(1);
    for (int64_t d : t.shape()) tp->add_dims(d);
    tp->set_raw_data(std::string(static_cast<const char*>(t.data()), t.nbytes()));
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = graph->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + std::to_string(graph->node_size()) : name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void int1(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void float1(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void str(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  Model build() const {
    std::string bytes = model.SerializeAsString();
    return Model::load_from_bytes(bytes.data(), bytes.size(), "", "nn_test");
  }
};

// ---------------------------------------------------------------- Conv vs reference
struct ConvCase {
  std::string label;
  Shape x, w;
  int64_t group = 1;
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad;
  bool bias = true;
  bool w_constant = true;
  bool transpose = false;
  std::vector<int64_t> output_padding, output_shape;
};

void run_conv_case(const ConvCase& c) {
  SCOPED_TRACE(c.label);
  ModelBuilder mb(17);
  mb.input("X", c.x);
  Tensor x = random_floats(c.x, 1), w = random_floats(c.w, 2);
  int64_t m = c.transpose ? c.w[1] * c.group : c.w[0];
  Tensor b = random_floats({m}, 3);
  std::vector<std::string> ins = {"X", "W"};
  std::map<std::string, Tensor> feeds{{"X", x}};
  if (c.w_constant)
    mb.initializer("W", w);
  else {
    mb.input("W", c.w);
    feeds["W"] = w;
  }
  if (c.bias) {
    mb.initializer("B", b);
    ins.push_back("B");
  }
  auto* n = mb.node(c.transpose ? "ConvTranspose" : "Conv", ins, {"Y"}, "conv");
  if (c.group != 1) ModelBuilder::int1(n, "group", c.group);
  if (!c.strides.empty()) ModelBuilder::ints(n, "strides", c.strides);
  if (!c.dilations.empty()) ModelBuilder::ints(n, "dilations", c.dilations);
  if (!c.pads.empty()) ModelBuilder::ints(n, "pads", c.pads);
  if (!c.auto_pad.empty()) ModelBuilder::str(n, "auto_pad", c.auto_pad);
  if (!c.output_padding.empty()) ModelBuilder::ints(n, "output_padding", c.output_padding);
  if (!c.output_shape.empty()) ModelBuilder::ints(n, "output_shape", c.output_shape);
  mb.output("Y");
  Session s(mb.build());
  Tensor y = s.run(feeds)[0];

  Attributes attrs;
  attrs.items = {};
  ConvAttrs a;
  a.transpose = c.transpose;
  a.group = c.group;
  a.strides = c.strides;
  a.dilations = c.dilations;
  a.pads = c.pads;
  a.output_padding = c.output_padding;
  a.output_shape = c.output_shape;
  a.auto_pad = c.auto_pad == "SAME_UPPER"   ? AutoPad::kSameUpper
               : c.auto_pad == "SAME_LOWER" ? AutoPad::kSameLower
               : c.auto_pad == "VALID"      ? AutoPad::kValid
                                            : AutoPad::kNotSet;
  Shape bs{m};
  ConvGeometry g = conv_geometry(a, c.x, c.w, c.bias ? &bs : nullptr, "ref");
  Tensor ref = Tensor::allocate(DType::kFloat32, g.output_shape());
  if (c.transpose)
    conv_transpose_ref(g, x.data_as<float>(), w.data_as<float>(), c.bias ? b.data_as<float>() : nullptr,
                       ref.data_as<float>());
  else
    conv_ref(g, x.data_as<float>(), w.data_as<float>(), c.bias ? b.data_as<float>() : nullptr, ref.data_as<float>());
  expect_close(y, ref, Tol{2e-4f, 2e-4f}.finite_only());
  // A second run hits the cached primitive and must give the same answer.
  Tensor y2 = s.run(feeds)[0];
  expect_close(y2, y, Tol{0.f, 0.f}.finite_only());
}

TEST(NnConv, MatchesReferenceOnAwkwardShapes) {
  std::vector<ConvCase> cases = {
      {"1x1 plain", {1, 5, 7, 9}, {6, 5, 1, 1}},
      {"1x1 spatial input", {2, 3, 1, 1}, {4, 3, 1, 1}},
      {"3x3 pad1 odd", {1, 3, 13, 11}, {16, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {"stride2 pad asym", {2, 8, 9, 10}, {12, 8, 3, 3}, 1, {2, 2}, {}, {1, 0, 2, 1}},
      {"dilation2", {1, 4, 11, 12}, {5, 4, 3, 3}, 1, {}, {2, 2}, {2, 2, 2, 2}},
      {"dilation+stride", {1, 4, 15, 12}, {5, 4, 3, 2}, 1, {2, 3}, {2, 1}, {1, 0, 0, 1}},
      {"groups 2", {1, 6, 8, 8}, {4, 3, 3, 3}, 2, {}, {}, {1, 1, 1, 1}},
      {"depthwise 16", {1, 16, 9, 9}, {16, 1, 3, 3}, 16, {}, {}, {1, 1, 1, 1}},
      {"depthwise stride2", {2, 32, 10, 7}, {32, 1, 3, 3}, 32, {2, 2}, {}, {1, 1, 1, 1}},
      {"channel multiplier", {1, 8, 7, 7}, {16, 1, 3, 3}, 8, {}, {}, {1, 1, 1, 1}},
      {"no bias", {1, 3, 6, 6}, {2, 3, 3, 3}, 1, {}, {}, {}, "", false},
      {"W as input", {1, 17, 6, 5}, {19, 17, 3, 3}, 1, {}, {}, {1, 1, 1, 1}, "", true, false},
      {"SAME_UPPER s2", {1, 3, 7, 8}, {4, 3, 4, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"},
      {"SAME_LOWER s2", {1, 3, 7, 8}, {4, 3, 4, 3}, 1, {2, 2}, {}, {}, "SAME_LOWER"},
      {"VALID", {1, 3, 7, 8}, {4, 3, 3, 2}, 1, {}, {}, {}, "VALID"},
      {"winograd-sized 64ch", {1, 64, 14, 14}, {64, 64, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {"winograd-sized odd 64ch", {1, 64, 9, 11}, {96, 64, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {"1x1 256->128 stride2", {1, 256, 13, 13}, {128, 256, 1, 1}, 1, {2, 2}},
      {"1D", {2, 3, 17}, {5, 3, 3}, 1, {2}, {}, {1, 1}},
      {"1D pointwise", {1, 3, 33}, {64, 3, 1}},
      {"3D", {1, 2, 5, 6, 7}, {3, 2, 3, 3, 3}, 1, {}, {}, {1, 1, 1, 1, 1, 1}},
      {"3D stride dil groups", {1, 4, 7, 6, 9}, {6, 2, 2, 3, 2}, 2, {2, 1, 2}, {1, 2, 1}, {0, 1, 1, 1, 0, 0}},
      {"batch 3", {3, 16, 5, 5}, {32, 16, 3, 3}, 1, {}, {}, {1, 1, 1, 1}},
      {"dilated same (space-to-batch)", {2, 64, 12, 16}, {64, 64, 3, 3}, 1, {}, {2, 2}, {2, 2, 2, 2}},
      {"dilated 4 same", {1, 64, 8, 12}, {80, 64, 3, 3}, 1, {}, {4, 4}, {4, 4, 4, 4}},
      {"dilated same, size not divisible", {1, 64, 9, 10}, {64, 64, 3, 3}, 1, {}, {2, 2}, {2, 2, 2, 2}},
  };
  for (const auto& c : cases) run_conv_case(c);
}

TEST(NnConv, TransposeMatchesReference) {
  std::vector<ConvCase> cases;
  auto t = [&](ConvCase c) {
    c.transpose = true;
    cases.push_back(c);
  };
  t({"basic", {1, 3, 4, 5}, {3, 2, 3, 3}});
  t({"stride2 pad", {1, 4, 5, 5}, {4, 3, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}});
  t({"output_padding", {2, 4, 5, 6}, {4, 3, 3, 3}, 1, {2, 2}, {}, {1, 1, 1, 1}, "", true, true, true, {1, 1}});
  t({"groups", {1, 4, 5, 5}, {4, 3, 3, 3}, 2, {2, 2}});
  t({"dilation", {1, 2, 5, 5}, {2, 2, 3, 3}, 1, {}, {2, 2}});
  t({"1D", {1, 3, 7}, {3, 4, 3}, 1, {3}});
  t({"3D", {1, 2, 3, 4, 3}, {2, 3, 3, 3, 2}, 1, {2, 1, 2}});
  t({"output_shape larger", {1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {}, {}, "", true, true, true, {}, {10, 8}});
  t({"output_shape smaller", {1, 2, 4, 4}, {2, 2, 3, 3}, 1, {2, 2}, {}, {}, "", true, true, true, {}, {7, 8}});
  t({"SAME_UPPER", {1, 2, 4, 5}, {2, 3, 3, 3}, 1, {2, 2}, {}, {}, "SAME_UPPER"});
  t({"SAME_LOWER", {1, 2, 4, 5}, {2, 3, 4, 3}, 1, {2, 2}, {}, {}, "SAME_LOWER"});
  t({"64ch stride2", {1, 64, 7, 7}, {64, 32, 4, 4}, 1, {2, 2}, {}, {1, 1, 1, 1}});
  for (const auto& c : cases) run_conv_case(c);
}

TEST(NnConv, ZeroBatchGivesEmptyOutput) {
  ModelBuilder mb(13);
  mb.input("X", {-1, 3, 5, 5});
  mb.initializer("W", random_floats({4, 3, 3, 3}, 1));
  mb.node("Conv", {"X", "W"}, {"Y"}, "conv0");
  mb.output("Y");
  Session s(mb.build());
  Tensor x = Tensor::allocate(DType::kFloat32, {0, 3, 5, 5});
  Tensor y = s.run({{"X", x}})[0];
  EXPECT_EQ(y.shape(), (Shape{0, 4, 3, 3}));
  // symbolic batch: a new shape builds a new primitive, then both stay cached
  Tensor y1 = s.run({{"X", random_floats({1, 3, 5, 5}, 4)}})[0];
  Tensor y2 = s.run({{"X", random_floats({2, 3, 5, 5}, 4)}})[0];
  EXPECT_EQ(y1.shape(), (Shape{1, 4, 3, 3}));
  EXPECT_EQ(y2.shape(), (Shape{2, 4, 3, 3}));
}

TEST(NnConv, ErrorsNameTheNode) {
  ModelBuilder mb(13);
  mb.input("X", {-1, -1, 5, 5});
  mb.initializer("W", random_floats({4, 3, 3, 3}, 1));
  mb.node("Conv", {"X", "W"}, {"Y"}, "my_conv");
  mb.output("Y");
  Session s(mb.build());
  try {
    s.run({{"X", random_floats({1, 5, 5, 5}, 1)}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("my_conv"), std::string::npos) << m;
    EXPECT_NE(m.find("input channels"), std::string::npos) << m;
  }
  // spatial input smaller than the kernel
  EXPECT_THROW(s.run({{"X", random_floats({1, 3, 2, 2}, 1)}}), Error);
}

// A per-axis attribute with the wrong number of values (window_attr_values) is one error that
// names the node, the attribute, the expected count and the input's shape, for Conv and pools.
TEST(NnConv, PerAxisAttributeOfTheWrongLength) {
  auto error_of = [](const std::string& op, const std::string& attr, const std::vector<int64_t>& values) {
    ModelBuilder mb(13);
    mb.input("X", {1, 3, 5, 5});
    std::vector<std::string> inputs = {"X"};
    if (op == "Conv") {
      mb.initializer("W", random_floats({4, 3, 3, 3}, 1));
      inputs.push_back("W");
    }
    auto* n = mb.node(op, inputs, {"Y"}, "bad_" + attr);
    if (op != "Conv") ModelBuilder::ints(n, "kernel_shape", {3, 3});
    ModelBuilder::ints(n, attr, values);
    mb.output("Y");
    try {
      Session s(mb.build());
      s.run({{"X", random_floats({1, 3, 5, 5}, 2)}});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string m = error_of("Conv", "strides", {1});
  EXPECT_NE(m.find("bad_strides"), std::string::npos) << m;
  EXPECT_NE(m.find("attribute strides has 1 values, expected 2"), std::string::npos) << m;
  EXPECT_NE(m.find("[1, 3, 5, 5]"), std::string::npos) << m;
  m = error_of("MaxPool", "pads", {0, 0});
  EXPECT_NE(m.find("bad_pads"), std::string::npos) << m;
  EXPECT_NE(m.find("attribute pads has 2 values, expected 4"), std::string::npos) << m;
}

TEST(NnConv, PicksAFastImplementation) {
  struct Case {
    Shape x, w;
    int64_t group;
    bool transpose;
  };
  std::vector<Case> cases = {
      {{1, 64, 28, 28}, {64, 64, 3, 3}, 1, false},      // 3x3 (Winograd or direct)
      {{1, 256, 14, 14}, {128, 256, 1, 1}, 1, false},   // 1x1
      {{1, 3, 224, 224}, {64, 3, 7, 7}, 1, false},      // first layer, plain input
      {{1, 32, 20, 20}, {32, 1, 3, 3}, 32, false},      // depthwise
      {{1, 3, 1024}, {64, 3, 1}, 1, false},             // PointNet shared MLP
      {{1, 16, 8, 8, 8}, {16, 16, 3, 3, 3}, 1, false},  // 3D
      {{1, 64, 14, 14}, {64, 32, 4, 4}, 1, true},       // transposed
  };
  for (const auto& c : cases) {
    ModelBuilder mb(13);
    mb.input("X", c.x);
    mb.initializer("W", random_floats(c.w, 1));
    auto* n = mb.node(c.transpose ? "ConvTranspose" : "Conv", {"X", "W"}, {"Y"}, "c");
    if (c.group > 1) ModelBuilder::int1(n, "group", c.group);
    if (c.transpose) ModelBuilder::ints(n, "strides", {2, 2});
    mb.output("Y");
    Model model = mb.build();
    const Graph& g = model.impl()->graph;
    auto kernel = c.transpose ? make_conv_transpose_kernel(KernelInit{g.nodes[0], g})
                              : make_conv_kernel(KernelInit{g.nodes[0], g});
    std::string impl = conv_impl_name(*kernel, c.x);
    EXPECT_NE(impl, "reference") << shape_to_string(c.x);
    EXPECT_EQ(impl.rfind("ref", 0), std::string::npos) << shape_to_string(c.x) << ": " << impl;
    std::cout << "[ impl ] X " << shape_to_string(c.x) << " W " << shape_to_string(c.w) << " -> " << impl << "\n";
  }
}

TEST(NnConv, DilatedSameConvRunsAsSpaceToBatchWinograd) {
  ModelBuilder mb(13);
  mb.input("X", {1, 64, 60, 80});
  mb.initializer("W", random_floats({64, 64, 3, 3}, 1));
  auto* n = mb.node("Conv", {"X", "W"}, {"Y"}, "c");
  ModelBuilder::ints(n, "dilations", {4, 4});
  ModelBuilder::ints(n, "pads", {4, 4, 4, 4});
  mb.output("Y");
  Model model = mb.build();
  const Graph& g = model.impl()->graph;
  auto kernel = make_conv_kernel(KernelInit{g.nodes[0], g});
  std::string impl = conv_impl_name(*kernel, {1, 64, 60, 80});
  std::cout << "[ impl ] dilated 4: " << impl << "\n";
  if (winograd_enabled()) {
    EXPECT_NE(impl.find("space_to_batch"), std::string::npos) << impl;
  }
}

// ---------------------------------------------------------------- pools vs reference
struct PoolCase {
  std::string label, op;
  Shape x;
  std::vector<int64_t> kernel, strides, dilations, pads;
  int64_t ceil_mode = 0, count_include_pad = 0;
  std::string auto_pad;
};

void run_pool_case(const PoolCase& c) {
  SCOPED_TRACE(c.label);
  ModelBuilder mb(19);
  mb.input("X", c.x);
  auto* n = mb.node(c.op, {"X"}, {"Y"}, "pool");
  bool global = c.op.rfind("Global", 0) == 0;
  if (!global) {
    ModelBuilder::ints(n, "kernel_shape", c.kernel);
    if (!c.strides.empty()) ModelBuilder::ints(n, "strides", c.strides);
    if (!c.dilations.empty()) ModelBuilder::ints(n, "dilations", c.dilations);
    if (!c.pads.empty()) ModelBuilder::ints(n, "pads", c.pads);
    if (!c.auto_pad.empty()) ModelBuilder::str(n, "auto_pad", c.auto_pad);
    ModelBuilder::int1(n, "ceil_mode", c.ceil_mode);
    if (c.op == "AveragePool") ModelBuilder::int1(n, "count_include_pad", c.count_include_pad);
  }
  mb.output("Y");
  Session s(mb.build());
  Tensor x = random_floats(c.x, 7);
  Tensor y = s.run({{"X", x}})[0];
  PoolAttrs a;
  a.kind = c.op.find("Max") != std::string::npos ? PoolKind::kMax : PoolKind::kAverage;
  a.global = global;
  a.kernel_shape = c.kernel;
  a.strides = c.strides;
  a.dilations = c.dilations;
  a.pads = c.pads;
  a.ceil_mode = c.ceil_mode;
  a.count_include_pad = c.count_include_pad;
  a.auto_pad = c.auto_pad == "SAME_UPPER"   ? AutoPad::kSameUpper
               : c.auto_pad == "SAME_LOWER" ? AutoPad::kSameLower
                                            : AutoPad::kNotSet;
  PoolGeometry g = pool_geometry(a, c.x, "ref");
  Tensor ref = Tensor::allocate(DType::kFloat32, g.output_shape());
  if (a.kind == PoolKind::kMax)
    max_pool_ref<float>(g, 0, x.data_as<float>(), ref.data_as<float>(), nullptr);
  else
    average_pool_ref(g, a.count_include_pad || global, x.data_as<float>(), ref.data_as<float>());
  expect_close(y, ref, Tol{1e-5f, 1e-5f}.finite_only());
}

TEST(NnPool, MatchesReference) {
  std::vector<PoolCase> cases = {
      {"max 3x3 s2 p1", "MaxPool", {1, 16, 13, 11}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}},
      {"max ceil", "MaxPool", {2, 3, 7, 8}, {3, 3}, {2, 2}, {}, {}, 1},
      {"max ceil drop last", "MaxPool", {1, 1, 5, 5}, {2, 2}, {2, 2}, {}, {1, 1, 1, 1}, 1},
      {"max dilation", "MaxPool", {1, 2, 9, 9}, {2, 2}, {1, 1}, {2, 2}},
      {"max 1D", "MaxPool", {1, 3, 17}, {3}, {2}},
      {"max 3D", "MaxPool", {1, 2, 5, 6, 7}, {2, 2, 3}, {2, 1, 2}},
      {"max same_upper", "MaxPool", {1, 2, 6, 7}, {3, 2}, {2, 2}, {}, {}, 0, 0, "SAME_UPPER"},
      {"avg exclude pad", "AveragePool", {1, 4, 9, 7}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}},
      {"avg include pad", "AveragePool", {1, 4, 9, 7}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 0, 1},
      {"avg ceil exclude", "AveragePool", {1, 2, 8, 8}, {3, 3}, {2, 2}, {}, {}, 1, 0},
      {"avg ceil include", "AveragePool", {1, 2, 8, 8}, {3, 3}, {2, 2}, {}, {1, 1, 1, 1}, 1, 1},
      {"avg dilation", "AveragePool", {1, 2, 10, 10}, {2, 2}, {1, 1}, {2, 3}, {1, 1, 1, 1}},
      {"avg 3D", "AveragePool", {1, 2, 5, 6, 7}, {2, 2, 2}, {1, 2, 2}},
      {"avg same_lower", "AveragePool", {1, 2, 6, 7}, {3, 2}, {2, 2}, {}, {}, 0, 0, "SAME_LOWER"},
      {"gap", "GlobalAveragePool", {2, 5, 7, 3}},
      {"gap 1D", "GlobalAveragePool", {2, 16, 33}},
      {"gmp", "GlobalMaxPool", {2, 5, 7, 3}},
      {"gmp 3D", "GlobalMaxPool", {1, 3, 4, 5, 6}},
  };
  for (const auto& c : cases) run_pool_case(c);
}

TEST(NnPool, MaxPoolIndicesRowAndColumnMajor) {
  for (int64_t order : {0, 1}) {
    ModelBuilder mb(12);
    mb.input("X", {2, 2, 4, 5});
    auto* n = mb.node("MaxPool", {"X"}, {"Y", "I"}, "mp");
    ModelBuilder::ints(n, "kernel_shape", {2, 2});
    ModelBuilder::ints(n, "strides", {2, 2});
    ModelBuilder::int1(n, "storage_order", order);
    mb.output("Y");
    auto* vi = mb.graph->add_output();
    vi->set_name("I");
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(7);
    Session s(mb.build());
    Tensor x = random_floats({2, 2, 4, 5}, 3);
    auto outs = s.run({{"X", x}});
    const float* xd = x.data_as<float>();
    const int64_t* ind = outs[1].data_as<int64_t>();
    for (int64_t i = 0; i < outs[0].numel(); ++i) {
      int64_t idx = ind[i];
      int64_t plane = idx / 20, rest = idx % 20;
      int64_t h = order == 0 ? rest / 5 : rest % 4, w = order == 0 ? rest % 5 : rest / 4;
      EXPECT_EQ(xd[plane * 20 + h * 5 + w], outs[0].data_as<float>()[i]);
    }
  }
}

// ---------------------------------------------------------------- BatchNorm
TEST(NnBatchNorm, InferenceFormulaAndTrainingModeError) {
  for (int opset : {7, 9, 14, 15}) {
    SCOPED_TRACE(opset);
    ModelBuilder mb(opset);
    mb.input("X", {2, 3, 4, 5});
    Tensor sc = random_floats({3}, 1), bi = random_floats({3}, 2), me = random_floats({3}, 3),
           va = random_floats({3}, 4, 0.5f, 2.f);
    mb.initializer("s", sc);
    mb.initializer("b", bi);
    mb.initializer("m", me);
    mb.input("v", {3});  // one non-constant parameter: coefficients at run time
    auto* n = mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y"}, "bn");
    ModelBuilder::float1(n, "epsilon", 1e-3f);
    mb.output("Y");
    Session s(mb.build());
    Tensor x = random_floats({2, 3, 4, 5}, 5);
    Tensor y = s.run({{"X", x}, {"v", va}})[0];
    Tensor ref = Tensor::allocate(DType::kFloat32, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t c = (i / 20) % 3;
      ref.data_as<float>()[i] = (x.data_as<float>()[i] - me.data_as<float>()[c]) /
                                    std::sqrt(va.data_as<float>()[c] + 1e-3f) * sc.data_as<float>()[c] +
                                bi.data_as<float>()[c];
    }
    expect_close(y, ref, Tol{1e-5f, 1e-5f}.finite_only());
  }
  ModelBuilder mb(15);
  mb.input("X", {2, 3});
  for (const char* p : {"s", "b", "m", "v"}) mb.initializer(p, random_floats({3}, 1, 0.5f, 1.f));
  auto* n = mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y"}, "bn_train");
  ModelBuilder::int1(n, "training_mode", 1);
  mb.output("Y");
  // Training mode normalises with the batch's statistics (population variance), per the spec.
  Session s(mb.build());
  Tensor x = random_floats({2, 3}, 1);
  Tensor y = s.run({{"X", x}})[0];
  Model m2 = mb.build();
  const float* xd = x.data_as<float>();
  for (int c = 0; c < 3; ++c) {
    float mean = 0.5f * (xd[c] + xd[3 + c]);
    float var = 0.5f * ((xd[c] - mean) * (xd[c] - mean) + (xd[3 + c] - mean) * (xd[3 + c] - mean));
    const Tensor& sc = *m2.impl()->graph.values[m2.impl()->graph.find_value("s")].constant;
    const Tensor& bi = *m2.impl()->graph.values[m2.impl()->graph.find_value("b")].constant;
    for (int n = 0; n < 2; ++n)
      EXPECT_NEAR(y.data_as<float>()[n * 3 + c],
                  (xd[n * 3 + c] - mean) / std::sqrt(var + 1e-5f) * sc.data_as<float>()[c] + bi.data_as<float>()[c],
                  1e-4f);
  }
}

// ---------------------------------------------------------------- fusion pass
// conv -> BN -> relu -> maxpool -> conv -> BN -> relu -> GAP; the fused session must equal the
// unfused one and its plan must hold no BatchNormalization or Relu.
Model conv_bn_relu_chain(int64_t c1, bool symbolic_batch) {
  ModelBuilder mb(13);
  mb.input("X", {symbolic_batch ? -1 : 1, 3, 23, 19});
  auto add_bn = [&](const std::string& p, int64_t c, uint32_t seed) {
    mb.initializer(p + "_s", random_floats({c}, seed, 0.5f, 1.5f));
    mb.initializer(p + "_b", random_floats({c}, seed + 1));
    mb.initializer(p + "_m", random_floats({c}, seed + 2));
    mb.initializer(p + "_v", random_floats({c}, seed + 3, 0.5f, 2.f));
  };
  mb.initializer("W1", random_floats({c1, 3, 3, 3}, 10, -0.3f, 0.3f));
  mb.initializer("B1", random_floats({c1}, 11));
  add_bn("bn1", c1, 20);
  mb.initializer("W2", random_floats({32, c1, 3, 3}, 30, -0.1f, 0.1f));
  add_bn("bn2", 32, 40);
  auto* c = mb.node("Conv", {"X", "W1", "B1"}, {"c1"}, "conv1");
  ModelBuilder::ints(c, "pads", {1, 1, 1, 1});
  ModelBuilder::ints(c, "strides", {2, 2});
  mb.node("BatchNormalization", {"c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"}, {"n1"}, "bn1");
  mb.node("Relu", {"n1"}, {"r1"}, "relu1");
  auto* mp = mb.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  ModelBuilder::ints(mp, "kernel_shape", {3, 3});
  ModelBuilder::ints(mp, "strides", {2, 2});
  ModelBuilder::ints(mp, "pads", {1, 1, 1, 1});
  auto* c2 = mb.node("Conv", {"p1", "W2"}, {"c2"}, "conv2");
  ModelBuilder::ints(c2, "pads", {1, 1, 1, 1});
  mb.node("BatchNormalization", {"c2", "bn2_s", "bn2_b", "bn2_m", "bn2_v"}, {"n2"}, "bn2");
  mb.node("Relu", {"n2"}, {"r2"}, "relu2");
  mb.node("GlobalAveragePool", {"r2"}, {"Y"}, "gap");
  mb.output("Y");
  mb.output("r1");  // a graph output in the middle stays plain
  return mb.build();
}

TEST(NnFusion, ConvBatchNormReluFoldsAndMatchesUnfused) {
  for (int64_t c1 : {16, 24}) {  // 16: blocked edges; 24: not a multiple of the block
    for (bool sym : {false, true}) {
      SCOPED_TRACE(str_cat("c1=", c1, " symbolic=", sym));
      Model m = conv_bn_relu_chain(c1, sym);
      SessionOptions plain;
      plain.optimize = false;
      Session fused(m), unfused(m, plain);
      auto plan = fused.execution_plan();
      std::string all;
      for (auto& p : plan) all += p + " ";
      EXPECT_EQ(all.find("BatchNormalization"), std::string::npos) << all;
      EXPECT_EQ(all.find("Relu"), std::string::npos) << all;
      EXPECT_NE(all.find("FusedConv:conv1"), std::string::npos) << all;
      EXPECT_NE(all.find("FusedConv:conv2"), std::string::npos) << all;
      for (int64_t batch : {1, 2}) {
        if (!sym && batch == 2) continue;
        Tensor x = random_floats({batch, 3, 23, 19}, 99 + batch);
        auto a = fused.run({{"X", x}});
        auto b = unfused.run({{"X", x}});
        expect_close(a[0], b[0], Tol{1e-4f, 1e-4f}.finite_only());
        expect_close(a[1], b[1], Tol{1e-4f, 1e-4f}.finite_only());
      }
    }
  }
}

// A prepared session is run from several threads at once; each new input shape builds its
// primitives under the cache's mutex, and per-thread buffers keep the runs apart.
TEST(NnFusion, ConcurrentRunsAgree) {
  Model m = conv_bn_relu_chain(16, true);
  Session s(m);
  std::vector<Tensor> inputs, expected;
  for (int64_t b = 1; b <= 4; ++b) {
    inputs.push_back(random_floats({b, 3, 23, 19}, 50 + b));
    expected.push_back(s.run({{"X", inputs.back()}})[0]);
  }
  Session fresh(m);  // nothing cached yet for batch > 1
  std::vector<std::thread> threads;
  std::vector<std::vector<Tensor>> got(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep)
        for (size_t i = 0; i < inputs.size(); ++i) got[t].push_back(fresh.run({{"X", inputs[(i + t) % 4]}})[0]);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t)
    for (size_t k = 0; k < got[t].size(); ++k)
      expect_close(got[t][k], expected[(k % 4 + t) % 4], Tol{0.f, 0.f}.finite_only());
}

// The residual Add cannot run unfused in this family alone (Add is the elementwise family's),
// so the pass is applied to the graph directly and the FusedConv kernel is compared with
// reference conv + add + relu.
class MapAllocator : public Allocator {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
};

// Runs an optimised graph node by node (for graphs whose unfused form needs operators of
// other families, which check_supported would refuse in this family's build).
std::vector<Tensor> run_graph_by_hand(const Graph& g, const std::map<std::string, Tensor>& feeds) {
  MapAllocator alloc;
  RunCache cache;
  std::vector<Tensor> slots(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) slots[v] = *g.values[v].constant;
  for (auto& [name, t] : feeds) slots[g.find_value(name)] = t;
  for (const Node& n : g.nodes) {
    const OpEntry* e = op_table().find(n.domain, n.op_type, n.opset);
    if (!e) throw Error("no kernel for " + n.op_type);
    auto k = e->factory(KernelInit{n, g});
    std::vector<const Tensor*> ins;
    for (int v : n.inputs) ins.push_back(v >= 0 ? &slots[v] : nullptr);
    std::vector<Tensor> outs(n.outputs.size());
    KernelContext ctx(n, ins, outs, alloc, cache);
    k->run(ctx);
    for (size_t i = 0; i < outs.size(); ++i) slots[n.outputs[i]] = outs[i];
  }
  return slots;
}

TEST(NnFusion, ResidualAddReluBecomesSumPostOp) {
  // (channels, dilation of conv_b): 64 channels with dilation 2 runs conv_b as space-to-batch
  // Winograd with the residual sum, on blocked edges.
  for (auto [ch, dil] : std::vector<std::pair<int64_t, int64_t>>{{16, 1}, {64, 2}}) {
    SCOPED_TRACE(str_cat("channels ", ch, " dilation ", dil));
    int64_t hh = dil == 1 ? 9 : 10, ww = dil == 1 ? 7 : 12;
    ModelBuilder mb(13);
    mb.input("X", {1, ch, hh, ww});
    Tensor w1 = random_floats({ch, ch, 3, 3}, 1, -0.2f, 0.2f), w2 = random_floats({ch, ch, 3, 3}, 2, -0.1f, 0.1f);
    mb.initializer("W1", w1);
    mb.initializer("W2", w2);
    auto* a = mb.node("Conv", {"X", "W1"}, {"a"}, "conv_a");
    ModelBuilder::ints(a, "pads", {1, 1, 1, 1});
    auto* b = mb.node("Conv", {"a", "W2"}, {"b"}, "conv_b");
    ModelBuilder::ints(b, "pads", {dil, dil, dil, dil});
    ModelBuilder::ints(b, "dilations", {dil, dil});
    mb.node("Add", {"b", "a"}, {"s"}, "add");
    mb.node("Relu", {"s"}, {"Y"}, "relu");
    mb.output("Y");
    Model m = mb.build();
    Graph g = m.impl()->graph;
    ASSERT_TRUE(fuse_conv_batchnorm_relu(g));
    g.compact();
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[1].op_type, "FusedConv");
    EXPECT_EQ(g.nodes[1].inputs.size(), 4u);
    EXPECT_EQ(g.values[g.nodes[1].inputs[3]].name, "a");
    EXPECT_EQ(g.values[g.nodes[1].outputs[0]].name, "Y");
    // `a` is read twice (conv_b and the sum): not in place.
    EXPECT_EQ(g.nodes[1].attrs.get_int("__pointrt_sum_inplace", 0), 0);

    Tensor x = random_floats({1, ch, hh, ww}, 5);
    std::vector<Tensor> slots = run_graph_by_hand(g, {{"X", x}});
    // Blocked edges may hold blocked data internally; the graph output is plain.
    Tensor y = slots[g.find_value("Y")];
    ConvAttrs ca;
    ca.pads = {1, 1, 1, 1};
    ConvGeometry geo = conv_geometry(ca, x.shape(), w1.shape(), nullptr, "ref");
    ConvAttrs cb;
    cb.pads = {dil, dil, dil, dil};
    cb.dilations = {dil, dil};
    ConvGeometry geo_b = conv_geometry(cb, x.shape(), w2.shape(), nullptr, "ref");
    Tensor ra = Tensor::allocate(DType::kFloat32, geo.output_shape()),
           rb = Tensor::allocate(DType::kFloat32, geo.output_shape());
    conv_ref(geo, x.data_as<float>(), w1.data_as<float>(), nullptr, ra.data_as<float>());
    conv_ref(geo_b, ra.data_as<float>(), w2.data_as<float>(), nullptr, rb.data_as<float>());
    for (int64_t i = 0; i < rb.numel(); ++i)
      rb.data_as<float>()[i] = std::max(0.f, rb.data_as<float>()[i] + ra.data_as<float>()[i]);
    expect_close(y, rb, Tol{3e-4f, 3e-4f}.finite_only());
  }
}

// The same residual block through Session, fused against unfused. Add belongs to the elementwise
// family: until that family is in the build this test is skipped.
TEST(NnFusion, ResidualBlockSessionMatchesUnfused) {
  if (!op_table().find("", "Add", 13)) GTEST_SKIP() << "Add is not in this build's operator table";
  ModelBuilder mb(13);
  mb.input("X", {1, 32, 14, 10});
  for (const char* w : {"W1", "W2"}) mb.initializer(w, random_floats({32, 32, 3, 3}, w[1], -0.1f, 0.1f));
  for (const char* p : {"bn_s", "bn_b", "bn_m", "bn_v"}) mb.initializer(p, random_floats({32}, p[3], 0.5f, 1.5f));
  auto* a = mb.node("Conv", {"X", "W1"}, {"a"}, "conv_a");
  ModelBuilder::ints(a, "pads", {1, 1, 1, 1});
  mb.node("Relu", {"a"}, {"ra"}, "relu_a");
  auto* b = mb.node("Conv", {"ra", "W2"}, {"b"}, "conv_b");
  ModelBuilder::ints(b, "pads", {1, 1, 1, 1});
  mb.node("BatchNormalization", {"b", "bn_s", "bn_b", "bn_m", "bn_v"}, {"bn"}, "bn_b");
  mb.node("Add", {"bn", "X"}, {"sum"}, "add");
  mb.node("Relu", {"sum"}, {"Y"}, "relu_out");
  mb.output("Y");
  Model m = mb.build();
  SessionOptions plain;
  plain.optimize = false;
  Session fused(m), unfused(m, plain);
  std::string all;
  for (auto& p : fused.execution_plan()) all += p + " ";
  EXPECT_EQ(all, "FusedConv:conv_a FusedConv:conv_b ") << all;
  Tensor x = random_floats({1, 32, 14, 10}, 3);
  expect_close(fused.run({{"X", x}})[0], unfused.run({{"X", x}})[0], Tol{1e-4f, 1e-4f}.finite_only());
}

// PointNet: shared MLP then max over points (ReduceMax, keepdims 0) -> GlobalMaxPool [N, C].
// When the conv output has no other reader the max is folded into the conv (chunked running max);
// when it is also a graph output it stays, and the ReduceMax becomes a GlobalMaxPool.
TEST(NnFusion, PointNetReduceMaxBecomesGlobalMax) {
  for (int variant = 0; variant < 4; ++variant) {
    int opset = variant % 2 ? 18 : 13;
    bool conv_output_too = variant >= 2;
    SCOPED_TRACE(str_cat("opset ", opset, conv_output_too ? ", conv output also a graph output" : ""));
    ModelBuilder mb(opset);
    mb.input("X", {2, 3, 5001});  // 5001 points: two 2048-point chunks and a tail
    Tensor w1 = random_floats({64, 3, 1}, 1), w2 = random_floats({128, 64, 1}, 2, -0.2f, 0.2f);
    mb.initializer("W1", w1);
    mb.initializer("W2", w2);
    mb.node("Conv", {"X", "W1"}, {"a"}, "c1");
    mb.node("Relu", {"a"}, {"r"}, "relu");
    mb.node("Conv", {"r", "W2"}, {"b"}, "c2");
    onnx::NodeProto* rm;
    if (opset < 18) {
      rm = mb.node("ReduceMax", {"b"}, {"Y"}, "max");
      ModelBuilder::ints(rm, "axes", {-1});
    } else {
      Tensor axes = Tensor::allocate(DType::kInt64, {1});
      axes.data_as<int64_t>()[0] = 2;
      auto* tp = mb.graph->add_initializer();
      tp->set_name("axes");
      tp->set_data_type(7);
      tp->add_dims(1);
      tp->set_raw_data(std::string(static_cast<const char*>(axes.data()), 8));
      rm = mb.node("ReduceMax", {"b", "axes"}, {"Y"}, "max");
    }
    ModelBuilder::int1(rm, "keepdims", 0);
    mb.output("Y");
    if (conv_output_too) mb.output("b");
    // Shapes as an exporter declares them: opset 18 is newer than the ONNX library's shape
    // inference, so the pass must work from declared value_info alone.
    for (auto [name, channels] : {std::pair<const char*, int64_t>{"a", 64}, {"r", 64}, {"b", 128}}) {
      auto* vi = mb.graph->add_value_info();
      vi->set_name(name);
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
      for (int64_t d : {int64_t(2), channels, int64_t(5001)})
        vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    }
    Model m = mb.build();
    Graph g = m.impl()->graph;
    ASSERT_TRUE(fuse_conv_batchnorm_relu(g));
    g.compact();
    if (conv_output_too) {
      ASSERT_EQ(g.nodes.size(), 3u);
      EXPECT_EQ(g.nodes[2].op_type, "GlobalMaxPool");
    } else {
      ASSERT_EQ(g.nodes.size(), 2u);
      EXPECT_EQ(g.nodes[1].op_type, "FusedConv");
      EXPECT_EQ(g.nodes[1].attrs.get_int("__pointrt_global_max", 0), 1);
      EXPECT_EQ(g.nodes[1].attrs.get_int("__pointrt_src_blocked", 0), 1);  // 64 channels arrive blocked
    }
    Tensor x = random_floats({2, 3, 5001}, 9);
    Tensor y = run_graph_by_hand(g, {{"X", x}})[g.find_value("Y")];
    ASSERT_EQ(y.shape(), (Shape{2, 128}));
    ConvAttrs ca;
    ConvGeometry g1 = conv_geometry(ca, x.shape(), w1.shape(), nullptr, "ref");
    Tensor a = Tensor::allocate(DType::kFloat32, g1.output_shape());
    conv_ref(g1, x.data_as<float>(), w1.data_as<float>(), nullptr, a.data_as<float>());
    for (int64_t i = 0; i < a.numel(); ++i) a.data_as<float>()[i] = std::max(0.f, a.data_as<float>()[i]);
    ConvGeometry g2 = conv_geometry(ca, a.shape(), w2.shape(), nullptr, "ref");
    Tensor b = Tensor::allocate(DType::kFloat32, g2.output_shape());
    conv_ref(g2, a.data_as<float>(), w2.data_as<float>(), nullptr, b.data_as<float>());
    Tensor ref = Tensor::allocate(DType::kFloat32, {2, 128});
    for (int64_t nc = 0; nc < 256; ++nc) {
      float mx = -INFINITY;
      for (int64_t i = 0; i < 5001; ++i) mx = std::max(mx, b.data_as<float>()[nc * 5001 + i]);
      ref.data_as<float>()[nc] = mx;
    }
    expect_close(y, ref, Tol{1e-4f, 1e-4f}.finite_only());
  }
}

TEST(NnFusion, ConvWithNonConstantWeightsIsNotFolded) {
  ModelBuilder mb(13);
  mb.input("X", {1, 3, 5, 5});
  mb.input("W", {4, 3, 3, 3});
  for (const char* p : {"s", "b", "m", "v"}) mb.initializer(p, random_floats({4}, 1, 0.5f, 1.f));
  mb.node("Conv", {"X", "W"}, {"c"}, "conv");
  mb.node("BatchNormalization", {"c", "s", "b", "m", "v"}, {"Y"}, "bn");
  mb.output("Y");
  Session s(mb.build());
  auto plan = s.execution_plan();
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[1], "BatchNormalization:bn");
}

}  // namespace
