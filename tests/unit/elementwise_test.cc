// Elementwise family: the broadcasting engine against its naive reference on awkward shapes,
// per-element maths against std/double references, and the kernels' error paths through a
// one-node model.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "onnx/onnx_pb.h"
#include "ops/onnx/elementwise/binary.h"
#include "ops/onnx/elementwise/broadcast.h"
#include "ops/onnx/elementwise/broadcast_ref.h"
#include "ops/onnx/elementwise/unary.h"
#include "pointrt/pointrt.h"
#include "support/expect_error.h"

using namespace pointrt;
namespace bcast = pointrt::elementwise::bcast;
namespace bcast_ref = pointrt::elementwise::bcast_ref;

namespace {

// ---------------------------------------------------------------- random broadcast shapes

struct ShapePair {
  Shape a, b, out;
};

// Output rank 0..6 with sizes from the awkward set; each input drops a random number of leading
// dims and sets random dims to 1. Keeps outputs small enough for the naive reference.
ShapePair random_pair(std::mt19937& rng, int rank, bool allow_zero) {
  static const int64_t kSizes[] = {1, 2, 3, 5, 17, 63, 65};
  ShapePair p;
  for (;;) {
    p.out.clear();
    for (int d = 0; d < rank; ++d) {
      int64_t v = kSizes[rng() % 7];
      if (allow_zero && rng() % 9 == 0) v = 0;
      p.out.push_back(v);
    }
    if (shape_numel(p.out) <= 200000) break;
  }
  auto derive = [&](Shape& s) {
    size_t drop = rank ? rng() % (rank + 1) : 0;
    s.assign(p.out.begin() + drop, p.out.end());
    for (auto& v : s)
      if (rng() % 3 == 0) v = 1;
  };
  derive(p.a);
  derive(p.b);
  p.out = bcast::broadcast_shape(p.a, p.b, "test");
  return p;
}

template <typename T>
std::vector<T> random_values(std::mt19937& rng, int64_t n) {
  std::vector<T> v(static_cast<size_t>(n));
  std::uniform_int_distribution<int> dist(-50, 50);
  for (auto& x : v) x = static_cast<T>(dist(rng)) / (std::is_floating_point_v<T> ? T(4) : T(1));
  return v;
}

template <typename O, typename A, typename B, typename F>
void check_binary_against_reference(const ShapePair& p, std::mt19937& rng, F f) {
  auto a = random_values<A>(rng, shape_numel(p.a));
  auto b = random_values<B>(rng, shape_numel(p.b));
  const int64_t n = shape_numel(p.out);
  std::vector<O> fast(static_cast<size_t>(n) + 1, O(77)), ref(static_cast<size_t>(n) + 1, O(77));
  bcast::binary(a.data(), p.a, b.data(), p.b, fast.data(), p.out, f);
  bcast_ref::binary(a.data(), p.a, b.data(), p.b, ref.data(), p.out, f);
  for (int64_t i = 0; i <= n; ++i)  // element n is a guard: nothing may write past the end
    ASSERT_EQ(fast[i], ref[i]) << "a " << shape_to_string(p.a) << " b " << shape_to_string(p.b) << " at " << i;
}

// ---------------------------------------------------------------- one-node models

struct In {
  std::string name;
  DType dtype;
};

std::string one_node_model(const std::string& op, int opset, const std::vector<In>& ins, const std::vector<In>& outs,
                           const std::function<void(onnx::NodeProto&)>& attrs = {}) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name("node0");
  for (const auto& i : ins) {
    n->add_input(i.name);
    if (i.name.empty()) continue;
    auto* vi = g->add_input();
    vi->set_name(i.name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(i.dtype));
  }
  for (const auto& o : outs) {
    n->add_output(o.name);
    auto* vi = g->add_output();
    vi->set_name(o.name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(o.dtype));
  }
  if (attrs) attrs(*n);
  return m.SerializeAsString();
}

template <typename T>
Tensor make_tensor(Shape shape, std::vector<T> values) {
  Tensor t = Tensor::allocate(DTypeOf<T>::value, shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numel());
  std::copy(values.begin(), values.end(), t.data_as<T>());
  return t;
}

std::vector<Tensor> run_model(const std::string& bytes, const std::map<std::string, Tensor>& feeds) {
  Model model = Model::load_from_bytes(bytes.data(), bytes.size());
  SessionOptions opt;
  opt.optimize = false;
  Session s(model, opt);
  return s.run(feeds);
}

std::string error_of(const std::function<void()>& f) { return test::error_text(f); }

}  // namespace

// ================================================================ engine

