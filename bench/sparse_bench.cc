// Sparse family micro-benchmarks: SubM 3x3x3 16->16 and regular stride-2 3x3x3 16->32 on
// synthetic surface-like sites in a [41, 1600, 1408] grid (20k / 60k / 120k voxels), split into
// rulebook building and gather-GEMM-scatter; Voxelize of 120k points.
//   build/pointrt_bench --benchmark_filter='Sparse|Voxelize' --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <random>
#include <set>

#include "graph/ir.h"
#include "ops/kernel.h"
#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/voxelize.h"

namespace pointrt {
namespace sparse {
namespace {

const Shape3 kGrid{41, 1600, 1408};

// LiDAR-like occupancy: a gently undulating ground surface seen in rings around the sensor, plus
// box-shaped objects whose walls are a few voxels thick. Sites are unique, in random order.
Sites surface_sites(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::set<uint64_t> used;
  Sites s;
  s.rows.reserve(n * 4);
  auto add = [&](int64_t z, int64_t y, int64_t x) {
    if (z < 0 || z >= kGrid[0] || y < 0 || y >= kGrid[1] || x < 0 || x >= kGrid[2]) return;
    if (!used.insert(site_key(0, z, y, x, kGrid)).second) return;
    s.rows.insert(s.rows.end(), {0, int32_t(z), int32_t(y), int32_t(x)});
  };
  while (static_cast<int64_t>(used.size()) < n) {
    if (u(rng) < 0.7f) {  // ground: rings, denser close to the sensor
      float r = 40.f + 900.f * u(rng) * u(rng);
      float a = 6.2831853f * u(rng);
      int64_t y = 800 + int64_t(r * std::sin(a)), x = int64_t(r * std::cos(a) + 100.f);
      int64_t z = 8 + int64_t(2.f * std::sin(x * 0.01f) + 1.5f * std::cos(y * 0.013f));
      add(z, y, x);
    } else {  // an object wall: a vertical strip
      int64_t cy = 200 + rng() % 1200, cx = 100 + rng() % 1200;
      int64_t h = 5 + rng() % 20;
      int64_t len = 10 + rng() % 40;
      bool along_x = rng() % 2;
      for (int64_t i = 0; i < len && static_cast<int64_t>(used.size()) < n; ++i)
        for (int64_t z = 8; z < 8 + h && static_cast<int64_t>(used.size()) < n; ++z)
          add(z, along_x ? cy : cy + i, along_x ? cx + i : cx);
    }
  }
  s.count = static_cast<int64_t>(used.size());
  std::vector<int64_t> perm(s.count);
  for (int64_t i = 0; i < s.count; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<int32_t> shuffled(s.rows.size());
  for (int64_t i = 0; i < s.count; ++i)
    for (int c = 0; c < 4; ++c) shuffled[4 * i + c] = s.rows[4 * perm[i] + c];
  s.rows = std::move(shuffled);
  return s;
}

SparseConvAttrs conv_attrs(bool subm) {
  Attributes a;
  auto ints = [&](const char* name, std::vector<int64_t> v) {
    Attribute at;
    at.kind = Attribute::Kind::kInts;
    at.ints = std::move(v);
    a.items[name] = at;
  };
  ints("kernel_size", {3, 3, 3});
  ints("input_spatial_shape", {kGrid[0], kGrid[1], kGrid[2]});
  if (subm) {
    Attribute at;
    at.kind = Attribute::Kind::kInt;
    at.i = 1;
    a.items["subm"] = at;
  } else {
    ints("stride", {2, 2, 2});
    ints("padding", {1, 1, 1});
  }
  return parse_sparse_conv_attrs(a, subm ? "bench subm" : "bench regular");
}

struct ConvSetup {
  SparseConvAttrs attrs;
  Sites sites;
  std::vector<float> x, packed;
  int64_t cin, cout;
  ConvSetup(bool subm, int64_t n, int64_t cin_, int64_t cout_) : attrs(conv_attrs(subm)), cin(cin_), cout(cout_) {
    sites = surface_sites(n, 7);
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    x.resize(n * cin);
    for (auto& v : x) v = u(rng);
    std::vector<float> w(cout * 27 * cin);
    for (auto& v : w) v = u(rng);
    packed = pack_sparse_weight(w.data(), cout, 27, cin);
  }
};

const IndexSource kSrc{"bench", "indices", "input_spatial_shape"};

void conv_bench(benchmark::State& state, bool subm, int64_t cout, int part) {
  const int64_t n = state.range(0);
  ConvSetup s(subm, n, 16, cout);
  auto rb = build_rulebook(s.attrs, s.sites, kSrc);
  const int64_t m = rb->pairs.num_out;
  std::vector<float> out(m * cout);
  const int64_t pairs = rb->pairs.total_pairs();
  for (auto _ : state) {
    if (part == 0 || part == 2) {
      auto r = build_rulebook(s.attrs, s.sites, kSrc);
      benchmark::DoNotOptimize(r.get());
    }
    if (part == 1 || part == 2) {
      apply_pairs(rb->pairs, s.x.data(), s.cin, s.packed.data(), cout, out.data());
      apply_bias_activation(out.data(), m, cout, nullptr, Activation::kReLU, 0.f);
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.counters["out_sites"] = static_cast<double>(m);
  state.counters["pairs"] = static_cast<double>(pairs);
}

void BM_SparseSubM16_Rulebook(benchmark::State& st) { conv_bench(st, true, 16, 0); }
void BM_SparseSubM16_Gemm(benchmark::State& st) { conv_bench(st, true, 16, 1); }
void BM_SparseSubM16_Total(benchmark::State& st) { conv_bench(st, true, 16, 2); }
void BM_SparseRegularS2_16to32_Rulebook(benchmark::State& st) { conv_bench(st, false, 32, 0); }
void BM_SparseRegularS2_16to32_Gemm(benchmark::State& st) { conv_bench(st, false, 32, 1); }
void BM_SparseRegularS2_16to32_Total(benchmark::State& st) { conv_bench(st, false, 32, 2); }

#define SPARSE_SIZES ->Arg(20000)->Arg(60000)->Arg(120000)->Unit(benchmark::kMillisecond)->UseRealTime()
BENCHMARK(BM_SparseSubM16_Rulebook) SPARSE_SIZES;
BENCHMARK(BM_SparseSubM16_Gemm) SPARSE_SIZES;
BENCHMARK(BM_SparseSubM16_Total) SPARSE_SIZES;
BENCHMARK(BM_SparseRegularS2_16to32_Rulebook) SPARSE_SIZES;
BENCHMARK(BM_SparseRegularS2_16to32_Gemm) SPARSE_SIZES;
BENCHMARK(BM_SparseRegularS2_16to32_Total) SPARSE_SIZES;

struct HeapAllocator : Allocator {
  Tensor allocate(DType d, const Shape& s) override { return Tensor::allocate(d, s); }
};

void BM_Voxelize(benchmark::State& state) {
  const int64_t p = state.range(0);
  // KITTI-like: x in [0, 70.4), y in [-40, 40), z in [-3, 1); 4 channels; grid [1408, 1600, 40].
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  Tensor pts = Tensor::allocate(DType::kFloat32, {p, 4});
  float* d = pts.data_as<float>();
  for (int64_t i = 0; i < p; ++i) {
    float r = 2.f + 75.f * u(rng) * u(rng), a = 3.14159f * (u(rng) - 0.5f);
    d[4 * i] = r * std::cos(a);
    d[4 * i + 1] = r * std::sin(a);
    d[4 * i + 2] = -1.7f + 0.3f * u(rng) + (u(rng) < 0.2f ? 2.f * u(rng) : 0.f);
    d[4 * i + 3] = u(rng);
  }
  Graph g;
  Node n;
  n.name = "vox";
  n.op_type = "Voxelize";
  n.domain = "pointrt";
  n.opset = 1;
  n.inputs.push_back(g.add_value("points"));
  for (const char* o : {"f", "c", "n"}) n.outputs.push_back(g.add_value(o));
  auto floats = [&](const char* name, std::vector<float> v) {
    Attribute at;
    at.kind = Attribute::Kind::kFloats;
    at.floats = std::move(v);
    n.attrs.items[name] = at;
  };
  auto integer = [&](const char* name, int64_t v) {
    Attribute at;
    at.kind = Attribute::Kind::kInt;
    at.i = v;
    n.attrs.items[name] = at;
  };
  floats("voxel_size", {0.05f, 0.05f, 0.1f});
  floats("point_cloud_range", {0.f, -40.f, -3.f, 70.4f, 40.f, 1.f});
  integer("max_points_per_voxel", 5);
  integer("max_voxels", 40000);
  g.nodes.push_back(n);
  auto kernel = make_voxelize_kernel(KernelInit{g.nodes[0], g});
  HeapAllocator alloc;
  int64_t voxels = 0;
  for (auto _ : state) {
    RunCache cache;
    std::vector<Tensor> outs(3);
    KernelContext ctx(g.nodes[0], {&pts}, outs, alloc, cache);
    kernel->run(ctx);
    voxels = outs[0].dim(0);
  }
  state.counters["voxels"] = static_cast<double>(voxels);
}
BENCHMARK(BM_Voxelize)->Arg(120000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace sparse
}  // namespace pointrt
