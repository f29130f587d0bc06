// Memory planning: arena plan invariants, the session's memory pattern (arena vs pool), and
// release of plain weights once kernels packed them.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <random>
#include <thread>

#include "ops/onnx/nn/conv.h"
#include "runtime/arena_plan.h"
#include "support/model_builder.h"
#include "support/random.h"

using namespace pointrt;
using pointrt::test::ModelBuilder;
using pointrt::test::random_floats;

namespace {

// Lower bound of any valid plan: the most bytes live at one step.
size_t peak_live_bytes(const std::vector<ArenaRequest>& r) {
  int steps = 0;
  for (const auto& q : r) steps = std::max(steps, q.last + 1);
  size_t peak = 0;
  for (int s = 0; s < steps; ++s) {
    size_t live = 0;
    for (const auto& q : r)
      if (q.first <= s && s <= q.last) live += q.bytes;
    peak = std::max(peak, live);
  }
  return peak;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

// A chain of elementwise nodes (several intermediates that can share arena bytes) next to a
// data-dependent branch: NonZero's output size depends on the values of x, not its shape.
ModelBuilder mixed_model() {
  ModelBuilder b(13);
  b.input("x", DType::kFloat32, {int64_t(1000)});
  b.node("Relu", {"x"}, {"a"});
  b.node("Add", {"a", "x"}, {"b"});
  b.node("Mul", {"b", "a"}, {"c"});
  b.node("Sub", {"c", "b"}, {"d"});
  b.node("Add", {"d", "a"}, {"y1"});
  b.node("NonZero", {"a"}, {"nz"});
  auto& cast = b.node("Cast", {"nz"}, {"f"});
  ModelBuilder::attr_int(cast, "to", static_cast<int64_t>(DType::kFloat32));
  b.node("Neg", {"f"}, {"g"});
  b.node("Abs", {"g"}, {"y2"});
  b.output("y1");
  b.output("y2");
  return b;
}

}  // namespace

TEST(ArenaPlan, NeverOverlapsLiveTensorsOnRandomLifetimes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    int n = 1 + static_cast<int>(rng() % 60);
    std::vector<ArenaRequest> r(n);
    for (auto& q : r) {
      q.first = static_cast<int>(rng() % 40);
      q.last = q.first + static_cast<int>(rng() % 8);
      q.bytes = (rng() % 4 == 0) ? 0 : 1 + rng() % 100000;
    }
    ArenaLayout l = plan_arena(r);
    ASSERT_EQ(check_arena_layout(r, l), "") << "trial " << trial;
    EXPECT_GE(l.total_bytes, peak_live_bytes(r));
  }
}

TEST(ArenaPlan, ReusesBytesOfDisjointLifetimes) {
  // a chain: each tensor lives from its producer to its consumer
  std::vector<ArenaRequest> r = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaLayout l = plan_arena(r);
  EXPECT_EQ(check_arena_layout(r, l), "");
  EXPECT_EQ(l.total_bytes, 2 * 1024u);  // two live at a time, each rounded up to 64
  EXPECT_EQ(l.offsets[0], l.offsets[2]);
  // a small tensor fits the gap left by a large one that died
  std::vector<ArenaRequest> r2 = {{4096, 0, 0}, {4096, 0, 3}, {100, 1, 3}};
  ArenaLayout l2 = plan_arena(r2);
  EXPECT_EQ(check_arena_layout(r2, l2), "");
  EXPECT_EQ(l2.total_bytes, 8192u);
  EXPECT_EQ(l2.offsets[2], l2.offsets[0]);
}

TEST(ArenaPlan, CheckerReportsOverlapAndMisalignment) {
  std::vector<ArenaRequest> r = {{100, 0, 2}, {100, 1, 3}};
  ArenaLayout bad{{0, 64}, 256};
  EXPECT_NE(check_arena_layout(r, bad).find("overlap"), std::string::npos);
  ArenaLayout misaligned{{0, 100}, 256};
  EXPECT_NE(check_arena_layout(r, misaligned).find("aligned"), std::string::npos);
  ArenaLayout outside{{0, 128}, 200};
  EXPECT_NE(check_arena_layout(r, outside).find("past the block"), std::string::npos);
}