TEST(ElementwiseBroadcast, ShapeRules) {
  EXPECT_EQ(bcast::broadcast_shape({2, 3, 4, 5}, {1, 3, 1, 1}, "t"), (Shape{2, 3, 4, 5}));
  EXPECT_EQ(bcast::broadcast_shape({}, {4, 1}, "t"), (Shape{4, 1}));
  EXPECT_EQ(bcast::broadcast_shape({5, 1, 7}, {3, 1}, "t"), (Shape{5, 3, 7}));
  EXPECT_EQ(bcast::broadcast_shape({0, 1}, {1, 9}, "t"), (Shape{0, 9}));
  EXPECT_EQ(bcast::broadcast_shape({1}, {0}, "t"), (Shape{0}));
}

TEST(ElementwiseBroadcast, IncompatibleShapesAreNamed) {
  std::string msg = error_of([] { bcast::broadcast_shape({2, 3}, {4}, "node 'x' (Add)"); });
  EXPECT_NE(msg.find("node 'x' (Add)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3 vs 4"), std::string::npos) << msg;
  // 0 does not broadcast against 2.
  EXPECT_NE(error_of([] { bcast::broadcast_shape({0}, {2}, "t"); }), "<no error>");
}

TEST(ElementwiseBroadcast, PlanCollapsesDimensions) {
  {  // channel bias: [N,C,H,W] + [1,C,1,1] -> [N, C, H*W]
    Shape o{2, 3, 4, 5}, a{2, 3, 4, 5}, b{1, 3, 1, 1};
    bcast::BroadcastPlan<2> p(o, {&a, &b});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{2, 3, 20}));
    EXPECT_EQ(p.strides[0], (std::vector<int64_t>{60, 20, 1}));
    EXPECT_EQ(p.strides[1], (std::vector<int64_t>{0, 1, 0}));
  }
  {  // same shape: one flat dimension
    Shape o{2, 3, 4}, a{2, 3, 4};
    bcast::BroadcastPlan<2> p(o, {&a, &a});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{24}));
  }
  {  // row broadcast [M, N] + [N], with size-1 dims in the middle dropped
    Shape o{7, 1, 9}, a{7, 1, 9}, b{9};
    bcast::BroadcastPlan<2> p(o, {&a, &b});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{7, 9}));
    EXPECT_EQ(p.strides[1], (std::vector<int64_t>{0, 1}));
  }
  {  // scalar output
    Shape o{}, a{};
    bcast::BroadcastPlan<2> p(o, {&a, &a});
    EXPECT_EQ(p.dims, (std::vector<int64_t>{1}));
  }
}

TEST(ElementwiseBroadcast, RandomShapesMatchReference) {
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = iter % 7;
    ShapePair p = random_pair(rng, rank, iter % 5 == 0);
    check_binary_against_reference<float, float, float>(p, rng, [](float x, float y) { return x * 3.0f - y; });
    check_binary_against_reference<int64_t, int64_t, int64_t>(p, rng,
                                                              [](int64_t x, int64_t y) { return x * 1000 + y; });
    check_binary_against_reference<uint8_t, int32_t, int32_t>(p, rng, [](int32_t x, int32_t y) { return x < y; });
    check_binary_against_reference<double, double, int8_t>(p, rng, [](double x, int8_t y) { return x + 0.5 * y; });
  }
}

TEST(ElementwiseBroadcast, SpecialPatternsMatchReference) {
  std::mt19937 rng(7);
  const std::vector<ShapePair> cases = {
      {{2, 17, 9, 13}, {1, 17, 1, 1}, {}},  // channel bias
      {{2, 17, 9, 13}, {17, 1, 1}, {}},
      {{2, 17, 9, 13}, {2, 17, 1, 1}, {}},  // per (n, c) scalar
      {{1, 17, 1, 1}, {2, 17, 9, 13}, {}},  // bias on the left
      {{63, 65}, {65}, {}},                 // row broadcast
      {{63, 1}, {1, 65}, {}},               // outer product
      {{}, {5, 17}, {}},                    // scalar - tensor
      {{5, 17}, {1}, {}},
      {{}, {}, {}},                                  // rank 0
      {{0, 3}, {1, 3}, {}},                          // empty
      {{3, 1, 5, 1, 7, 1}, {1, 4, 1, 6, 1, 2}, {}},  // alternating, rank 6
  };
  for (auto p : cases) {
    p.out = bcast::broadcast_shape(p.a, p.b, "t");
    check_binary_against_reference<float, float, float>(p, rng, [](float x, float y) { return x + 2.0f * y; });
  }
}

