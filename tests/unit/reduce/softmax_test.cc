// Softmax / LogSoftmax: both opset semantics against the reference, short-row blocks, large values.
#include <gtest/gtest.h>

#include "core/stream_store.h"
#include "ops/onnx/reduce/softmax.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

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

TEST(Softmax, RowsOf16InRegisterBlocksKeepSpecialValues) {
  // float rows of 16 go 16 at a time through an in-register transpose: a NaN first (the maximum's
  // seed) or later, +inf, a row of -inf but one element, large spreads; a partial last block.
  for (int64_t rows : {16, 32, 37})
    for (bool log : {false, true}) {
      Tensor x = random_tensor(DType::kFloat32, {rows, 16}, static_cast<uint32_t>(rows));
      float* v = x.data_as<float>();
      for (int64_t i = 0; i < x.numel(); ++i) v[i] *= 40.f;
      v[0] = NAN;
      v[16 + 7] = NAN;
      v[32 + 3] = INFINITY;
      for (int64_t c = 0; c < 16; ++c) v[48 + c] = c == 9 ? 1.f : -INFINITY;
      v[rows * 16 - 1] = -INFINITY;
      Tensor a = Tensor::allocate(DType::kFloat32, {rows, 16}), b = Tensor::allocate(DType::kFloat32, {rows, 16});
      softmax_optimized(x, rows, 16, 1, log, a);
      softmax_reference(x, rows, 16, 1, log, b);
      test::expect_close(a, b, test::Tol{1e-6, 1e-5}, str_cat("rows of 16: ", rows, " log ", log));
      for (int64_t c = 0; c < 16; ++c) {
        EXPECT_TRUE(std::isnan(a.data_as<float>()[c]) && std::isnan(a.data_as<float>()[16 + c])) << c;
        if (!log) {
          EXPECT_EQ(a.data_as<float>()[48 + c], c == 9 ? 1.f : 0.f) << c;
        }
      }
    }
}

TEST(Softmax, CompileTimeWidthsMatchReference) {
  // Rows of 64, 128 and 256 take fixed-width kernels (float64, or float without AVX-512; float
  // rows of 33..1024 otherwise take the vector kernel); their neighbours the general one.
  for (int64_t R : {63, 64, 65, 127, 128, 129, 255, 256, 257})
    for (int64_t rows : {1, 5, 70})
      for (bool log : {false, true}) {
        Tensor x = random_tensor(DType::kFloat32, {rows, R}, static_cast<uint32_t>(R * 100 + rows));
        for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] *= 20.f;
        Tensor a = Tensor::allocate(DType::kFloat32, {rows, R}), b = Tensor::allocate(DType::kFloat32, {rows, R});
        softmax_optimized(x, rows, R, 1, log, a);
        softmax_reference(x, rows, R, 1, log, b);
        test::expect_close(a, b, test::Tol{1e-6, 1e-5}, str_cat("rows ", rows, " R ", R, " log ", log));
      }
}

TEST(Softmax, VectorRowsMatchReference) {
  // float rows of 33..1024 take the 16-lane kernel (tails through masks), longer rows the general
  // one; a -inf (a mask), a NaN and a +inf row keep the reference's values, and an output over
  // kStreamOutputBytes (rows of whole vectors) is written with streaming stores.
  for (int64_t R : {33, 47, 48, 100, 1023, 1024, 1025})
    for (int64_t rows : {1, 3, 40})
      for (bool log : {false, true}) {
        Tensor x = random_tensor(DType::kFloat32, {rows, R}, static_cast<uint32_t>(R * 10 + rows));
        float* v = x.data_as<float>();
        for (int64_t i = 0; i < x.numel(); ++i) v[i] *= 30.f;
        v[R - 1] = -INFINITY;
        if (rows > 1) v[R + R / 2] = NAN;
        if (rows > 2) v[2 * R + R - 1] = INFINITY;
        Tensor a = Tensor::allocate(DType::kFloat32, {rows, R}), b = Tensor::allocate(DType::kFloat32, {rows, R});
        softmax_optimized(x, rows, R, 1, log, a);
        softmax_reference(x, rows, R, 1, log, b);
        test::expect_close(a, b, test::Tol{1e-6, 1e-5}, str_cat("rows ", rows, " R ", R, " log ", log));
        if (rows > 1) {
          EXPECT_TRUE(std::isnan(a.data_as<float>()[R])) << "a NaN in a row makes the row NaN";
        }
      }
  for (int64_t R : {256, 272})  // streamed (a multiple of 16) and not
    for (bool log : {false, true}) {
      const int64_t rows = kStreamOutputBytes / 4 / R + 3;
      Tensor x = random_tensor(DType::kFloat32, {rows, R}, static_cast<uint32_t>(R));
      Tensor a = Tensor::allocate(DType::kFloat32, {rows, R}), b = Tensor::allocate(DType::kFloat32, {rows, R});
      softmax_optimized(x, rows, R, 1, log, a);
      softmax_reference(x, rows, R, 1, log, b);
      test::expect_close(a, b, test::Tol{1e-6, 1e-5}, str_cat("large output R ", R, " log ", log));
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

}  // namespace
