// PackedMatmul: against the reference product, with and without bias and accumulation, on
// products below and above the one-thread threshold, and from several threads at once (one run
// holds the kept run state, the others make their own).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "ops/onnx/reduce/packed_matmul.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

// y = a * w (+ bias) (+ beta * y0), a [M, K], w [K, N], in double.
std::vector<float> expected(const Tensor& a, const Tensor& w, const float* bias, const float* y0, float beta) {
  const int64_t M = a.dim(0), K = a.dim(1), N = w.dim(1);
  std::vector<float> y(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = bias ? bias[j] : 0.0;
      for (int64_t k = 0; k < K; ++k) acc += double(a.data_as<float>()[i * K + k]) * w.data_as<float>()[k * N + j];
      if (y0) acc += double(beta) * y0[i * N + j];
      y[static_cast<size_t>(i * N + j)] = static_cast<float>(acc);
    }
  return y;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) bad += !(std::abs(got[i] - want[i]) <= 1e-4f * (1.0f + std::abs(want[i])));
  EXPECT_EQ(bad, 0) << what;
}

TEST(PackedMatmul, MatchesReferenceWithBiasAndAccumulation) {
  // 1 x 1 x 1, odd sizes, 3 x 256 x 256 (below 2^18 multiply-adds: one thread), 67 x 65 x 63 (above).
  const int64_t sizes[][3] = {{1, 1, 1}, {15, 64, 64}, {17, 3, 33}, {3, 256, 256}, {67, 65, 63}};
  for (const auto& s : sizes)
    for (int mode = 0; mode < 3; ++mode) {  // plain, bias, accumulate
      const int64_t M = s[0], K = s[1], N = s[2];
      Tensor a = random_tensor(DType::kFloat32, {M, K}, 5), w = random_tensor(DType::kFloat32, {K, N}, 6);
      Tensor bias = random_tensor(DType::kFloat32, {N}, 7), y0 = random_tensor(DType::kFloat32, {M, N}, 8);
      PackedMatmul::Spec spec;
      spec.M = M, spec.K = K, spec.N = N, spec.weights = w.data_as<float>();
      spec.bias = mode == 1 ? bias.data_as<float>() : nullptr;
      spec.accumulate = mode == 2, spec.beta = 0.5f;
      auto packed = PackedMatmul::create(spec);
      ASSERT_TRUE(packed);
      std::vector<float> y(y0.data_as<float>(), y0.data_as<float>() + M * N);
      packed->run(a.data_as<float>(), y.data());
      expect_near_all(y, expected(a, w, spec.bias, mode == 2 ? y0.data_as<float>() : nullptr, 0.5f),
                      str_cat(M, "x", K, "x", N, " mode ", mode));
    }
  PackedMatmul::Spec empty;
  empty.M = 0, empty.K = 4, empty.N = 4;
  EXPECT_FALSE(PackedMatmul::create(empty));
}

TEST(PackedMatmul, ConcurrentRunsAgree) {
  const int64_t M = 15, K = 64, N = 64;
  Tensor w = random_tensor(DType::kFloat32, {K, N}, 9), bias = random_tensor(DType::kFloat32, {N}, 10);
  PackedMatmul::Spec spec;
  spec.M = M, spec.K = K, spec.N = N, spec.weights = w.data_as<float>(), spec.bias = bias.data_as<float>();
  auto packed = PackedMatmul::create(spec);
  ASSERT_TRUE(packed);
  std::vector<int64_t> bad(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      Tensor a = random_tensor(DType::kFloat32, {M, K}, 20 + t);
      const std::vector<float> want = expected(a, w, bias.data_as<float>(), nullptr, 0.f);
      std::vector<float> y(static_cast<size_t>(M * N));
      for (int rep = 0; rep < 300; ++rep) {
        std::fill(y.begin(), y.end(), -1.f);
        packed->run(a.data_as<float>(), y.data());
        for (size_t i = 0; i < y.size(); ++i)
          bad[t] += !(std::abs(y[i] - want[i]) <= 1e-4f * (1.0f + std::abs(want[i])));
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

}  // namespace