TEST(ElementwiseBroadcast, ThreadedRangesMatchReference) {
  // Large enough to split across threads; odd sizes make ranges start and end inside rows.
  std::mt19937 rng(99);
  const std::vector<ShapePair> cases = {
      {{3, 65, 33, 17}, {1, 65, 1, 1}, {}},
      {{3, 65, 33, 17}, {3, 65, 33, 17}, {}},
      {{3, 65, 33, 17}, {}, {}},
      {{257, 263}, {263}, {}},
      {{257, 1, 3}, {1, 263, 1}, {}},
  };
  for (auto p : cases) {
    p.out = bcast::broadcast_shape(p.a, p.b, "t");
    check_binary_against_reference<float, float, float>(p, rng, [](float x, float y) { return x - y; });
  }
}

TEST(ElementwiseBroadcast, TernaryMatchesReference) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = iter % 7;
    ShapePair p1 = random_pair(rng, rank, iter % 6 == 0);
    Shape c = p1.out;
    for (auto& v : c)
      if (rng() % 2) v = 1;
    if (!c.empty() && rng() % 2) c.erase(c.begin());
    const Shape out = bcast::broadcast_shape({&c, &p1.a, &p1.b}, "t");
    std::vector<uint8_t> cond(static_cast<size_t>(shape_numel(c)));
    for (auto& v : cond) v = rng() % 2;
    auto x = random_values<float>(rng, shape_numel(p1.a));
    auto y = random_values<float>(rng, shape_numel(p1.b));
    std::vector<float> fast(static_cast<size_t>(shape_numel(out))), ref(fast.size());
    auto f = [](uint8_t k, float p, float q) { return k ? p : q; };
    bcast::ternary(cond.data(), c, x.data(), p1.a, y.data(), p1.b, fast.data(), out, f);
    bcast_ref::ternary(cond.data(), c, x.data(), p1.a, y.data(), p1.b, ref.data(), out, f);
    ASSERT_EQ(fast, ref) << shape_to_string(c) << " " << shape_to_string(p1.a) << " " << shape_to_string(p1.b);
  }
}

// ================================================================ per-element maths

TEST(ElementwiseMath, FastExpIsAccurate) {
  for (double x = -110; x <= 100; x += 0.00737) {
    const float xf = static_cast<float>(x);
    const double ref = std::exp(static_cast<double>(xf));
    const float got = elementwise::fast_exp(xf);
    if (ref > std::numeric_limits<float>::max()) {
      EXPECT_TRUE(std::isinf(got)) << xf;
    } else if (ref < 1.1754944e-38) {  // subnormal results: absolute accuracy
      EXPECT_NEAR(got, ref, 1e-44) << xf;
    } else {
      EXPECT_NEAR(got / ref, 1.0, 3e-7) << xf;
    }
  }
  EXPECT_TRUE(std::isnan(elementwise::fast_exp(NAN)));
  EXPECT_EQ(elementwise::fast_exp(INFINITY), INFINITY);
  EXPECT_EQ(elementwise::fast_exp(-INFINITY), 0.0f);
  EXPECT_EQ(elementwise::fast_exp(0.0f), 1.0f);
}

