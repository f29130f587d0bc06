// The pools (MaxPool, AveragePool, the global pools) against the naive reference, and
// MaxPool's indices in row- and column-major order.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/onnx/nn/nn_kernels.h"
#include "ops/onnx/nn/pool.h"
#include "unit/nn/nn_test_util.h"

namespace pointrt::nn {
namespace {

using namespace test_helpers;

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

}  // namespace
}  // namespace pointrt::nn
