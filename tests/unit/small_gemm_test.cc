// The register-tiled small-K float GEMM (K <= 16, or tiny products) against Gemm's reference:
// every transpose combination, column counts around the 16- and 64-wide tiles, odd row counts,
// alpha/beta, beta = 0 never reading C, outputs large enough for non-temporal stores, and batched
// MatMul at 1 and 2 threads around the batch-parallel thresholds.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>

#include "ops/onnx/reduce/matmul.h"
#include "support/random.h"

namespace pointrt {
namespace {

using namespace reduce;

using test::random_floats;

TEST(SmallGemm, MatchesTheReferenceOnTileEdges) {
  uint32_t seed = 1;
  for (int64_t K : {1, 3, 15, 16, 17, 32})
    for (int64_t N : {1, 15, 16, 17, 63, 64, 65, 130})
      for (int64_t M : {1, 2, 3, 7})
        for (int t = 0; t < 4; ++t) {
          const bool ta = t & 1, tb = t & 2;
          const float alpha = t == 3 ? 0.5f : 1.f, beta = t >= 2 ? 0.75f : 1.f;
          Tensor a = ta ? random_floats({K, M}, seed++) : random_floats({M, K}, seed++);
          Tensor b = tb ? random_floats({N, K}, seed++) : random_floats({K, N}, seed++);
          Tensor c = random_floats({M, N}, seed++);
          Tensor y = Tensor::allocate(DType::kFloat32, {M, N}), r = Tensor::allocate(DType::kFloat32, {M, N});
          gemm_optimized(a, b, &c, ta, tb, alpha, beta, y);
          gemm_reference(a, b, &c, ta, tb, alpha, beta, r);
          for (int64_t i = 0; i < M * N; ++i)
            ASSERT_NEAR(y.data_as<float>()[i], r.data_as<float>()[i], 1e-5f * (1 + K))
                << "M " << M << " N " << N << " K " << K << " ta " << ta << " tb " << tb << " at " << i;
        }
}

TEST(SmallGemm, BetaZeroNeverReadsC) {
  const int64_t M = 3, N = 70, K = 3;
  std::vector<float> a(M * K, 1.f), b(K * N, 2.f), c(M * N, NAN);
  gemm<float>(false, false, M, N, K, 1.f, a.data(), K, b.data(), N, 0.f, c.data(), N);
  for (float v : c) ASSERT_EQ(v, 6.f);
}

TEST(SmallGemm, StridedLeadingDimensions) {
  // A and C as windows of wider buffers (lda, ldc larger than the matrix).
  const int64_t M = 5, N = 20, K = 4, lda = 9, ldc = 33;
  std::vector<float> a(M * lda), b(K * N), c(M * ldc, -1.f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) - 2;
  gemm<float>(false, false, M, N, K, 1.f, a.data(), lda, b.data(), N, 0.f, c.data(), ldc);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      float want = -1.f;
      if (j < N) {
        want = 0;
        for (int64_t k = 0; k < K; ++k) want += a[i * lda + k] * b[k * N + j];
      }
      ASSERT_EQ(c[i * ldc + j], want) << i << "," << j;
    }
}

TEST(SmallGemm, LargeOutputsStreamedPastTheCaches) {
  // Over 24 MiB of C with beta = 0: non-temporal stores (aligned rows: N = 2048; rows not
  // 64-byte aligned and a column tail: N = 2113); beta != 0 keeps ordinary stores.
  struct Case {
    int64_t M, N;
    float beta;
  };
  uint32_t seed = 50;
  for (const Case& cs : {Case{3073, 2048, 0.f}, Case{3001, 2113, 0.f}, Case{3001, 2113, 0.5f}}) {
    const int64_t K = 3;
    Tensor a = random_floats({cs.M, K}, seed++), b = random_floats({K, cs.N}, seed++),
           c = random_floats({cs.M, cs.N}, seed++);
    Tensor y = Tensor::allocate(DType::kFloat32, {cs.M, cs.N}), r = Tensor::allocate(DType::kFloat32, {cs.M, cs.N});
    gemm_optimized(a, b, &c, false, false, 1.f, cs.beta, y);
    gemm_reference(a, b, &c, false, false, 1.f, cs.beta, r);
    for (int64_t i = 0; i < cs.M * cs.N; ++i)
      ASSERT_NEAR(y.data_as<float>()[i], r.data_as<float>()[i], 1e-5f * (1 + K)) << "N " << cs.N << " at " << i;
  }
}

TEST(SmallGemm, BatchedMatMulAtOneAndTwoThreads) {
  // Batches of tiny products (serial below the work threshold, one product per thread above it),
  // larger products in a batch that splits evenly over 2 threads (one product per thread) or not
  // (threads inside each product), and a broadcast batch (non-uniform offsets), against the reference.
  const int saved = omp_get_max_threads();
  uint32_t seed = 70;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    for (const Shape& sa : {Shape{8, 11, 32}, Shape{1, 5, 3}, Shape{0, 4, 4}, Shape{64, 17, 32}, Shape{3, 1, 7, 16},
                            Shape{4, 130, 40}, Shape{3, 130, 40}})
      for (int64_t N : {1, 11, 65}) {
        Shape sb = sa;
        sb[sb.size() - 2] = sa.back();
        sb.back() = N;
        if (sa.size() == 4) sb[1] = 5;  // [3, 1, 7, K] x [3, 5, K, N]: A broadcasts over axis 1
        Tensor a = Tensor::allocate(DType::kFloat32, sa), b = Tensor::allocate(DType::kFloat32, sb);
        std::mt19937 rng(seed++);
        std::uniform_real_distribution<float> u(-1.f, 1.f);
        for (int64_t i = 0; i < a.numel(); ++i) a.data_as<float>()[i] = u(rng);
        for (int64_t i = 0; i < b.numel(); ++i) b.data_as<float>()[i] = u(rng);
        const Shape so = matmul_output_shape(sa, sb, "test");
        Tensor y = Tensor::allocate(DType::kFloat32, so), r = Tensor::allocate(DType::kFloat32, so);
        matmul_optimized(a, b, y);
        matmul_reference(a, b, r);
        for (int64_t i = 0; i < y.numel(); ++i)
          ASSERT_NEAR(y.data_as<float>()[i], r.data_as<float>()[i], 1e-4f)
              << shape_to_string(sa) << " x " << shape_to_string(sb) << " threads " << threads << " at " << i;
      }
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace pointrt