TEST(ElementwiseMath, UnaryEdgeCases) {
  elementwise::UnaryParams p;
  using elementwise::UnaryOp;
  EXPECT_EQ(elementwise::unary_apply<UnaryOp::kRound>(2.5f, p), 2.0f);  // half to even
  EXPECT_EQ(elementwise::unary_apply<UnaryOp::kRound>(-1.5f, p), -2.0f);
  EXPECT_EQ(elementwise::unary_apply<UnaryOp::kRound>(0.5f, p), 0.0f);
  EXPECT_EQ(elementwise::unary_apply<UnaryOp::kAbs>(std::numeric_limits<int32_t>::min(), p),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ(elementwise::unary_apply<UnaryOp::kNeg>(int8_t(-128), p), int8_t(-128));
  EXPECT_EQ(elementwise::unary_apply<UnaryOp::kSign>(uint8_t(7), p), uint8_t(1));
  EXPECT_TRUE(std::isnan(elementwise::unary_apply<UnaryOp::kRelu>(NAN, p)));
  EXPECT_EQ(elementwise::unary_apply<UnaryOp::kSigmoid>(-200.0f, p), 0.0f);
  EXPECT_EQ(elementwise::unary_apply<UnaryOp::kSigmoid>(200.0f, p), 1.0f);
  EXPECT_NEAR(elementwise::unary_apply<UnaryOp::kSoftplus>(100.0, p), 100.0, 1e-12);  // no overflow
  EXPECT_NEAR(elementwise::unary_apply<UnaryOp::kSoftplus>(-100.0, p), std::exp(-100.0), 1e-50);
  for (float x = -30; x <= 30; x += 0.173f) {
    const double ref = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
    EXPECT_NEAR(elementwise::unary_apply<UnaryOp::kSigmoid>(x, p), ref, 1e-6 * ref + 1e-30) << x;
  }
}

TEST(ElementwiseMath, IntegerRules) {
  EXPECT_EQ(elementwise::mod_floor<int32_t>(-7, 3), 2);  // Python: sign of the divisor
  EXPECT_EQ(elementwise::mod_floor<int32_t>(7, -3), -2);
  EXPECT_EQ(elementwise::mod_trunc<int32_t>(-7, 3), -1);  // C: sign of the dividend
  EXPECT_EQ(elementwise::mod_floor<int64_t>(std::numeric_limits<int64_t>::min(), -1), 0);
  EXPECT_DOUBLE_EQ(elementwise::mod_floor<double>(-7.5, 2.0), 0.5);
  EXPECT_EQ((elementwise::binary_apply<elementwise::BinaryOp::kDiv, int32_t>(std::numeric_limits<int32_t>::min(), -1)),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ((elementwise::binary_apply<elementwise::BinaryOp::kDiv, int32_t>(-7, 2)), -3);  // truncation
  EXPECT_EQ((elementwise::binary_apply<elementwise::BinaryOp::kAdd, int32_t>(std::numeric_limits<int32_t>::max(), 1)),
            std::numeric_limits<int32_t>::min());
  EXPECT_EQ((elementwise::pow_apply<int64_t, int64_t>(3, 5)), 243);
  EXPECT_EQ((elementwise::pow_apply<int32_t, int32_t>(2, -1)), 0);
  EXPECT_EQ((elementwise::pow_apply<int32_t, int32_t>(-1, -3)), -1);
  EXPECT_EQ((elementwise::pow_apply<int32_t, float>(2, 0.5f)), 1);
  EXPECT_EQ(elementwise::convert<int32_t>(NAN), 0);
  EXPECT_EQ(elementwise::convert<int32_t>(1e20f), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(elementwise::convert<int8_t>(-2.9), -2);
  EXPECT_EQ(elementwise::convert<uint8_t>(-5.0f), 0);
  EXPECT_EQ(elementwise::convert<int64_t>(9.3e18), std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(elementwise::convert<bool>(NAN));
  EXPECT_TRUE(std::isnan(elementwise::max_nan(1.0f, NAN)));
  EXPECT_TRUE(std::isnan(elementwise::min_nan(NAN, 1.0f)));
}

// ================================================================ kernels through a session

TEST(ElementwiseKernels, AddBroadcastsAndNamesBadShapes) {
  auto bytes = one_node_model("Add", 14, {{"a", DType::kFloat32}, {"b", DType::kFloat32}}, {{"y", DType::kFloat32}});
  auto out = run_model(
      bytes, {{"a", make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", make_tensor<float>({3}, {10, 20, 30})}});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + 6),
            (std::vector<float>{11, 22, 33, 14, 25, 36}));
  std::string msg = error_of([&] {
    run_model(bytes, {{"a", make_tensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})}, {"b", make_tensor<float>({2}, {1, 2})}});
  });
  EXPECT_NE(msg.find("node0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2]"), std::string::npos) << msg;
}

TEST(ElementwiseKernels, MismatchedTypesAreAnError) {
  auto bytes = one_node_model("Mul", 14, {{"a", DType::kFloat32}, {"b", DType::kInt32}}, {{"y", DType::kFloat32}});
  std::string msg = error_of([&] {
    run_model(bytes, {{"a", make_tensor<float>({1}, {1})}, {"b", make_tensor<int32_t>({1}, {2})}});
  });
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
}

TEST(ElementwiseKernels, IntegerDivisionByZeroIsAnError) {
  for (const char* op : {"Div", "Mod"}) {
    auto bytes = one_node_model(op, 14, {{"a", DType::kInt32}, {"b", DType::kInt32}}, {{"y", DType::kInt32}});
    std::string msg = error_of([&] {
      run_model(bytes, {{"a", make_tensor<int32_t>({3}, {1, 2, 3})}, {"b", make_tensor<int32_t>({3}, {1, 0, 1})}});
    });
    EXPECT_NE(msg.find("division by zero"), std::string::npos) << op << ": " << msg;
    EXPECT_NE(msg.find("index 1"), std::string::npos) << op << ": " << msg;
  }
  // Float division by zero is IEEE: inf.
  auto bytes = one_node_model("Div", 14, {{"a", DType::kFloat32}, {"b", DType::kFloat32}}, {{"y", DType::kFloat32}});
  auto out = run_model(bytes, {{"a", make_tensor<float>({1}, {1})}, {"b", make_tensor<float>({1}, {0})}});
  EXPECT_TRUE(std::isinf(out[0].data_as<float>()[0]));
}

TEST(ElementwiseKernels, ModFollowsFmodAttribute) {
  auto python = one_node_model("Mod", 13, {{"a", DType::kInt64}, {"b", DType::kInt64}}, {{"y", DType::kInt64}});
  auto out = run_model(
      python, {{"a", make_tensor<int64_t>({4}, {-7, 7, -7, 7})}, {"b", make_tensor<int64_t>({4}, {3, 3, -3, -3})}});
  EXPECT_EQ(std::vector<int64_t>(out[0].data_as<int64_t>(), out[0].data_as<int64_t>() + 4),
            (std::vector<int64_t>{2, 1, -1, -2}));
  auto c = one_node_model("Mod", 13, {{"a", DType::kInt64}, {"b", DType::kInt64}}, {{"y", DType::kInt64}},
                          [](onnx::NodeProto& n) {
                            auto* a = n.add_attribute();
                            a->set_name("fmod");
                            a->set_type(onnx::AttributeProto::INT);
                            a->set_i(1);
                          });
  out = run_model(c,
                  {{"a", make_tensor<int64_t>({4}, {-7, 7, -7, 7})}, {"b", make_tensor<int64_t>({4}, {3, 3, -3, -3})}});
  EXPECT_EQ(std::vector<int64_t>(out[0].data_as<int64_t>(), out[0].data_as<int64_t>() + 4),
            (std::vector<int64_t>{-1, 1, -1, 1}));
}

TEST(ElementwiseKernels, PowMixedTypesAndSquareFastPath) {
  auto bytes = one_node_model("Pow", 15, {{"x", DType::kFloat32}, {"e", DType::kInt64}}, {{"y", DType::kFloat32}});
  auto out = run_model(bytes, {{"x", make_tensor<float>({3}, {1.5f, -2, 3})}, {"e", make_tensor<int64_t>({}, {2})}});
  EXPECT_EQ(std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + 3),
            (std::vector<float>{2.25f, 4, 9}));
  out = run_model(bytes, {{"x", make_tensor<float>({}, {2})}, {"e", make_tensor<int64_t>({3}, {-1, 0, 3})}});
  EXPECT_EQ(std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + 3), (std::vector<float>{0.5f, 1, 8}));
  // Before opset 12 the exponent must have the base's type.
  auto old = one_node_model("Pow", 7, {{"x", DType::kFloat32}, {"e", DType::kInt64}}, {{"y", DType::kFloat32}});
  EXPECT_NE(error_of([&] {
              run_model(old, {{"x", make_tensor<float>({1}, {2})}, {"e", make_tensor<int64_t>({1}, {2})}});
            }),
            "<no error>");
}

TEST(ElementwiseKernels, VariadicAndWhere) {
  auto sum = one_node_model("Sum", 13, {{"a", DType::kFloat32}, {"b", DType::kFloat32}, {"c", DType::kFloat32}},
                            {{"y", DType::kFloat32}});
  auto out = run_model(sum, {{"a", make_tensor<float>({2, 1}, {1, 2})},
                             {"b", make_tensor<float>({3}, {10, 20, 30})},
                             {"c", make_tensor<float>({}, {100})}});
  ASSERT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + 6),
            (std::vector<float>{111, 121, 131, 112, 122, 132}));
  auto mean = one_node_model("Mean", 13, {{"a", DType::kFloat64}, {"b", DType::kFloat64}}, {{"y", DType::kFloat64}});
  out = run_model(mean, {{"a", make_tensor<double>({2}, {1, 2})}, {"b", make_tensor<double>({2}, {3, 5})}});
  EXPECT_EQ(out[0].data_as<double>()[1], 3.5);
  auto where = one_node_model("Where", 16, {{"c", DType::kBool}, {"x", DType::kInt64}, {"y", DType::kInt64}},
                              {{"o", DType::kInt64}});
  out = run_model(where, {{"c", make_tensor<bool>({2, 1}, {true, false})},
                          {"x", make_tensor<int64_t>({2}, {1, 2})},
                          {"y", make_tensor<int64_t>({}, {9})}});
  EXPECT_EQ(std::vector<int64_t>(out[0].data_as<int64_t>(), out[0].data_as<int64_t>() + 4),
            (std::vector<int64_t>{1, 2, 9, 9}));
  std::string msg = error_of([&] {
    run_model(where, {{"c", make_tensor<bool>({3}, {true, false, true})},
                      {"x", make_tensor<int64_t>({2}, {1, 2})},
                      {"y", make_tensor<int64_t>({}, {9})}});
  });
  EXPECT_NE(msg.find("condition"), std::string::npos) << msg;
}

