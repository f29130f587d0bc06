// The broadcasting engine's fast paths (tiled repeated rows, strided ternary rows) against the
// naive oracle (broadcast_ref.h), bit for bit, on the shapes exported graphs use and on the
// sizes where the tiles start, end and are split across threads.
#include <gtest/gtest.h>

#include <random>

#include "ops/onnx/elementwise/broadcast.h"
#include "ops/onnx/elementwise/broadcast_ref.h"

namespace pointrt {
namespace {

namespace bcast = elementwise::bcast;
namespace bcast_ref = elementwise::bcast_ref;

template <typename T>
std::vector<T> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<T>(static_cast<int>(rng() % 2001) - 1000) / T(7);
  return v;
}

template <typename O, typename A, typename B, typename F>
void check_binary(const Shape& as, const Shape& bs, F f, uint32_t seed) {
  const Shape os = bcast::broadcast_shape(as, bs, "test");
  const std::vector<A> a = random_values<A>(shape_numel(as), seed);
  const std::vector<B> b = random_values<B>(shape_numel(bs), seed + 1);
  const int64_t n = shape_numel(os);
  std::unique_ptr<O[]> got(new O[n]), want(new O[n]);  // not vector<bool>
  bcast::binary(a.data(), as, b.data(), bs, got.get(), os, f);
  bcast_ref::binary(a.data(), as, b.data(), bs, want.get(), os, f);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], want[i]) << shape_to_string(as) << " op " << shape_to_string(bs) << " at " << i;
}

struct ShapePair {
  Shape a, b;
};

const std::vector<ShapePair> kPairs = {
    {{1, 5, 32, 3}, {1, 5, 1, 3}},     // grouped xyz - centre (yanx27)
    {{1, 5, 1, 3}, {1, 5, 32, 3}},     // the repeated side first
    {{2, 700, 3}, {3}},                // more rows than one tile (2048 / 3 = 682)
    {{70, 256}, {256}},                // the longest tiled row
    {{70, 257}, {257}},                // one past it: the plain row loop
    {{3, 1}, {1, 4}},                  // outer product: not tiled
    {{1, 300, 1, 64}, {1, 1, 5, 64}},  // both repeat along different axes
    {{4, 1200, 17}, {4, 1, 17}},       // 81,600 elements: threads split the tiles
    {{2, 1, 3, 5}, {2, 7, 3, 5}},      // repeated over a middle axis
};

TEST(BroadcastTiled, SubtractMatchesTheOracle) {
  uint32_t seed = 1;
  for (const auto& p : kPairs)
    check_binary<float, float, float>(
        p.a, p.b, [](float x, float y) { return x - y; }, seed++);
}

TEST(BroadcastTiled, MixedTypesAndBoolOutputs) {
  uint32_t seed = 50;
  for (const auto& p : kPairs) {
    check_binary<bool, float, float>(
        p.a, p.b, [](float x, float y) { return x < y; }, seed++);
    check_binary<int64_t, int64_t, int64_t>(
        p.a, p.b, [](int64_t x, int64_t y) { return x * 3 + y; }, seed++);
    check_binary<double, double, float>(
        p.a, p.b, [](double x, float y) { return x / (y + 1000.0); }, seed++);
  }
}

template <typename O, typename F>
void check_ternary(const Shape& cs, const Shape& xs, const Shape& ys, F f, uint32_t seed) {
  const Shape os = bcast::broadcast_shape({&cs, &xs, &ys}, "test");
  std::mt19937 rng(seed);
  std::unique_ptr<bool[]> c(new bool[static_cast<size_t>(shape_numel(cs))]);
  for (int64_t i = 0; i < shape_numel(cs); ++i) c[i] = rng() & 1;
  const auto x = random_values<float>(shape_numel(xs), seed + 1), y = random_values<float>(shape_numel(ys), seed + 2);
  const int64_t n = shape_numel(os);
  std::unique_ptr<O[]> got(new O[n]), want(new O[n]);
  bcast::ternary(c.get(), cs, x.data(), xs, y.data(), ys, got.get(), os, f);
  bcast_ref::ternary(c.get(), cs, x.data(), xs, y.data(), ys, want.get(), os, f);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(got[i], want[i]) << shape_to_string(cs) << " " << shape_to_string(xs) << " " << shape_to_string(ys);
}

TEST(BroadcastTiled, WhereWithScalarAndColumnOperands) {
  auto where = [](bool c, float x, float y) { return c ? x : y; };
  uint32_t seed = 90;
  check_ternary<float>({1, 37, 1024}, {1, 37, 1024}, {1, 37, 1}, where, seed++);
  check_ternary<float>({1000}, {1000}, {}, where, seed++);
  check_ternary<float>({5, 1}, {1, 9}, {5, 9}, where, seed++);
  check_ternary<float>({3, 40000}, {1}, {3, 40000}, where, seed++);  // threads, a scalar operand
  check_ternary<float>({2, 3, 1}, {2, 1, 4}, {1, 3, 4}, where, seed++);
}

}  // namespace
}  // namespace pointrt
