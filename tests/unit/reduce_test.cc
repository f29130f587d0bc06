// Reduce family: optimised kernels against their naive references on awkward shapes (0, 1,
// odd, 15/16/17, ranks 0..5, every axis subset on small ranks), plus node-level behaviour
// (attributes, opset forms) and error paths.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>

#include "onnx/onnx_pb.h"

#include "graph/onnx_import.h"
#include "io/tensor_compare.h"
#include "ops/kernel.h"
#include "ops/onnx/reduce/argminmax.h"
#include "ops/onnx/reduce/cumsum.h"
#include "ops/onnx/reduce/einsum.h"
#include "ops/onnx/reduce/matmul.h"
#include "ops/onnx/reduce/normalization.h"
#include "ops/onnx/reduce/reduce.h"
#include "ops/onnx/reduce/softmax.h"
#include "ops/onnx/reduce/topk.h"
#include "support/expect_error.h"
#include "support/op_tester.h"

using namespace pointrt;
using namespace pointrt::reduce;
using pointrt::test::expect_error_with;

namespace {

// Random tensor; `small_ints` draws from a tiny range so ties and repeats are common.
Tensor random_tensor(DType t, const Shape& s, uint32_t seed, bool small_ints = false) {
  Tensor r = Tensor::allocate(t, s);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> ints(small_ints ? -2 : -9, small_ints ? 2 : 9);
  dispatch_all(t, "random_tensor", [&](auto tag) {
    using T = decltype(tag);
    T* p = r.data_as<T>();
    for (int64_t i = 0; i < r.numel(); ++i) {
      if constexpr (std::is_same<T, bool>::value)
        p[i] = ints(gen) > 0;
      else if constexpr (std::is_floating_point<T>::value)
        p[i] = small_ints ? T(ints(gen)) : T(real(gen));
      else if constexpr (std::is_unsigned<T>::value)
        p[i] = T(ints(gen) + 9);
      else
        p[i] = T(ints(gen));
    }
  });
  return r;
}

std::string shape_str(const Shape& s) { return shape_to_string(s); }

// ---------------------------------------------------------------- running a node
class HeapAllocator : public Allocator {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
};

struct NodeSpec {
  std::string op;
  int opset;
  std::map<std::string, Attribute> attrs;
  std::vector<Tensor> inputs;  // undefined = omitted optional input
  std::vector<bool> constant;  // per input: constant (initializer) or fed
  int num_outputs = 1;
  std::map<int, Shape> declared;  // input shapes the model declares, when they differ from the fed ones
};

Attribute int_attr(int64_t v) { return Attribute::make_int(std::move(v)); }
Attribute float_attr(float v) { return Attribute::make_float(std::move(v)); }
Attribute ints_attr(std::vector<int64_t> v) { return Attribute::make_ints(std::move(v)); }
Attribute string_attr(std::string v) { return Attribute::make_string(std::move(v)); }

std::vector<Tensor> run_node(const NodeSpec& spec) {
  Graph g;
  Node n;
  n.name = "n0";
  n.op_type = spec.op;
  n.opset = spec.opset;
  n.attrs.items = spec.attrs;
  n.attrs.owner = n.describe();
  std::vector<Tensor> slots;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    if (!spec.inputs[i].defined()) {
      n.inputs.push_back(-1);
      continue;
    }
    int id = g.add_value("in" + std::to_string(i));
    Value& v = g.values[id];
    v.dtype = spec.inputs[i].dtype();
    v.has_shape = true;
    auto decl = spec.declared.find(static_cast<int>(i));
    for (int64_t d : decl != spec.declared.end() ? decl->second : spec.inputs[i].shape()) v.shape.push_back(Dim{d, ""});
    if (i < spec.constant.size() && spec.constant[i]) v.constant = spec.inputs[i];
    n.inputs.push_back(id);
  }
  for (int o = 0; o < spec.num_outputs; ++o) n.outputs.push_back(g.add_value("out" + std::to_string(o)));
  g.nodes.push_back(n);
  const OpEntry* e = op_table().find("", spec.op, spec.opset);
  if (!e) throw Error(str_cat(spec.op, " opset ", spec.opset, " not in the table"));
  auto kernel = e->factory(KernelInit{g.nodes[0], g});
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < spec.inputs.size(); ++i) ins.push_back(spec.inputs[i].defined() ? &spec.inputs[i] : nullptr);
  std::vector<Tensor> outs(spec.num_outputs);
  HeapAllocator alloc;
  RunCache cache;
  KernelContext ctx(g.nodes[0], ins, outs, alloc, cache);
  kernel->run(ctx);
  return outs;
}