TEST(ElementwiseKernels, ClipAttributeAndInputForms) {
  auto old = one_node_model("Clip", 6, {{"x", DType::kFloat32}}, {{"y", DType::kFloat32}}, [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("min");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(-1);
  });
  auto out = run_model(old, {{"x", make_tensor<float>({3}, {-5, 0.5f, 7})}});
  EXPECT_EQ(std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + 3),
            (std::vector<float>{-1, 0.5f, 7}));
  auto now = one_node_model("Clip", 13, {{"x", DType::kInt8}, {"", DType::kInt8}, {"hi", DType::kInt8}},
                            {{"y", DType::kInt8}});
  out = run_model(now, {{"x", make_tensor<int8_t>({3}, {-128, 5, 127})}, {"hi", make_tensor<int8_t>({}, {4})}});
  EXPECT_EQ(std::vector<int8_t>(out[0].data_as<int8_t>(), out[0].data_as<int8_t>() + 3),
            (std::vector<int8_t>{-128, 4, 4}));
  std::string msg = error_of([&] {
    run_model(now, {{"x", make_tensor<int8_t>({1}, {1})}, {"hi", make_tensor<int8_t>({2}, {4, 5})}});
  });
  EXPECT_NE(msg.find("scalar"), std::string::npos) << msg;
}

