// Data-movement kernels of the tensor family at sizes seen in CNN and point-cloud graphs.
//   build/pointrt_bench --benchmark_filter=Tensor
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>

#include "ops/onnx/image/resize.h"
#include "ops/onnx/tensor/concat.h"
#include "ops/onnx/tensor/gather.h"
#include "ops/onnx/tensor/transpose.h"

namespace {
using namespace pointrt;
using namespace pointrt::tensor;

Tensor random_floats(const Shape& s) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor t = Tensor::allocate(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

void BM_TensorTransposeNCHWtoNHWC(benchmark::State& st) {
  Tensor x = random_floats({1, 64, 256, 256});
  Tensor y = Tensor::zeros(DType::kFloat32, {1, 256, 256, 64});
  for (auto _ : st) transpose_cpu(x, {0, 2, 3, 1}, y);
  st.SetBytesProcessed(st.iterations() * static_cast<int64_t>(x.nbytes()));
}
BENCHMARK(BM_TensorTransposeNCHWtoNHWC)->Unit(benchmark::kMillisecond);

void BM_TensorTranspose2D(benchmark::State& st) {
  Tensor x = random_floats({2048, 2048});
  Tensor y = Tensor::zeros(DType::kFloat32, {2048, 2048});
  for (auto _ : st) transpose_cpu(x, {1, 0}, y);
  st.SetBytesProcessed(st.iterations() * static_cast<int64_t>(x.nbytes()));
}
BENCHMARK(BM_TensorTranspose2D)->Unit(benchmark::kMillisecond);

void BM_TensorConcatChannels(benchmark::State& st) {
  Tensor x = random_floats({1, 64, 256, 256});
  Tensor y = Tensor::zeros(DType::kFloat32, {1, 128, 256, 256});
  std::vector<const Tensor*> ins = {&x, &x};
  for (auto _ : st) concat_cpu(ins, 1, y);
  st.SetBytesProcessed(st.iterations() * static_cast<int64_t>(y.nbytes()));
}
BENCHMARK(BM_TensorConcatChannels)->Unit(benchmark::kMillisecond);

void BM_TensorGatherRows(benchmark::State& st) {
  Tensor table = random_floats({30000, 256});
  Tensor idx = Tensor::allocate(DType::kInt64, {16384});
  std::mt19937 rng(3);
  for (int64_t i = 0; i < 16384; ++i) idx.data_as<int64_t>()[i] = static_cast<int64_t>(rng() % 30000);
  Tensor y = Tensor::zeros(DType::kFloat32, {16384, 256});
  for (auto _ : st) gather_cpu(table, idx, 0, y, "bench", "indices");
  st.SetBytesProcessed(st.iterations() * static_cast<int64_t>(y.nbytes()));
}
BENCHMARK(BM_TensorGatherRows)->Unit(benchmark::kMillisecond);

// A segmentation head's 2x upsample, [1, 64, 128, 128] -> [1, 64, 256, 256]; arg 0 nearest, 1 linear.
void BM_Resize2x(benchmark::State& st) {
  using namespace pointrt::image;
  ResizeAttrs a;
  a.mode = st.range(0) ? ResizeAttrs::Mode::kLinear : ResizeAttrs::Mode::kNearest;
  Tensor x = random_floats({1, 64, 128, 128});
  Tensor scales = Tensor::allocate(DType::kFloat32, {4});
  const float s[4] = {1, 1, 2, 2};
  std::memcpy(scales.data(), s, sizeof(s));
  ResizePlan plan = make_resize_plan(a, resolve_resize_geometry(a, x.shape(), nullptr, &scales, nullptr, "bench"));
  Tensor y = Tensor::allocate(DType::kFloat32, plan.geometry.out);
  for (auto _ : st) resize_run(a, plan, x, y, "bench");
  st.SetBytesProcessed(st.iterations() * static_cast<int64_t>(y.nbytes()));
}
BENCHMARK(BM_Resize2x)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