Tensor int64_tensor(std::vector<int64_t> v, bool scalar = false) {
  Tensor t = Tensor::allocate(DType::kInt64, scalar ? Shape{} : Shape{static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
  return t;
}

template <typename T>
Tensor make_tensor(DType dt, Shape s, std::vector<T> v) {
  Tensor t = Tensor::allocate(dt, s);
  std::copy(v.begin(), v.end(), t.data_as<T>());
  return t;
}

std::vector<Shape> awkward_shapes() {
  return {{},
          {0},
          {1},
          {7},
          {16},
          {17},
          {3, 4},
          {1, 15},
          {16, 1},
          {0, 5},
          {5, 0},
          {2, 3, 4},
          {17, 1, 15},
          {3, 16, 5},
          {2, 0, 3},
          {2, 3, 4, 5},
          {1, 2, 1, 3},
          {4, 1, 17, 2},
          {2, 3, 1, 2, 3},
          {1, 1, 1, 1, 1}};
}

// ---------------------------------------------------------------- reductions
const ReduceKind kAllKinds[] = {ReduceKind::kSum,    ReduceKind::kSumSquare, ReduceKind::kMean, ReduceKind::kL1,
                                ReduceKind::kL2,     ReduceKind::kMax,       ReduceKind::kMin,  ReduceKind::kProd,
                                ReduceKind::kLogSum, ReduceKind::kLogSumExp};

void check_reduce(ReduceKind kind, const Tensor& x, const std::vector<bool>& reduced, const std::string& label) {
  for (bool keep : {true, false}) {
    Shape out = reduce_output_shape(x.shape(), reduced, keep);
    Tensor a = Tensor::allocate(x.dtype(), out), b = Tensor::allocate(x.dtype(), out);
    reduce_optimized(kind, x, reduced, a);
    reduce_reference(kind, x, reduced, b);
    test::expect_close(a, b, test::Tol{1e-5, 1e-5}, label);
  }
}

TEST(Reduce, EveryAxisSubsetMatchesReference) {
  uint32_t seed = 1;
  for (DType dt :
       {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt8, DType::kBool}) {
    for (const Shape& s : awkward_shapes()) {
      Tensor x = random_tensor(dt, s, seed++);
      if (dt == DType::kFloat32 && x.numel() > 3) x.data_as<float>()[2] = NAN;  // float64 stays NaN-free
      const size_t rank = s.size();
      for (uint32_t mask = 0; mask < (1u << rank); ++mask) {
        std::vector<bool> reduced(rank);
        for (size_t a = 0; a < rank; ++a) reduced[a] = (mask >> a) & 1;
        for (ReduceKind k : kAllKinds) {
          if (!reduce_kind_accepts(k, dt)) continue;
          if (k == ReduceKind::kProd && shape_numel(s) > 64 && dt != DType::kFloat64 && dt != DType::kFloat32) continue;

          check_reduce(k, x, reduced, str_cat(dtype_name(dt), " ", shape_str(s), " mask ", mask, " kind ", int(k)));
        }
      }
    }
  }
}

TEST(Reduce, LargeShapesHitParallelAndChunkedPaths) {
  struct Case {
    Shape s;
    std::vector<bool> reduced;
  };
  for (const Case& c : {Case{{1, 300001}, {true, true}}, Case{{3, 70001}, {false, true}},
                        Case{{513, 257}, {true, false}}, Case{{5, 1000, 33}, {true, false, true}},
                        Case{{4, 33, 1000}, {false, true, false}}, Case{{2, 3, 4097, 5}, {true, false, true, false}}}) {
    Tensor x = random_tensor(DType::kFloat32, c.s, 7);
    for (ReduceKind k : {ReduceKind::kSum, ReduceKind::kMean, ReduceKind::kMax, ReduceKind::kL2, ReduceKind::kMin})
      check_reduce(k, x, c.reduced, str_cat("large ", shape_str(c.s), " kind ", int(k)));
  }
}

TEST(Reduce, FloatSumIsAccurate) {
  // 2^24 + many ones: a float running sum would stall at 16777216.
  Tensor x = Tensor::allocate(DType::kFloat32, {1 << 20});
  float* p = x.data_as<float>();
  for (int i = 0; i < (1 << 20); ++i) p[i] = i == 0 ? 16777216.f : 1.f;
  Tensor y = Tensor::allocate(DType::kFloat32, {});
  reduce_optimized(ReduceKind::kSum, x, {true}, y);
  EXPECT_EQ(y.data_as<float>()[0], 16777216.f + float((1 << 20) - 1));
}

TEST(Reduce, EmptySetValues) {
  Tensor x = Tensor::allocate(DType::kFloat32, {2, 0, 3});
  auto one = [&](ReduceKind k) {
    Tensor y = Tensor::allocate(DType::kFloat32, {2, 1, 3});
    reduce_optimized(k, x, {false, true, false}, y);
    return y.data_as<float>()[0];
  };
  EXPECT_EQ(one(ReduceKind::kSum), 0.f);
  EXPECT_EQ(one(ReduceKind::kL2), 0.f);
  EXPECT_EQ(one(ReduceKind::kProd), 1.f);
  EXPECT_EQ(one(ReduceKind::kMax), -INFINITY);
  EXPECT_EQ(one(ReduceKind::kMin), INFINITY);
  EXPECT_EQ(one(ReduceKind::kMean), 0.f);
  EXPECT_EQ(one(ReduceKind::kLogSum), -INFINITY);
  EXPECT_EQ(one(ReduceKind::kLogSumExp), -INFINITY);
}

TEST(Reduce, LogSumExpIsStable) {
  Tensor x = make_tensor<float>(DType::kFloat32, {4}, {1000.f, 1000.f, -INFINITY, 999.f});
  Tensor y = Tensor::allocate(DType::kFloat32, {});
  reduce_optimized(ReduceKind::kLogSumExp, x, {true}, y);
  EXPECT_NEAR(y.data_as<float>()[0], 1000.f + std::log(2.f + std::exp(-1.f)), 1e-3);
}

TEST(Reduce, NodeForms) {
  Tensor x = random_tensor(DType::kFloat32, {2, 3, 4}, 3);
  // opset 13 attribute axes, keepdims 0.
  auto y = run_node({"ReduceMean", 13, {{"axes", ints_attr({-1, 0})}, {"keepdims", int_attr(0)}}, {x}});
  EXPECT_EQ(y[0].shape(), (Shape{3}));
  // opset 18 axes input.
  y = run_node({"ReduceMax", 18, {}, {x, int64_tensor({1})}});
  EXPECT_EQ(y[0].shape(), (Shape{2, 1, 4}));
  // Absent axes: all axes; noop_with_empty_axes: the input itself.
  y = run_node({"ReduceSum", 13, {}, {x}});
  EXPECT_EQ(y[0].shape(), (Shape{1, 1, 1}));
  y = run_node({"ReduceSum", 13, {{"noop_with_empty_axes", int_attr(1)}}, {x, int64_tensor({})}});
  test::expect_close(y[0], x, test::Tol{0, 0}, "noop");
  y = run_node({"ReduceMax", 18, {{"noop_with_empty_axes", int_attr(1)}}, {x}});
  test::expect_close(y[0], x, test::Tol{0, 0}, "noop without axes input");
  // Kinds with a per-element map apply it (sets of one element).
  Tensor neg = make_tensor<float>(DType::kFloat32, {2}, {-3.f, 2.f});
  y = run_node({"ReduceL2", 18, {{"noop_with_empty_axes", int_attr(1)}}, {neg}});
  EXPECT_EQ(y[0].data_as<float>()[0], 3.f);
  y = run_node({"ReduceSumSquare", 18, {{"noop_with_empty_axes", int_attr(1)}}, {neg, int64_tensor({})}});
  EXPECT_EQ(y[0].data_as<float>()[0], 9.f);
  EXPECT_EQ(y[0].shape(), (Shape{2}));
  // Rank 0 input reduces to itself (SumSquare squares it).
  Tensor s = make_tensor<float>(DType::kFloat32, {}, {3.f});
  y = run_node({"ReduceSumSquare", 13, {}, {s}});
  EXPECT_EQ(y[0].data_as<float>()[0], 9.f);
}

TEST(Reduce, Errors) {
  Tensor x = random_tensor(DType::kFloat32, {2, 3}, 3);
  expect_error_with([&] { run_node({"ReduceSum", 11, {{"axes", ints_attr({2})}}, {x}}); }, {"n0", "axis 2", "rank 2"});
  expect_error_with([&] { run_node({"ReduceSum", 13, {}, {x, int64_tensor({-3})}}); }, {"n0", "axis -3"});
  expect_error_with([&] { run_node({"ReduceMax", 18, {}, {x, int64_tensor({1, -1})}}); }, {"n0", "twice"});
  Tensor f16 = Tensor::allocate(DType::kFloat16, {2});
  expect_error_with([&] { run_node({"ReduceSum", 13, {}, {f16}}); }, {"n0", "float16"});
}

// ---------------------------------------------------------------- ArgMax / ArgMin
TEST(ArgReduce, MatchesReferenceWithTies) {
  uint32_t seed = 11;
  for (DType dt : {DType::kFloat32, DType::kInt32, DType::kUInt8, DType::kFloat64})
    for (const Shape& s : awkward_shapes())
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        if (s[axis] == 0) continue;
        Tensor x = random_tensor(dt, s, seed++, /*small_ints=*/true);
        if (dt == DType::kFloat32 && x.numel() > 3) x.data_as<float>()[seed % 3] = NAN;
        Shape out = s;
        out[axis] = 1;
        for (bool is_max : {true, false})
          for (bool last : {true, false}) {
            Tensor a = Tensor::allocate(DType::kInt64, out), b = Tensor::allocate(DType::kInt64, out);
            arg_reduce_optimized(x, axis, is_max, last, a);
            arg_reduce_reference(x, axis, is_max, last, b);
            test::expect_close(a, b, test::Tol{0, 0},
                               str_cat("arg ", shape_str(s), " axis ", axis, " max ", is_max, " last ", last));
          }
      }
}

TEST(ArgReduce, NodeAndErrors) {
  Tensor x = make_tensor<float>(DType::kFloat32, {2, 3}, {1, 5, 5, 7, 7, 0});
  auto y = run_node(
      {"ArgMax", 12, {{"axis", int_attr(-1)}, {"select_last_index", int_attr(1)}, {"keepdims", int_attr(0)}}, {x}});
  ASSERT_EQ(y[0].shape(), (Shape{2}));
  EXPECT_EQ(y[0].data_as<int64_t>()[0], 2);
  EXPECT_EQ(y[0].data_as<int64_t>()[1], 1);
  y = run_node({"ArgMin", 13, {{"axis", int_attr(1)}}, {x}});
  EXPECT_EQ(y[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(y[0].data_as<int64_t>()[1], 2);
  expect_error_with([&] { run_node({"ArgMax", 13, {{"axis", int_attr(2)}}, {x}}); }, {"n0", "axis 2", "rank 2"});
  Tensor e = Tensor::allocate(DType::kFloat32, {2, 0});
  expect_error_with([&] { run_node({"ArgMax", 13, {{"axis", int_attr(1)}}, {e}}); }, {"n0", "size 0"});
}

// ---------------------------------------------------------------- Softmax
TEST(Softmax, BothSemanticsMatchReference) {
  uint32_t seed = 21;
  for (DType dt : {DType::kFloat32, DType::kFloat64})
    for (const Shape& s : awkward_shapes()) {
      if (s.empty()) continue;
      Tensor x = random_tensor(dt, s, seed++);
      for (bool log : {false, true})
        for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
          int64_t outer = 1, R = 1, inner = 1;
          for (size_t i = 0; i < s.size(); ++i) (int64_t(i) < axis ? outer : int64_t(i) == axis ? R : inner) *= s[i];
          Tensor a = Tensor::allocate(dt, s), b = Tensor::allocate(dt, s);
          softmax_optimized(x, outer, R, inner, log, a);
          softmax_reference(x, outer, R, inner, log, b);
          test::expect_close(a, b, test::Tol{1e-6, 1e-5},
                             str_cat("softmax ", shape_str(s), " axis ", axis, " log ", log));
          // Opset 13 node vs reference along the axis.
          auto y = run_node({log ? "LogSoftmax" : "Softmax", 13, {{"axis", int_attr(axis - int64_t(s.size()))}}, {x}});
          test::expect_close(y[0], b, test::Tol{1e-6, 1e-5}, "node opset 13");
          // Opset 11: flattened at axis.
          y = run_node({log ? "LogSoftmax" : "Softmax", 11, {{"axis", int_attr(axis)}}, {x}});
          softmax_reference(x, outer, R * inner, 1, log, b);
          test::expect_close(y[0], b, test::Tol{1e-6, 1e-5}, "node opset 11");
        }
    }
}

TEST(Softmax, ShortRowsBlockPathMatchesReference) {
  // Rows of <= 32 elements go through the transposed 16-row blocks (with a partial last block).
  for (int64_t R : {1, 3, 13, 16, 32, 33})
    for (int64_t rows : {16, 17, 40, 1000})
      for (bool log : {false, true}) {
        Tensor x = random_tensor(DType::kFloat32, {rows, R}, static_cast<uint32_t>(R * 1000 + rows));
        x.data_as<float>()[R] = -INFINITY;
        Tensor a = Tensor::allocate(DType::kFloat32, {rows, R}), b = Tensor::allocate(DType::kFloat32, {rows, R});
        softmax_optimized(x, rows, R, 1, log, a);
        softmax_reference(x, rows, R, 1, log, b);
        test::expect_close(a, b, test::Tol{1e-6, 1e-5}, str_cat("short rows R ", R, " rows ", rows, " log ", log));
      }
}

TEST(Softmax, LargeValuesStayFinite) {
  Tensor x = make_tensor<float>(DType::kFloat32, {1, 3}, {1000.f, 1001.f, 1002.f});
  auto y = run_node({"Softmax", 13, {}, {x}});
  EXPECT_NEAR(y[0].data_as<float>()[2], 0.66524096f, 1e-6);
  y = run_node({"LogSoftmax", 13, {}, {x}});
  EXPECT_NEAR(y[0].data_as<float>()[0], -2.40760596f, 1e-5);
  expect_error_with([&] { run_node({"Softmax", 13, {{"axis", int_attr(2)}}, {x}}); }, {"n0", "axis 2"});
}

// ---------------------------------------------------------------- CumSum
TEST(CumSum, MatchesReference) {
  uint32_t seed = 31;
  for (DType dt : {DType::kFloat32, DType::kInt64, DType::kInt32, DType::kFloat64})
    for (const Shape& s : awkward_shapes())
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        Tensor x = random_tensor(dt, s, seed++);
        for (bool excl : {false, true})
          for (bool rev : {false, true}) {
            Tensor a = Tensor::allocate(dt, s), b = Tensor::allocate(dt, s);
            cumsum_optimized(x, axis, excl, rev, a);
            cumsum_reference(x, axis, excl, rev, b);
            test::expect_close(a, b, test::Tol{1e-5, 1e-5},
                               str_cat("cumsum ", shape_str(s), " axis ", axis, " excl ", excl, " rev ", rev));
          }
      }
}

TEST(CumSum, NodeAndErrors) {
  Tensor x = make_tensor<double>(DType::kFloat64, {5}, {1, 2, 3, 4, 5});
  Tensor axis = make_tensor<int32_t>(DType::kInt32, {}, {0});
  auto y = run_node({"CumSum", 14, {{"exclusive", int_attr(1)}, {"reverse", int_attr(1)}}, {x, axis}});
  const double want[] = {14, 12, 9, 5, 0};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(y[0].data_as<double>()[i], want[i]);
  expect_error_with([&] { run_node({"CumSum", 14, {}, {x, int64_tensor({1}, true)}}); }, {"n0", "axis 1", "rank 1"});
}

// ---------------------------------------------------------------- TopK
TEST(TopK, MatchesReferenceWithTiesAndNaN) {
  uint32_t seed = 41;
  for (DType dt : {DType::kFloat32, DType::kInt32, DType::kFloat64})
    for (const Shape& s : awkward_shapes())
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        Tensor x = random_tensor(dt, s, seed++, /*small_ints=*/true);
        if (dt == DType::kFloat32 && x.numel() > 2) x.data_as<float>()[1] = NAN;
        for (int64_t k : {int64_t(0), int64_t(1), s[axis] / 2, s[axis]}) {
          if (k > s[axis]) continue;
          Shape out = s;
          out[axis] = k;
          for (bool largest : {true, false}) {
            Tensor va = Tensor::allocate(dt, out), ia = Tensor::allocate(DType::kInt64, out);
            Tensor vb = Tensor::allocate(dt, out), ib = Tensor::allocate(DType::kInt64, out);
            topk_optimized(x, axis, k, largest, va, ia);
            topk_reference(x, axis, k, largest, vb, ib);
            std::string what = str_cat("topk ", shape_str(s), " axis ", axis, " k ", k, " largest ", largest);
            test::expect_close(va, vb, test::Tol{0, 0}, what);
            test::expect_close(ia, ib, test::Tol{0, 0}, what);
          }
        }
      }
}