TEST(ElementwiseKernels, PReluSlopeBroadcastsOneWay) {
  auto bytes = one_node_model("PRelu", 16, {{"x", DType::kFloat32}, {"s", DType::kFloat32}}, {{"y", DType::kFloat32}});
  auto out = run_model(
      bytes, {{"x", make_tensor<float>({2, 2}, {-1, 2, -3, 4})}, {"s", make_tensor<float>({2}, {0.5f, 0.25f})}});
  EXPECT_EQ(std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + 4),
            (std::vector<float>{-0.5f, 2, -1.5f, 4}));
  std::string msg = error_of([&] {
    run_model(bytes, {{"x", make_tensor<float>({2}, {-1, 2})}, {"s", make_tensor<float>({2, 2}, {1, 1, 1, 1})}});
  });
  EXPECT_NE(msg.find("slope"), std::string::npos) << msg;
}

TEST(ElementwiseKernels, CastConversions) {
  auto to_int = one_node_model("Cast", 13, {{"x", DType::kFloat32}}, {{"y", DType::kInt32}}, [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(static_cast<int>(DType::kInt32));
  });
  auto out = run_model(to_int, {{"x", make_tensor<float>({4}, {-2.7f, 2.7f, NAN, 1e30f})}});
  EXPECT_EQ(std::vector<int32_t>(out[0].data_as<int32_t>(), out[0].data_as<int32_t>() + 4),
            (std::vector<int32_t>{-2, 2, 0, std::numeric_limits<int32_t>::max()}));
  auto to_half = one_node_model("Cast", 13, {{"x", DType::kInt64}}, {{"y", DType::kFloat16}}, [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(static_cast<int>(DType::kFloat16));
  });
  out = run_model(to_half, {{"x", make_tensor<int64_t>({2}, {3, -1})}});
  EXPECT_EQ(out[0].data_as<uint16_t>()[0], 0x4200u);
  EXPECT_EQ(out[0].data_as<uint16_t>()[1], 0xbc00u);
  auto to_int4 = one_node_model("Cast", 13, {{"x", DType::kFloat32}}, {{"y", DType::kFloat32}}, [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(22);  // INT4 exists from opset 21 only
  });
  EXPECT_NE(error_of([&] {
              run_model(to_int4, {{"x", make_tensor<float>({1}, {1})}});
            }).find("not supported"),
            std::string::npos);
}

TEST(ElementwiseKernels, CastFloatToIntegersMatchesScalarConversionOnEverySize) {
  // float32 -> int64 / int32 (a vector kernel where AVX-512DQ is there) against the scalar
  // convert<>: NaN 0, out of range clamped, truncation toward zero; sizes around the 16-lane
  // blocks and past the threads' split (2^16).
  const float specials[] = {NAN,           -NAN,  INFINITY, -INFINITY,    0.f,           -0.f,
                            0.5f,          -0.5f, -1.5f,    2.9f,         9.2233720e18f, -9.2233720e18f,
                            9.2233715e18f, 1e19f, -1e19f,   2147483648.f, 2147483520.f,  -2147483648.f,
                            -2147483904.f, 3e9f,  -3e9f,    1e-40f};
  std::mt19937 rng(3);
  for (DType to : {DType::kInt64, DType::kInt32}) {
    auto model = one_node_model("Cast", 13, {{"x", DType::kFloat32}}, {{"y", to}}, [to](onnx::NodeProto& n) {
      auto* a = n.add_attribute();
      a->set_name("to");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(static_cast<int>(to));
    });
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(15), int64_t(16), int64_t(17), int64_t(100), int64_t(70001)}) {
      std::vector<float> v(static_cast<size_t>(n));
      std::uniform_real_distribution<float> u(-3e9f, 3e9f);
      for (int64_t i = 0; i < n; ++i) v[i] = rng() % 3 == 0 ? specials[rng() % std::size(specials)] : u(rng);
      auto out = run_model(model, {{"x", make_tensor<float>({n}, v)}});
      ASSERT_EQ(out[0].dtype(), to);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t got = to == DType::kInt64 ? out[0].data_as<int64_t>()[i] : out[0].data_as<int32_t>()[i];
        const int64_t want =
            to == DType::kInt64 ? elementwise::convert<int64_t>(v[i]) : elementwise::convert<int32_t>(v[i]);
        ASSERT_EQ(got, want) << "n " << n << " at " << i << " value " << v[i] << " to " << dtype_name(to);
      }
    }
  }
}

