// Conv and ConvTranspose: the oneDNN kernels against the naive reference on awkward shapes, empty
// batches, error paths, and which implementation each shape picks.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "ops/onnx/nn/conv.h"
#include "ops/onnx/nn/nn_kernels.h"
#include "unit/nn/nn_test_util.h"

namespace pointrt::nn {
namespace {

using namespace test_helpers;

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

}  // namespace
}  // namespace pointrt::nn