TEST(TopK, NodeFormsAndErrors) {
  Tensor x = make_tensor<float>(DType::kFloat32, {2, 4}, {3, 1, 3, 2, 0, 0, 5, 0});
  auto y = run_node({"TopK", 1 + 8, {{"k", int_attr(2)}}, {x}, {}, 2});
  EXPECT_EQ(y[1].data_as<int64_t>()[0], 0);  // tie 3 vs 3: the lower index first
  EXPECT_EQ(y[1].data_as<int64_t>()[1], 2);
  y = run_node({"TopK", 11, {{"largest", int_attr(0)}, {"axis", int_attr(1)}}, {x, int64_tensor({3})}, {}, 2});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(y[1].data_as<int64_t>()[3], 0);
  EXPECT_EQ(y[1].data_as<int64_t>()[4], 1);
  EXPECT_EQ(y[1].data_as<int64_t>()[5], 3);
  expect_error_with([&] { run_node({"TopK", 10, {}, {x, int64_tensor({5})}, {}, 2}); }, {"n0", "K = 5", "size 4"});
  expect_error_with([&] { run_node({"TopK", 11, {}, {x, int64_tensor({-1})}, {}, 2}); }, {"n0", "K = -1"});
  expect_error_with(
      [&] {
        run_node({"TopK", 11, {{"axis", int_attr(-3)}}, {x, int64_tensor({1})}, {}, 2});
      },
      {"n0", "axis -3"});
}