TEST(MemoryPattern, SameResultsWithAndWithoutArenaAndDataDependentShapesFallBack) {
  ModelBuilder b = mixed_model();
  SessionOptions off;
  off.memory_pattern = false;
  Session with(b.load()), without(b.load(), off);
  for (int run = 0; run < 6; ++run) {
    // runs 0-1 and 4-5 share values; 2-3 change how many elements are positive
    uint32_t seed = run < 2 || run >= 4 ? 11 : 100 + run;
    Tensor x = random_floats({1000}, seed);
    MemoryStats before = with.memory_stats();
    auto a = with.run({{"x", x}});
    auto c = without.run({{"x", x}});
    ASSERT_EQ(a.size(), c.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(same_bits(a[i], c[i])) << "run " << run << " output " << i;
    MemoryStats after = with.memory_stats();
    if (run == 0) {
      EXPECT_EQ(after.planned_signatures, 1u);
      EXPECT_EQ(after.arena_allocations, 0u);  // the first run records
      EXPECT_GT(after.arena_bytes, 0u);
    } else {
      // the elementwise chain's intermediates come from the arena; outputs never do
      EXPECT_GE(after.arena_allocations - before.arena_allocations, 4u) << "run " << run;
    }
    if (run == 2 || run == 3) {
      // NonZero, Cast and Neg produce sizes the plan does not have: pool (plus the 2 outputs)
      EXPECT_GE(after.pool_allocations - before.pool_allocations, 4u) << "run " << run;
    }
  }
  EXPECT_EQ(without.memory_stats().arena_allocations, 0u);
  EXPECT_EQ(without.memory_stats().planned_signatures, 0u);
}

TEST(MemoryPattern, ConcurrentRunsAreIdentical) {
  ModelBuilder b = mixed_model();
  SessionOptions off;
  off.memory_pattern = false;
  Session s(b.load()), ref(b.load(), off);
  const int kThreads = 4, kRuns = 40;
  std::vector<std::vector<Tensor>> inputs(kThreads), expected(kThreads);
  for (int t = 0; t < kThreads; ++t)
    for (int r = 0; r < kRuns; ++r) {
      Tensor x = random_floats({1000}, 1000 * t + r % 3);  // a few distinct NonZero sizes
      inputs[t].push_back(x);
      auto out = ref.run({{"x", x}});
      expected[t].push_back(out[0]);
      expected[t].push_back(out[1]);
    }
  std::vector<int> bad(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        auto out = s.run({{"x", inputs[t][r]}});
        if (!same_bits(out[0], expected[t][2 * r]) || !same_bits(out[1], expected[t][2 * r + 1])) ++bad[t];
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
  EXPECT_GT(s.memory_stats().arena_allocations, 0u);
}

TEST(MemoryPattern, OutputsKeptByTheCallerSurviveLaterRuns) {
  ModelBuilder b(13);
  b.input("x", DType::kFloat32, {int64_t(256)});
  b.node("Relu", {"x"}, {"a"});
  b.node("Neg", {"a"}, {"n"});
  b.node("Reshape", {"n", "shape"}, {"y"});  // the output views an intermediate's buffer
  b.initializer("shape", [] {
    Tensor t = Tensor::allocate(DType::kInt64, {2});
    t.data_as<int64_t>()[0] = 16;
    t.data_as<int64_t>()[1] = 16;
    return t;
  }());
  b.output("y");
  Session s(b.load());
  std::vector<Tensor> kept, inputs;
  for (int r = 0; r < 5; ++r) {
    inputs.push_back(random_floats({256}, 50 + r));
    kept.push_back(s.run({{"x", inputs.back()}})[0]);
  }
  for (int r = 0; r < 5; ++r)
    for (int i = 0; i < 256; ++i)
      ASSERT_EQ(kept[r].data_as<float>()[i], -std::max(0.f, inputs[r].data_as<float>()[i])) << "run " << r;
}

// A Conv whose weights the kernel packs (Winograd-eligible 3x3, 64 channels): the session runs
// from the packed copy after the Model is gone, also under another thread count than prepare's.
TEST(MemoryPattern, ConvRunsFromPackedWeightsAfterTheModelIsDropped) {
  Shape xs{1, 64, 12, 12}, ws{64, 64, 3, 3};
  Tensor x = random_floats(xs, 1), w = random_floats(ws, 2), bias = random_floats({64}, 3);
  ModelBuilder b(13);
  b.input("X", DType::kFloat32, {int64_t(1), int64_t(64), int64_t(12), int64_t(12)});
  b.initializer("W", w);
  b.initializer("B", bias);
  auto& n = b.node("Conv", {"X", "W", "B"}, {"Y"});
  ModelBuilder::attr_ints(n, "pads", {1, 1, 1, 1});
  b.output("Y");

  nn::ConvAttrs a;
  a.pads = {1, 1, 1, 1};
  Shape bs{64};
  nn::ConvGeometry g = nn::conv_geometry(a, xs, ws, &bs, "ref");
  Tensor ref = Tensor::allocate(DType::kFloat32, g.output_shape());
  nn::conv_ref(g, x.data_as<float>(), w.data_as<float>(), bias.data_as<float>(), ref.data_as<float>());

  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  Session s(b.load());  // the Model is a temporary
  omp_set_num_threads(saved);
  auto check = [&](const Tensor& y) {
    ASSERT_EQ(y.shape(), ref.shape());
    float worst = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      worst = std::max(worst, std::fabs(y.data_as<float>()[i] - ref.data_as<float>()[i]));
    EXPECT_LT(worst, 1e-3f);
  };
  for (int r = 0; r < 3; ++r) check(s.run({{"X", x}})[0]);
  // a thread whose OpenMP default differs from prepare's (the plan was made for 1 thread)
  std::thread other([&] {
    omp_set_num_threads(2);
    check(s.run({{"X", x}})[0]);
  });
  other.join();
}
