// Micro-benchmarks of the PointNet++ family (points uniform in the unit cube, fixed seeds).
// Run: build/pointrt_bench --benchmark_filter='PN2' --benchmark_min_time=0.2
// Results and the machine they came from: docs/operators-pointnet2.md.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/pointnet2/ball_query.h"
#include "ops/pointnet2/furthest_point_sample.h"
#include "ops/pointnet2/knn.h"
#include "ops/pointnet2/three_nn.h"

namespace {

using namespace pointrt::pointnet2;

std::vector<float> cube_cloud(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> v(static_cast<size_t>(count) * 3);
  for (auto& x : v) x = u(rng);
  return v;
}

void set_counters(benchmark::State& state, int64_t items) {
  state.SetItemsProcessed(state.iterations() * items);
  state.counters["threads"] = omp_get_max_threads();
}

// FPS 16384 -> 4096 (B = 1); the reference for comparison.
template <bool kReference>
void PN2_FurthestPointSample(benchmark::State& state) {
  const int64_t n = state.range(0), npoint = state.range(1);
  auto xyz = cube_cloud(n, 1);
  std::vector<int32_t> idx(static_cast<size_t>(npoint));
  for (auto _ : state) {
    if (kReference)
      furthest_point_sample_ref(xyz.data(), 1, n, {npoint, false}, idx.data());
    else
      furthest_point_sample(xyz.data(), 1, n, {npoint, false}, idx.data());
    benchmark::DoNotOptimize(idx.data());
  }
  set_counters(state, npoint);
}
BENCHMARK_TEMPLATE(PN2_FurthestPointSample, false)->Args({16384, 4096})->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(PN2_FurthestPointSample, true)->Args({16384, 4096})->Unit(benchmark::kMillisecond);

// BallQuery N = 16384, M = 4096; args: radius in thousandths, nsample.
template <bool kReference>
void PN2_BallQuery(benchmark::State& state) {
  const int64_t n = 16384, m = 4096;
  const BallQueryAttrs a{static_cast<float>(state.range(0)) / 1000.f, state.range(1), 0.f};
  auto xyz = cube_cloud(n, 2);
  auto centres = cube_cloud(m, 3);
  std::vector<int32_t> idx(static_cast<size_t>(m * a.nsample));
  for (auto _ : state) {
    if (kReference)
      ball_query_ref(xyz.data(), centres.data(), 1, n, m, a, idx.data());
    else
      ball_query(xyz.data(), centres.data(), 1, n, m, a, idx.data());
    benchmark::DoNotOptimize(idx.data());
  }
  set_counters(state, m);
}
BENCHMARK_TEMPLATE(PN2_BallQuery, false)->ArgsProduct({{100, 300}, {32, 64}})->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(PN2_BallQuery, true)->ArgsProduct({{100, 300}, {32, 64}})->Unit(benchmark::kMillisecond);

// ThreeNN: 16384 queries over 4096 known points.
template <bool kReference>
void PN2_ThreeNN(benchmark::State& state) {
  const int64_t n = state.range(0), m = state.range(1);
  auto unknown = cube_cloud(n, 4);
  auto known = cube_cloud(m, 5);
  std::vector<float> dist(static_cast<size_t>(n * 3));
  std::vector<int32_t> idx(static_cast<size_t>(n * 3));
  for (auto _ : state) {
    if (kReference)
      three_nn_ref(unknown.data(), known.data(), 1, n, m, dist.data(), idx.data());
    else
      three_nn(unknown.data(), known.data(), 1, n, m, dist.data(), idx.data());
    benchmark::DoNotOptimize(idx.data());
  }
  set_counters(state, n);
}
BENCHMARK_TEMPLATE(PN2_ThreeNN, false)->Args({16384, 4096})->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(PN2_ThreeNN, true)->Args({16384, 4096})->Unit(benchmark::kMillisecond);

// Scaling in N with M = N / 4 queries and a constant expected neighbourhood: BallQuery with
// r = 0.1 * (16384 / N)^(1/3) (about 69 points per ball), nsample 32; KNN with k = 16.
// Near-linear growth = constant time per query.
void PN2_BallQueryScaling(benchmark::State& state) {
  const int64_t n = state.range(0), m = n / 4;
  const float radius = 0.1f * static_cast<float>(std::cbrt(16384.0 / static_cast<double>(n)));
  auto xyz = cube_cloud(n, 6);
  auto centres = cube_cloud(m, 7);
  std::vector<int32_t> idx(static_cast<size_t>(m * 32));
  for (auto _ : state) {
    ball_query(xyz.data(), centres.data(), 1, n, m, {radius, 32, 0.f}, idx.data());
    benchmark::DoNotOptimize(idx.data());
  }
  set_counters(state, m);
}
BENCHMARK(PN2_BallQueryScaling)->RangeMultiplier(2)->Range(4096, 131072)->Unit(benchmark::kMillisecond);

void PN2_KNNScaling(benchmark::State& state) {
  const int64_t n = state.range(0), m = n / 4, k = 16;
  auto xyz = cube_cloud(n, 8);
  auto queries = cube_cloud(m, 9);
  std::vector<int32_t> idx(static_cast<size_t>(m * k));
  std::vector<float> d2(static_cast<size_t>(m * k));
  for (auto _ : state) {
    knn(xyz.data(), queries.data(), 1, n, m, {k}, idx.data(), d2.data());
    benchmark::DoNotOptimize(idx.data());
  }
  set_counters(state, m);
}
BENCHMARK(PN2_KNNScaling)->RangeMultiplier(2)->Range(4096, 131072)->Unit(benchmark::kMillisecond);

}  // namespace