// ---------------------------------------------------------------- normalisation
TEST(Normalization, LayerNormMatchesReference) {
  uint32_t seed = 51;
  for (const Shape& s : awkward_shapes()) {
    if (s.empty()) continue;
    for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
      Shape norm(s.begin() + axis, s.end()), stat = s;
      for (size_t i = axis; i < s.size(); ++i) stat[i] = 1;
      Tensor x = random_tensor(DType::kFloat32, s, seed++);
      Tensor scale = random_tensor(DType::kFloat32, norm, seed++), bias = random_tensor(DType::kFloat32, norm, seed++);
      auto y = run_node({"LayerNormalization",
                         17,
                         {{"axis", int_attr(axis)}, {"epsilon", float_attr(1e-3f)}},
                         {x, scale, bias},
                         {},
                         3});
      const int64_t D = shape_numel(norm), N = shape_numel(s) / std::max<int64_t>(D, 1);
      Tensor ry = Tensor::allocate(DType::kFloat32, s), rm = Tensor::allocate(DType::kFloat32, stat),
             ri = Tensor::allocate(DType::kFloat32, stat);
      if (D > 0)
        layer_norm_reference<float>(x.data_as<float>(), scale.data_as<float>(), bias.data_as<float>(), N, D, 1e-3f,
                                    ry.data_as<float>(), rm.data_as<float>(), ri.data_as<float>());
      std::string what = str_cat("layernorm ", shape_str(s), " axis ", axis);
      test::expect_close(y[0], ry, test::Tol{1e-5, 1e-4}, what);
      if (D > 0) {
        test::expect_close(y[1], rm, test::Tol{1e-6, 1e-5}, what + " mean");
        test::expect_close(y[2], ri, test::Tol{1e-5, 1e-5}, what + " invstd");
      }
    }
  }
  // Broadcast scale ([1, D]) and no bias.
  Tensor x = random_tensor(DType::kFloat32, {3, 5}, 1), scale = random_tensor(DType::kFloat32, {1, 5}, 2);
  auto y = run_node({"LayerNormalization", 17, {{"axis", int_attr(0)}}, {x, scale}});
  EXPECT_EQ(y[0].shape(), (Shape{3, 5}));
  expect_error_with(
      [&] {
        run_node({"LayerNormalization", 17, {}, {x, random_tensor(DType::kFloat32, {4}, 3)}});
      },
      {"n0", "Scale", "[4]"});
}