TEST(ElementwiseKernels, IdentityAndDropoutAliasTheInput) {
  Tensor x = make_tensor<float>({3}, {1, 2, 3});
  auto id = one_node_model("Identity", 16, {{"x", DType::kFloat32}}, {{"y", DType::kFloat32}});
  auto out = run_model(id, {{"x", x}});
  EXPECT_EQ(out[0].data(), x.data());
  auto drop = one_node_model("Dropout", 13, {{"x", DType::kFloat32}, {"r", DType::kFloat32}, {"t", DType::kBool}},
                             {{"y", DType::kFloat32}, {"m", DType::kBool}});
  out = run_model(drop, {{"x", x}, {"r", make_tensor<float>({}, {0.3f})}, {"t", make_tensor<bool>({}, {false})}});
  EXPECT_EQ(out[0].data(), x.data());
  EXPECT_EQ(out[1].dtype(), DType::kBool);
  EXPECT_TRUE(out[1].data_as<bool>()[0] && out[1].data_as<bool>()[2]);
  // Training mode: kept elements are scaled by 1 / (1 - ratio), and the mask says which.
  out = run_model(drop, {{"x", x}, {"r", make_tensor<float>({}, {0.3f})}, {"t", make_tensor<bool>({}, {true})}});
  for (int i = 0; i < 3; ++i) {
    float expected = out[1].data_as<bool>()[i] ? x.data_as<float>()[i] / 0.7f : 0.f;
    EXPECT_NEAR(out[0].data_as<float>()[i], expected, 1e-6f);
  }
  std::string msg = error_of([&] {
    run_model(drop, {{"x", x}, {"r", make_tensor<float>({}, {1.0f})}, {"t", make_tensor<bool>({}, {true})}});
  });
  EXPECT_NE(msg.find("ratio must be in [0, 1)"), std::string::npos) << msg;
  out = run_model(drop, {{"x", x}, {"r", make_tensor<float>({}, {0.0f})}, {"t", make_tensor<bool>({}, {true})}});
  EXPECT_EQ(out[0].data_as<float>()[1], 2.0f);
}

TEST(ElementwiseKernels, Float16IsComputedInFloat) {
  auto bytes = one_node_model("Add", 14, {{"a", DType::kFloat16}, {"b", DType::kFloat16}}, {{"y", DType::kFloat16}});
  Tensor a = Tensor::allocate(DType::kFloat16, {2}), b = Tensor::allocate(DType::kFloat16, {});
  a.data_as<uint16_t>()[0] = float_to_half(1.5f);
  a.data_as<uint16_t>()[1] = float_to_half(-4.0f);
  b.data_as<uint16_t>()[0] = float_to_half(0.25f);
  auto out = run_model(bytes, {{"a", a}, {"b", b}});
  EXPECT_EQ(half_to_float(out[0].data_as<uint16_t>()[0]), 1.75f);
  EXPECT_EQ(half_to_float(out[0].data_as<uint16_t>()[1]), -3.75f);
}

