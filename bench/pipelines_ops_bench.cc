// Micro-benchmarks of the pose and detector-decode operators (fixed seeds).
// Run: build/pointrt_bench --benchmark_filter='Pose|Detect' --benchmark_min_time=0.2
// Results and the machine: docs/benchmarks-pipelines.md.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/detect/box_nms.h"
#include "ops/detect/center_point_decode.h"
#include "ops/pose/mean_shift.h"
#include "ops/pose/rigid_fit.h"

namespace {

using namespace pointrt;

// PVN3D-like votes: 12288 points, 9 vote sets, `objects` instances sharing the foreground, 1 cm
// noise around each instance's keypoint, 10% outliers; label 0 = background (ignored).
struct Votes {
  std::vector<float> votes;
  std::vector<int32_t> labels;
  int64_t n = 12288, sets = 9, classes = 22;
};
Votes make_votes(int objects, double background) {
  Votes v;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::normal_distribution<float> g(0.f, 0.01f), out(0.f, 0.2f);
  v.labels.resize(v.n);
  for (auto& l : v.labels) l = u(rng) < background ? 0 : 1 + static_cast<int32_t>(rng() % objects);
  std::vector<float> kp(v.classes * v.sets * 3);
  for (auto& k : kp) k = u(rng);
  v.votes.resize(v.sets * v.n * 3);
  for (int64_t k = 0; k < v.sets; ++k)
    for (int64_t i = 0; i < v.n; ++i)
      for (int d = 0; d < 3; ++d) {
        const bool outlier = u(rng) < 0.1f;
        v.votes[(k * v.n + i) * 3 + d] = kp[(v.labels[i] * v.sets + k) * 3 + d] + (outlier ? out(rng) : g(rng));
      }
  return v;
}

template <bool kReference>
void Pose_MeanShift(benchmark::State& state) {
  const Votes v = make_votes(static_cast<int>(state.range(0)), state.range(1) / 100.0);
  pose::MeanShiftAttrs a;
  a.num_instances = v.classes;
  a.bandwidth = 0.08f;
  a.stop_threshold = 0.08e-3f;
  a.ignore_label = 0;
  a.filter_vote = v.sets - 1;
  if (getenv("MS_ITERS")) a.max_iterations = atoi(getenv("MS_ITERS"));
  std::vector<float> modes(v.classes * v.sets * 3);
  std::vector<int32_t> counts(v.classes * v.sets);
  for (auto _ : state) {
    (kReference ? pose::mean_shift_ref : pose::mean_shift)(v.votes.data(), v.labels.data(), 1, v.sets, v.n, a,
                                                           modes.data(), counts.data());
    benchmark::DoNotOptimize(modes.data());
  }
  state.counters["threads"] = omp_get_max_threads();
}
// args: objects, background percent
BENCHMARK_TEMPLATE(Pose_MeanShift, false)->Args({21, 0})->Args({6, 45})->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(Pose_MeanShift, true)->Args({21, 0})->Args({6, 45})->Unit(benchmark::kMillisecond);

void Pose_RigidFit(benchmark::State& state) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  const int64_t fits = 22, p = 9;
  std::vector<float> src(fits * p * 3), dst(fits * p * 3), pose(fits * 12);
  for (auto& x : src) x = u(rng);
  for (size_t i = 0; i < dst.size(); ++i) dst[i] = src[i] + 0.3f + 0.01f * u(rng);
  std::vector<int32_t> status(fits);
  for (auto _ : state) {
    pose::rigid_fit(src.data(), dst.data(), nullptr, fits, fits, p, pose.data(), status.data());
    benchmark::DoNotOptimize(pose.data());
  }
}
BENCHMARK(Pose_RigidFit)->Unit(benchmark::kMicrosecond);

// CenterPoint-style head maps: 180 x 180, 10 classes (nuScenes), background logits ~ -6.
template <bool kReference>
void Detect_Decode(benchmark::State& state) {
  const int64_t c = 10, h = 180, w = 180, hw = h * w;
  std::mt19937 rng(5);
  std::normal_distribution<float> g(0.f, 1.f);
  std::vector<float> heat(c * hw), reg(2 * hw), height(hw), size(3 * hw), rot(2 * hw), vel(2 * hw);
  for (auto& x : heat) x = -6.f + 1.5f * g(rng);
  for (auto* v : {&reg, &height, &size, &rot, &vel})
    for (auto& x : *v) x = g(rng);
  detect::DecodeAttrs a;
  a.voxel_x = a.voxel_y = 0.075f;
  a.range_x = a.range_y = -54.f;
  a.out_size_factor = 8.f;
  a.peak_kernel = state.range(0);
  const detect::HeadMaps m{heat.data(), reg.data(), height.data(), size.data(), rot.data(), vel.data(), c, h, w};
  std::vector<float> boxes(a.max_detections * 9), scores(a.max_detections);
  std::vector<int32_t> labels(a.max_detections);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        (kReference ? detect::decode_ref : detect::decode)(m, a, boxes.data(), scores.data(), labels.data()));
  }
}
BENCHMARK_TEMPLATE(Detect_Decode, false)->Arg(1)->Arg(3)->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(Detect_Decode, true)->Arg(1)->Arg(3)->Unit(benchmark::kMillisecond);

// 1000 candidate boxes (CUDA-CenterPoint's nms_pre_max_size) over 100 x 100 m, 83 kept.
template <bool kReference>
void Detect_BoxNMS(benchmark::State& state) {
  const int64_t k = 1000, dim = 9;
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> boxes(k * dim), scores(k);
  for (int64_t i = 0; i < k; ++i) {
    float* b = &boxes[i * dim];
    b[0] = 100 * u(rng) - 50, b[1] = 100 * u(rng) - 50, b[2] = 0, b[3] = 4, b[4] = 2, b[5] = 1.5f, b[6] = 6 * u(rng);
    scores[i] = u(rng);
  }
  detect::NmsAttrs a;
  std::vector<int32_t> kept(a.max_output);
  for (auto _ : state)
    benchmark::DoNotOptimize((kReference ? detect::box_nms_ref : detect::box_nms)(boxes.data(), scores.data(), nullptr,
                                                                                  k, dim, a, kept.data()));
}
BENCHMARK_TEMPLATE(Detect_BoxNMS, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(Detect_BoxNMS, true)->Unit(benchmark::kMicrosecond);

}  // namespace