TEST(Normalization, InstanceNormMatchesReference) {
  uint32_t seed = 61;
  for (const Shape& s : std::vector<Shape>{{1, 1, 1}, {2, 3, 17}, {2, 16, 4, 5}, {1, 3, 0}, {3, 2}, {2, 4, 3, 3, 2}}) {
    Tensor x = random_tensor(DType::kFloat32, s, seed++);
    Tensor scale = random_tensor(DType::kFloat32, {s[1]}, seed++),
           bias = random_tensor(DType::kFloat32, {s[1]}, seed++);
    auto y = run_node({"InstanceNormalization", 6, {{"epsilon", float_attr(1e-2f)}}, {x, scale, bias}});
    Tensor r = Tensor::allocate(DType::kFloat32, s);
    const int64_t S = x.numel() / std::max<int64_t>(1, s[0] * s[1]);
    instance_norm_reference<float>(x.data_as<float>(), scale.data_as<float>(), bias.data_as<float>(), s[0], s[1], S,
                                   1e-2f, r.data_as<float>());
    test::expect_close(y[0], r, test::Tol{1e-5, 1e-4}, "instancenorm " + shape_str(s));
  }
  Tensor x = random_tensor(DType::kFloat32, {2, 3, 4}, 1);
  expect_error_with(
      [&] {
        run_node({"InstanceNormalization",
                  6,
                  {},
                  {x, random_tensor(DType::kFloat32, {2}, 1), random_tensor(DType::kFloat32, {3}, 1)}});
      },
      {"n0", "scale", "[3]"});
}