TEST(ElementwiseKernels, SigmoidExpTanhBlockPathsMatchDouble) {
  // Odd length above the threading threshold: blocks of 256 end mid-range on every thread.
  const int64_t n = 70001;
  std::vector<float> xs(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xs[i] = -120.0f + 240.0f * static_cast<float>(i) / static_cast<float>(n - 1);
  xs[5] = NAN;
  xs[6] = INFINITY;
  xs[7] = -INFINITY;
  for (int i = 0; i < 2000; ++i) xs[8 + i] = (i - 1000) * 1e-3f;  // around 0 (tanh's polynomial branch)
  xs[3000] = 1e-30f;
  xs[3001] = -0.0f;
  for (const char* op : {"Sigmoid", "Exp", "Tanh"}) {
    auto bytes = one_node_model(op, 13, {{"x", DType::kFloat32}}, {{"y", DType::kFloat32}});
    auto out = run_model(bytes, {{"x", make_tensor<float>({n}, xs)}});
    const float* y = out[0].data_as<float>();
    const bool sig = std::string(op) == "Sigmoid", tanh_op = std::string(op) == "Tanh";
    for (int64_t i = 0; i < n; ++i) {
      const double x = xs[i];
      const double ref = tanh_op ? std::tanh(x) : sig ? 1.0 / (1.0 + std::exp(-x)) : std::exp(x);
      if (std::isnan(x)) {
        ASSERT_TRUE(std::isnan(y[i])) << op;
      } else if (ref > std::numeric_limits<float>::max()) {
        ASSERT_TRUE(std::isinf(y[i])) << op << " " << x;
      } else {
        // Sigmoid below x = -88.7 returns 0 where the true value is subnormal (< 1.2e-38).
        ASSERT_NEAR(y[i], ref, 4e-7 * std::fabs(ref) + (sig ? 1.2e-38 : 1e-44)) << op << " at x = " << x;
      }
    }
  }
}

// Every binary kernel x every element type on random broadcast shapes, against the naive
// reference applying the same per-element rule.
namespace {
template <typename T>
void check_kernel_dtype(const char* op, std::mt19937& rng) {
  using elementwise::BinaryOp;
  const std::string name = op;
  for (int iter = 0; iter < 12; ++iter) {
    ShapePair p = random_pair(rng, iter % 5, iter % 4 == 0);
    auto a = random_values<T>(rng, shape_numel(p.a));
    auto b = random_values<T>(rng, shape_numel(p.b));
    for (auto& v : b)
      if (v == T(0)) v = T(3);  // integer division by zero is tested elsewhere
    const DType dt = DTypeOf<T>::value;
    const bool cmp = name == "Equal" || name == "Less";
    auto bytes = one_node_model(op, 14, {{"a", dt}, {"b", dt}}, {{"y", cmp ? DType::kBool : dt}});
    const std::vector<Tensor> out = run_model(bytes, {{"a", make_tensor<T>(p.a, a)}, {"b", make_tensor<T>(p.b, b)}});
    const Tensor& y = out[0];
    ASSERT_EQ(y.shape(), p.out) << op;
    const int64_t n = shape_numel(p.out);
    if (cmp) {
      std::vector<uint8_t> ref(static_cast<size_t>(n));
      if (name == "Equal")
        bcast_ref::binary(a.data(), p.a, b.data(), p.b, ref.data(), p.out, [](T x, T y) { return x == y; });
      else
        bcast_ref::binary(a.data(), p.a, b.data(), p.b, ref.data(), p.out, [](T x, T y) { return x < y; });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(static_cast<const uint8_t*>(y.data())[i], ref[i]) << op << " " << dtype_name(dt);
      continue;
    }
    std::vector<T> ref(static_cast<size_t>(n));
    auto f = [&](T x, T y) -> T {
      if (name == "Add") return elementwise::binary_apply<BinaryOp::kAdd>(x, y);
      if (name == "Sub") return elementwise::binary_apply<BinaryOp::kSub>(x, y);
      if (name == "Mul") return elementwise::binary_apply<BinaryOp::kMul>(x, y);
      if (name == "Div") return elementwise::binary_apply<BinaryOp::kDiv>(x, y);
      if (name == "Mod") return elementwise::mod_floor(x, y);
      if (name == "Max") return elementwise::max_nan(x, y);
      return elementwise::min_nan(x, y);
    };
    bcast_ref::binary(a.data(), p.a, b.data(), p.b, ref.data(), p.out, f);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(static_cast<const T*>(y.data())[i], ref[i]) << op << " " << dtype_name(dt) << " at " << i;
  }
}
}  // namespace

TEST(ElementwiseKernels, BinaryKernelsMatchReferenceForEveryType) {
  std::mt19937 rng(2024);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Equal", "Less"}) {
    check_kernel_dtype<float>(op, rng);
    check_kernel_dtype<double>(op, rng);
    check_kernel_dtype<int8_t>(op, rng);
    check_kernel_dtype<int16_t>(op, rng);
    check_kernel_dtype<int32_t>(op, rng);
    check_kernel_dtype<int64_t>(op, rng);
    check_kernel_dtype<uint8_t>(op, rng);
    check_kernel_dtype<uint16_t>(op, rng);
    check_kernel_dtype<uint32_t>(op, rng);
    check_kernel_dtype<uint64_t>(op, rng);
  }
}
