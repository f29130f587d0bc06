// Gemm: every transpose and C broadcast against the reference; constant weights; errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/onnx/reduce/matmul.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

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

// The small-K register tile (K <= 16: squared distances, K = 3) on a C above the streaming
// threshold (24 MiB): streamed when C is 64-byte aligned with ldc % 16 == 0 (K <= 4 row by row,
// K = 5 through the tiles), plain stores when C is offset by one float or ldc is odd; tails of
// N % 64 in {0, 1, 63}; every element checked.
TEST(Gemm, SmallKTileStreamedAndUnalignedOutputs) {
  const int64_t M = 97;
  for (int64_t K : {1, 3, 5})
    for (int64_t N : {int64_t{65536}, int64_t{65537}, int64_t{65599}})
      for (int64_t c_offset : {0, 1})
        for (int64_t ld_pad : {0, 1}) {
          const int64_t ldc = N + ld_pad;
          std::vector<float> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N));
          for (size_t i = 0; i < a.size(); ++i) a[i] = float(int64_t(i % 7) - 3);
          for (size_t i = 0; i < b.size(); ++i) b[i] = float(int64_t(i % 11) - 5) * 0.5f;
          // 64-byte aligned storage; c_offset shifts C off the alignment.
          std::vector<float> storage(static_cast<size_t>(M * ldc + 16 + c_offset), NAN);
          float* base = storage.data();
          while (reinterpret_cast<uintptr_t>(base) % 64) ++base;
          float* c = base + c_offset;
          gemm<float>(false, false, M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, c, ldc);
          int64_t bad = 0, first = -1;
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = 0; j < N; ++j) {
              float want = 0;
              for (int64_t k = 0; k < K; ++k) want += a[i * K + k] * b[k * N + j];
              if (c[i * ldc + j] != want && bad++ == 0) first = i * N + j;
            }
          EXPECT_EQ(bad, 0) << "K " << K << " N " << N << " offset " << c_offset << " ldc " << ldc << " first wrong at "
                            << first;
        }
}

// Constant B goes to a PackedMatmul: a constant C of one row ([N] or [1, N]) as its bias scaled
// by beta, any other C (constant of another shape, or fed) copied into Y and added by oneDNN.
TEST(Gemm, NodeWithConstantWeights) {
  const Shape c_shapes[] = {{13}, {1, 13}, {9, 1}, {9, 13}, {}};
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (int cs = -1; cs < 5; ++cs)
        for (bool c_constant : {true, false})
          for (float beta : {0.5f, 1.0f, 0.0f}) {
            Tensor a = random_tensor(DType::kFloat32, ta ? Shape{20, 9} : Shape{9, 20}, 1);
            Tensor b = random_tensor(DType::kFloat32, tb ? Shape{13, 20} : Shape{20, 13}, 2);
            Tensor c = cs < 0 ? Tensor() : random_tensor(DType::kFloat32, c_shapes[cs], 3);
            std::map<std::string, Attribute> attrs = {
                {"transA", int_attr(ta)}, {"transB", int_attr(tb)}, {"beta", float_attr(beta)}};
            auto y = run_node({"Gemm", 13, attrs, {a, b, c}, {false, true, c_constant}});
            Tensor r = Tensor::allocate(DType::kFloat32, {9, 13});
            gemm_reference(a, b, cs < 0 ? nullptr : &c, ta, tb, 1.f, beta, r);
            test::expect_close(
                y[0], r, test::Tol{1e-5, 1e-5},
                str_cat("packed gemm ta", ta, " tb", tb, " c", cs, " constant ", c_constant, " beta ", beta));
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

}  // namespace