// ---------------------------------------------------------------- MatMul / Gemm
TEST(MatMul, MatchesReferenceOnBroadcastAndAwkwardShapes) {
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {{{3}, {3}},
                                   {{4}, {4, 5}},
                                   {{2, 3, 4}, {4}},
                                   {{1, 1}, {1, 1}},
                                   {{15, 16}, {16, 17}},
                                   {{17, 15}, {15, 16}},
                                   {{0, 4}, {4, 3}},
                                   {{3, 0}, {0, 5}},
                                   {{2, 0, 3}, {3, 4}},
                                   {{2, 5, 3}, {3, 4}},
                                   {{2, 5, 3}, {2, 3, 4}},
                                   {{1, 5, 3}, {4, 3, 2}},
                                   {{4, 1, 5, 3}, {2, 3, 7}},
                                   {{3, 2}, {5, 2, 3}},
                                   {{2, 1, 3, 4, 5}, {3, 1, 5, 2}},
                                   {{65, 33}, {33, 129}},
                                   {{40, 8, 8}, {40, 8, 8}}};
  uint32_t seed = 71;
  for (const Case& c : cases)
    for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
      Tensor a = random_tensor(dt, c.a, seed++), b = random_tensor(dt, c.b, seed++);
      Shape out = matmul_output_shape(c.a, c.b, "test");
      Tensor y = Tensor::allocate(dt, out), r = Tensor::allocate(dt, out);
      matmul_optimized(a, b, y);
      matmul_reference(a, b, r);
      test::expect_close(y, r, test::Tol{1e-4, 1e-4},
                         str_cat("matmul ", dtype_name(dt), " ", shape_str(c.a), " x ", shape_str(c.b)));
    }
  EXPECT_EQ(matmul_output_shape({3}, {3}, "t"), Shape{});
  EXPECT_EQ(matmul_output_shape({2, 3, 4}, {4}, "t"), (Shape{2, 3}));
  EXPECT_EQ(matmul_output_shape({4}, {2, 4, 5}, "t"), (Shape{2, 5}));
}

TEST(MatMul, ConstantWeightsArePrepackedAndStillCorrect) {
  Tensor a = random_tensor(DType::kFloat32, {2, 17, 33}, 5), w = random_tensor(DType::kFloat32, {33, 65}, 6);
  Tensor r = Tensor::allocate(DType::kFloat32, {2, 17, 65});
  matmul_reference(a, w, r);
  auto y = run_node({"MatMul", 13, {}, {a, w}, {false, true}});
  test::expect_close(y[0], r, test::Tol{1e-4, 1e-4}, "packed matmul");
  // A kernel prepared for another shape of A falls back to sgemm.
  Tensor a2 = random_tensor(DType::kFloat32, {3, 33}, 7), r2 = Tensor::allocate(DType::kFloat32, {3, 65});
  matmul_reference(a2, w, r2);
  y = run_node({"MatMul", 13, {}, {a2, w}, {false, true}, 1, {{0, Shape{2, 17, 33}}}});
  test::expect_close(y[0], r2, test::Tol{1e-4, 1e-4}, "matmul fallback");
}

