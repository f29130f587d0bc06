// The register-tiled small-K float GEMM (K <= 16, or tiny products) against Gemm's reference:
// every transpose combination, column counts around the 16- and 64-wide tiles, odd row counts,
// alpha/beta, and beta = 0 never reading C.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/onnx/reduce/matmul.h"
#include "test_util/random.h"

namespace pointrt {
namespace {

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

}  // namespace
}  // namespace pointrt
