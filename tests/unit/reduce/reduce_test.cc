// Reduce*: the optimised reductions against the reference over every axis subset of awkward shapes
// and every element type, the large-shape paths, accuracy, empty sets, node forms and errors.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>

#include "ops/onnx/reduce/reduce.h"
#include "ops/onnx/reduce/reduce_common.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

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

// Last-axis rows around the float-lane paths' edges (64 lanes for rows up to 1024, double lanes
// past it) and around vector widths, with an offset (values near 100) so lane sums are large.
TEST(Reduce, LastAxisRowsAroundLaneWidths) {
  for (int64_t R : {31, 32, 33, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025})
    for (int64_t outer : {1, 3, 130}) {
      Tensor x = random_tensor(DType::kFloat32, {outer, R}, static_cast<uint32_t>(R * 7 + outer));
      for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] += 100.f;
      for (ReduceKind k : {ReduceKind::kSum, ReduceKind::kMean, ReduceKind::kSumSquare, ReduceKind::kL1,
                           ReduceKind::kL2, ReduceKind::kMax})
        check_reduce(k, x, {false, true}, str_cat("rows ", outer, "x", R, " kind ", int(k)));
    }
}

TEST(Reduce, LastAxisMaxMinFindANaNAnywhere) {
  // Rows reduced in blocks of 64 (two vectors share one unordered compare), then 16 at a time
  // with a masked tail: a single NaN at each kind of position gives NaN; +-inf rows stay exact.
  for (int64_t R : {1, 15, 16, 17, 63, 64, 65, 100, 256, 1000, 5000})
    for (int64_t at : {int64_t(0), int64_t(17), int64_t(33), int64_t(50), R / 2, R - 1}) {
      if (at >= R) continue;
      Tensor x = random_tensor(DType::kFloat32, {2, R}, static_cast<uint32_t>(R + at));
      x.data_as<float>()[at] = NAN;
      x.data_as<float>()[R + at] = at % 2 ? INFINITY : -INFINITY;
      for (ReduceKind k : {ReduceKind::kMax, ReduceKind::kMin}) {
        Tensor y = Tensor::allocate(DType::kFloat32, {2, 1});
        reduce_optimized(k, x, {false, true}, y);
        EXPECT_TRUE(std::isnan(y.data_as<float>()[0])) << "R " << R << " NaN at " << at;
        check_reduce(k, x, {false, true}, str_cat("R ", R, " NaN and inf at ", at, " kind ", int(k)));
      }
    }
  // Over a middle axis of narrow rows ([B, C, K, S], S < 64: 16 columns in registers, rows four
  // at a time): a NaN in one row of one column.
  for (int64_t S : {16, 48, 50})
    for (int64_t K : {1, 3, 4, 5, 32})
      for (int64_t at : {int64_t(0), K - 1, K / 2}) {
        Tensor x = random_tensor(DType::kFloat32, {2, K, S}, static_cast<uint32_t>(S * 100 + K));
        x.data_as<float>()[K * S + at * S + S - 1] = NAN;
        x.data_as<float>()[at * S + 3] = -INFINITY;
        for (ReduceKind k : {ReduceKind::kMax, ReduceKind::kMin}) {
          Tensor y = Tensor::allocate(DType::kFloat32, {2, 1, S});
          reduce_optimized(k, x, {false, true, false}, y);
          EXPECT_TRUE(std::isnan(y.data_as<float>()[S + S - 1])) << "S " << S << " K " << K;
          check_reduce(k, x, {false, true, false}, str_cat("middle S ", S, " K ", K, " kind ", int(k)));
        }
      }
}

#if defined(__AVX512F__)
TEST(Reduce, VectorFloatLanesSumIsTheScalarOneBitForBit) {
  // float_lanes_sum16 (rows of 256 in ReduceSum, LayerNorm's statistics) against float_lanes_sum:
  // the same lanes, the same widening and tree, on lengths around the vectors and with -0,
  // infinities, NaN and magnitudes far apart; maps identity and a centred square.
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int64_t n : {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 256, 1000, 4096}) {
    for (int variant = 0; variant < 3; ++variant) {
      std::vector<float> x(static_cast<size_t>(n));
      for (float& v : x) v = u(rng) * (rng() % 4 == 0 ? 1e7f : 1.f);
      if (variant == 1 && n > 3) x[n / 2] = -0.f, x[1] = -0.f;
      if (variant == 2 && n > 5) x[n - 1] = std::numeric_limits<float>::infinity(), x[2] = NAN;
      namespace rd = pointrt::reduce::detail;
      auto same = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; };
      const double vec = rd::float_lanes_sum16<64>(x.data(), n, [](__m512 v) { return v; });
      const double scalar = rd::float_lanes_sum<64>(x.data(), n, [](float v) { return v; });
      EXPECT_TRUE(same(vec, scalar)) << "n " << n << " variant " << variant << ": " << vec << " vs " << scalar;
      const float m = 0.25f;
      const double vec_sq = rd::float_lanes_sum16<32>(x.data(), n, [m](__m512 v) {
        const __m512 c = _mm512_sub_ps(v, _mm512_set1_ps(m));
        return _mm512_mul_ps(c, c);
      });
      const double scalar_sq = rd::float_lanes_sum<32>(x.data(), n, [m](float v) { return (v - m) * (v - m); });
      EXPECT_TRUE(same(vec_sq, scalar_sq)) << "n " << n << " variant " << variant;
    }
  }
}
#endif

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

}  // namespace