// A whole model (Gemm with constant weights -> MatMul with constant weights -> Softmax) run from
// several threads at once: the pre-packed oneDNN primitives must be safe to share.
TEST(MatMul, PackedSessionRunsConcurrently) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("g");
  auto add_value = [](onnx::ValueInfoProto* v, const char* name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_value(g->add_input(), "x", {8, 64});
  add_value(g->add_output(), "y", {8, 24});
  auto add_init = [&](const char* name, std::vector<int64_t> dims, uint32_t seed) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    Tensor r = random_tensor(DType::kFloat32, dims, seed);
    for (int64_t i = 0; i < r.numel(); ++i) t->add_float_data(r.data_as<float>()[i]);
  };
  add_init("w1", {32, 64}, 1);  // Gemm with transB: [N, K]
  add_init("b1", {32}, 2);
  add_init("w2", {32, 24}, 3);
  auto add_node = [&](const char* op, std::vector<const char*> ins, const char* out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    for (const char* i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  };
  onnx::NodeProto* gemm = add_node("Gemm", {"x", "w1", "b1"}, "h");
  onnx::AttributeProto* tb = gemm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  add_node("MatMul", {"h", "w2"}, "z");
  add_node("Softmax", {"z"}, "y");
  std::string bytes = model.SerializeAsString();
  Session session(Model::load_from_bytes(bytes.data(), bytes.size()));
  Tensor x = random_tensor(DType::kFloat32, {8, 64}, 9);
  const Tensor expected = session.run({{"x", x}})[0];
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      bool all = true;
      for (int i = 0; i < 20; ++i) all &= compare_tensors(session.run({{"x", x}})[0], expected, 0, 0).ok;
      ok[t] = all;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
  // And the result is right: reference Gemm -> MatMul -> Softmax.
  Model loaded = Model::load_from_bytes(bytes.data(), bytes.size());
  const Graph& graph = loaded.impl()->graph;
  auto init = [&](const char* name) { return *graph.values[graph.find_value(name)].constant; };
  Tensor h = Tensor::allocate(DType::kFloat32, {8, 32}), z = Tensor::allocate(DType::kFloat32, {8, 24}),
         y = Tensor::allocate(DType::kFloat32, {8, 24});
  Tensor b1 = init("b1");
  gemm_reference(x, init("w1"), &b1, false, true, 1.f, 1.f, h);
  matmul_reference(h, init("w2"), z);
  softmax_reference(z, 8, 24, 1, false, y);
  test::expect_close(expected, y, test::Tol{1e-5, 1e-4}, "packed session");
}

TEST(MatMul, Errors) {
  Tensor a = random_tensor(DType::kFloat32, {2, 3}, 1), b = random_tensor(DType::kFloat32, {4, 5}, 2);
  expect_error_with([&] { run_node({"MatMul", 13, {}, {a, b}}); }, {"n0", "[2, 3]", "[4, 5]", "inner"});
  Tensor c = random_tensor(DType::kFloat32, {2, 3, 4}, 3), d = random_tensor(DType::kFloat32, {3, 4, 5}, 4);
  expect_error_with([&] { run_node({"MatMul", 13, {}, {c, d}}); }, {"n0", "broadcast", "[2, 3, 4]", "[3, 4, 5]"});
  Tensor s = Tensor::allocate(DType::kFloat32, {});
  expect_error_with([&] { run_node({"MatMul", 13, {}, {s, b}}); }, {"n0", "rank"});
}

TEST(Gemm, MatchesReference) {
  uint32_t seed = 81;
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32})
    for (int64_t M : {0, 1, 5, 16, 17})
      for (int64_t N : {1, 3, 16})
        for (int64_t K : {0, 1, 15, 17})
          for (int ta = 0; ta < 2; ++ta)
            for (int tb = 0; tb < 2; ++tb)
              for (int cs = 0; cs < 5; ++cs) {
                Tensor a = random_tensor(dt, ta ? Shape{K, M} : Shape{M, K}, seed++);
                Tensor b = random_tensor(dt, tb ? Shape{N, K} : Shape{K, N}, seed++);
                const Shape c_shapes[] = {{}, {N}, {M, 1}, {M, N}, {1, N}};
                Tensor c = random_tensor(dt, c_shapes[cs], seed++);
                const float alpha = dt == DType::kInt32 ? 2.f : 0.5f, beta = dt == DType::kInt32 ? 3.f : -1.5f;
                Tensor y = Tensor::allocate(dt, {M, N}), r = Tensor::allocate(dt, {M, N});
                gemm_optimized(a, b, &c, ta, tb, alpha, beta, y);
                gemm_reference(a, b, &c, ta, tb, alpha, beta, r);
                test::expect_close(
                    y, r, test::Tol{1e-4, 1e-4},
                    str_cat("gemm ", dtype_name(dt), " M", M, " N", N, " K", K, " ta", ta, " tb", tb, " c", cs));
                gemm_optimized(a, b, nullptr, ta, tb, alpha, 0.f, y);
                gemm_reference(a, b, nullptr, ta, tb, alpha, 0.f, r);
                test::expect_close(y, r, test::Tol{1e-4, 1e-4}, "gemm without C");
              }
}

TEST(Gemm, NodeWithConstantWeights) {
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (bool with_c : {false, true}) {
        Tensor a = random_tensor(DType::kFloat32, ta ? Shape{20, 9} : Shape{9, 20}, 1);
        Tensor b = random_tensor(DType::kFloat32, tb ? Shape{13, 20} : Shape{20, 13}, 2);
        Tensor c = random_tensor(DType::kFloat32, {13}, 3);
        std::map<std::string, Attribute> attrs = {
            {"transA", int_attr(ta)}, {"transB", int_attr(tb)}, {"beta", float_attr(0.5f)}};
        auto y = run_node({"Gemm", 13, attrs, {a, b, with_c ? c : Tensor()}, {false, true, true}});
        Tensor r = Tensor::allocate(DType::kFloat32, {9, 13});
        gemm_reference(a, b, with_c ? &c : nullptr, ta, tb, 1.f, 0.5f, r);
        test::expect_close(y[0], r, test::Tol{1e-4, 1e-4}, str_cat("packed gemm ta", ta, " tb", tb, " c", with_c));
      }
  Tensor a = random_tensor(DType::kFloat32, {3, 4}, 1), b = random_tensor(DType::kFloat32, {5, 6}, 2);
  expect_error_with([&] { run_node({"Gemm", 13, {}, {a, b}}); }, {"n0", "[3, 4]", "[5, 6]"});
  expect_error_with(
      [&] {
        run_node({"Gemm", 9, {}, {a, random_tensor(DType::kFloat32, {4, 6}, 2)}});
      },
      {"n0", "C is required"});
  expect_error_with(
      [&] {
        run_node({"Gemm",
                  13,
                  {},
                  {a, random_tensor(DType::kFloat32, {4, 6}, 2), random_tensor(DType::kFloat32, {2, 6}, 3)}});
      },
      {"n0", "[2, 6]", "broadcast"});
}

// ---------------------------------------------------------------- Einsum
TEST(Einsum, MatchesReference) {
  struct Case {
    std::string eq;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{15, 16}, {16, 17}}},
      {"bij,bjk->bik", {{3, 5, 4}, {3, 4, 2}}},
      {"bhqd,bhkd->bhqk", {{2, 3, 5, 4}, {2, 3, 6, 4}}},
      {"ki,kj->ij", {{16, 15}, {16, 17}}},
      {"bki,bjk->bij", {{3, 4, 5}, {3, 6, 4}}},
      {"bki,bkj->bij", {{3, 4, 1}, {3, 4, 6}}},
      {"ii->i", {{5, 5}}},
      {"ii", {{4, 4}}},
      {"iij->j", {{3, 3, 4}}},
      {"ij->", {{3, 7}}},
      {"ij->ji", {{3, 7}}},
      {"ij", {{3, 7}}},
      {"ba", {{3, 7}}},
      {"i,i", {{9}, {9}}},
      {"i,j->ij", {{4}, {5}}},
      {"i,j", {{4}, {5}}},
      {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}}},
      {"...ij,...jk", {{2, 3, 4}, {4, 2}}},
      {"ab...,b->a...", {{3, 4, 2, 2}, {4}}},
      {"...,...->...", {{2, 3}, {3}}},
      {"ijk,ikl,ilm->im", {{2, 3, 4}, {2, 4, 5}, {2, 5, 6}}},
      {"abc,cd->abd", {{2, 3, 4}, {4, 5}}},
      {"abc,cd->dba", {{2, 3, 4}, {4, 5}}},
      {"ij,ij->i", {{4, 6}, {4, 6}}},
      {"bii,bj->bij", {{2, 3, 3}, {2, 4}}},
      {"ij,kl->", {{2, 3}, {4, 5}}},
      {"ij,jk->ik", {{0, 3}, {3, 4}}},
      {"ij,jk->ik", {{2, 0}, {0, 4}}},
      {"Ab,ba->Aa", {{3, 2}, {2, 4}}},
      {"", {{}}},
      {",->", {{}, {}}},
      {" i j , j k -> i k ", {{2, 3}, {3, 2}}},
  };
  uint32_t seed = 91;
  for (const Case& c : cases)
    for (DType dt : {DType::kFloat32, DType::kInt64, DType::kFloat64}) {
      std::vector<Tensor> ins;
      std::vector<const Tensor*> ptrs;
      for (const Shape& s : c.shapes) ins.push_back(random_tensor(dt, s, seed++));
      for (const Tensor& t : ins) ptrs.push_back(&t);
      EinsumPlan plan = resolve_einsum(parse_einsum_equation(c.eq, "test"), c.shapes, "test");
      Tensor y = Tensor::allocate(dt, plan.output_shape), r = Tensor::allocate(dt, plan.output_shape);
      einsum_optimized(plan, ptrs, y);
      einsum_reference(plan, ptrs, r);
      test::expect_close(y, r, test::Tol{1e-4, 1e-4}, str_cat("einsum '", c.eq, "' ", dtype_name(dt)));
      // Through a node too.
      auto out = run_node({"Einsum", 12, {{"equation", string_attr(c.eq)}}, ins});
      test::expect_close(out[0], r, test::Tol{1e-4, 1e-4}, str_cat("einsum node '", c.eq, "'"));
    }
  // Implicit output order: ASCII (upper case first).
  EinsumPlan p = resolve_einsum(parse_einsum_equation("ba,aB", "t"), {{2, 3}, {3, 4}}, "t");
  EXPECT_EQ(p.output_shape, (Shape{4, 2}));
}

TEST(Einsum, Errors) {
  Tensor a = random_tensor(DType::kFloat32, {2, 3}, 1), b = random_tensor(DType::kFloat32, {4, 5}, 2);
  expect_error_with(
      [&] {
        run_node({"Einsum", 12, {{"equation", string_attr("ij,jk->ik")}}, {a, b}});
      },
      {"n0", "label 'j'", "size 3", "4"});
  expect_error_with([&] { run_node({"Einsum", 12, {{"equation", string_attr("ijk->i")}}, {a}}); }, {"n0", "[2, 3]"});
  expect_error_with([&] { run_node({"Einsum", 12, {{"equation", string_attr("ij->iz")}}, {a}}); }, {"n0", "'z'"});
  expect_error_with(
      [&] {
        run_node({"Einsum", 12, {{"equation", string_attr("ij,jk->ik")}}, {a}});
      },
      {"n0", "2 input terms"});
  expect_error_with(
      [&] {
        run_node({"Einsum", 12, {{"equation", string_attr("i.j")}}, {a}});
      },
      {"n0", "unexpected character"});
}

}  // namespace
