// PointNet++ family (OPS.md): optimised kernels against the naive references on random and
// adversarial clouds (fixed seeds), hand-checked edge cases, error paths through a Session,
// and ONNX schema shape inference at import.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "ops/pointnet2/ball_query.h"
#include "ops/pointnet2/furthest_point_sample.h"
#include "ops/pointnet2/gather_kernels.h"
#include "ops/pointnet2/gather_points.h"
#include "ops/pointnet2/group_points.h"
#include "ops/pointnet2/knn.h"
#include "ops/pointnet2/spatial_grid.h"
#include "ops/pointnet2/three_interpolate.h"
#include "ops/pointnet2/three_nn.h"
#include "pointrt/pointrt.h"
#include "test_util/expect_error.h"

namespace pointrt {
namespace pointnet2 {
namespace {

using test::expect_error_with;
namespace gather_detail = detail;  // gather_kernels.h

// ------------------------------------------------------------------ data helpers
std::vector<float> uniform_cloud(int64_t count, uint32_t seed, float lo = 0.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(count) * 3);
  for (auto& x : v) x = u(rng);
  return v;
}

// Gaussian blobs: dense clusters and empty space (a grid's worst case for balance).
std::vector<float> clustered_cloud(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-5.f, 5.f);
  std::normal_distribution<float> g(0.f, 0.05f);
  float centres[4][3];
  for (auto& c : centres)
    for (float& x : c) x = u(rng);
  std::vector<float> v(static_cast<size_t>(count) * 3);
  for (int64_t i = 0; i < count; ++i) {
    const float* c = centres[rng() % 4];
    for (int a = 0; a < 3; ++a) v[3 * i + a] = c[a] + g(rng);
  }
  return v;
}

// Points on the plane z = 0.5 (one degenerate grid axis).
std::vector<float> planar_cloud(int64_t count, uint32_t seed) {
  auto v = uniform_cloud(count, seed);
  for (int64_t i = 0; i < count; ++i) v[3 * i + 2] = 0.5f;
  return v;
}

// A lattice with spacing `step` (exact in binary): many exactly equal distances and points
// exactly on grid-cell boundaries.
std::vector<float> lattice_cloud(int side, float step) {
  std::vector<float> v;
  for (int z = 0; z < side; ++z)
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        v.push_back(x * step);
        v.push_back(y * step);
        v.push_back(z * step);
      }
  return v;
}

// Concatenate per-batch clouds of equal size.
std::vector<float> batches(const std::vector<std::vector<float>>& clouds) {
  std::vector<float> v;
  for (const auto& c : clouds) v.insert(v.end(), c.begin(), c.end());
  return v;
}

// ------------------------------------------------------------------ ONNX model helpers
struct InputSpec {
  std::string name;
  Tensor value;
};

struct AttrSpec {
  std::string name;
  bool is_float;
  int64_t i;
  float f;
};
AttrSpec int_attr(const std::string& n, int64_t v) { return {n, false, v, 0}; }
AttrSpec float_attr(const std::string& n, float v) { return {n, true, 0, v}; }

void set_value_info(onnx::ValueInfoProto* vi, const std::string& name, DType dtype, const Shape* shape) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  if (shape) {
    auto* s = tt->mutable_shape();
    for (int64_t d : *shape) s->add_dim()->set_dim_value(d);
  }
}

onnx::ModelProto single_node_model(const std::string& op, const std::vector<InputSpec>& inputs,
                                   const std::vector<std::string>& outputs, const std::vector<AttrSpec>& attrs) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("pointnet2_test");
  auto* std_opset = model.add_opset_import();
  std_opset->set_domain("");
  std_opset->set_version(17);
  auto* opset = model.add_opset_import();
  opset->set_domain("pointrt");
  opset->set_version(1);
  auto* graph = model.mutable_graph();
  graph->set_name("g");
  auto* node = graph->add_node();
  node->set_op_type(op);
  node->set_domain("pointrt");
  node->set_name("node_under_test");
  for (const auto& in : inputs) {
    node->add_input(in.name);
    set_value_info(graph->add_input(), in.name, in.value.dtype(), &in.value.shape());
  }
  for (const auto& out : outputs) {
    node->add_output(out);
    auto* vi = graph->add_output();
    vi->set_name(out);  // no type: inferred by the schema at import
  }
  for (const auto& a : attrs) {
    auto* ap = node->add_attribute();
    ap->set_name(a.name);
    if (a.is_float) {
      ap->set_type(onnx::AttributeProto::FLOAT);
      ap->set_f(a.f);
    } else {
      ap->set_type(onnx::AttributeProto::INT);
      ap->set_i(a.i);
    }
  }
  return model;
}

Model load(const onnx::ModelProto& proto) {
  std::string bytes;
  proto.SerializeToString(&bytes);
  return Model::load_from_bytes(bytes.data(), bytes.size());
}

std::vector<Tensor> run_node(const std::string& op, const std::vector<InputSpec>& inputs,
                             const std::vector<std::string>& outputs, const std::vector<AttrSpec>& attrs) {
  Model model = load(single_node_model(op, inputs, outputs, attrs));
  Session session(model);
  std::map<std::string, Tensor> feeds;
  for (const auto& in : inputs) feeds[in.name] = in.value;
  return session.run(feeds);
}

template <typename T>
Tensor tensor_of(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(dtype, shape);
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
  return t;
}
Tensor floats(Shape shape, const std::vector<float>& v) { return tensor_of(DType::kFloat32, std::move(shape), v); }

// ------------------------------------------------------------------ FurthestPointSample
std::vector<int32_t> fps_ref(const std::vector<float>& xyz, int64_t b, int64_t n, int64_t npoint, bool ignore) {
  std::vector<int32_t> out(static_cast<size_t>(b * npoint));
  furthest_point_sample_ref(xyz.data(), b, n, {npoint, ignore}, out.data());
  return out;
}
std::vector<int32_t> fps_opt(const std::vector<float>& xyz, int64_t b, int64_t n, int64_t npoint, bool ignore) {
  std::vector<int32_t> out(static_cast<size_t>(b * npoint), -7);
  furthest_point_sample(xyz.data(), b, n, {npoint, ignore}, out.data());
  return out;
}

TEST(FurthestPointSample, HandExample) {
  // x = 0, 1, 3, 10 on a line: 0, then 10 (idx 3), then 3 (idx 2: min(9, 49)), then 1.
  std::vector<float> xyz = {0, 0, 0, 1, 0, 0, 3, 0, 0, 10, 0, 0};
  EXPECT_EQ(fps_ref(xyz, 1, 4, 4, false), (std::vector<int32_t>{0, 3, 2, 1}));
  EXPECT_EQ(fps_opt(xyz, 1, 4, 4, false), (std::vector<int32_t>{0, 3, 2, 1}));
  // npoint > N: every distance is 0 after four samples, the lowest index repeats.
  EXPECT_EQ(fps_opt(xyz, 1, 4, 6, false), (std::vector<int32_t>{0, 3, 2, 1, 0, 0}));
}

TEST(FurthestPointSample, RandomMatchesReference) {
  uint32_t seed = 1;
  for (int64_t n : {1, 2, 3, 7, 255, 256, 257, 1000, 2049})
    for (int64_t npoint : {int64_t(1), int64_t(2), int64_t(17), n, n + 3})
      for (bool ignore : {false, true}) {
        int64_t b = 3;
        auto xyz = uniform_cloud(b * n, seed++, -1.f, 1.f);
        // A few points inside the ignore_origin ball (|p|^2 <= 1e-3), including index 0 sometimes.
        for (int64_t i = 0; i < b * n; i += 5)
          for (int a = 0; a < 3; ++a) xyz[3 * i + a] *= 0.01f;
        EXPECT_EQ(fps_opt(xyz, b, n, npoint, ignore), fps_ref(xyz, b, n, npoint, ignore))
            << "n=" << n << " npoint=" << npoint << " ignore=" << ignore;
      }
}

TEST(FurthestPointSample, DuplicatesAndTies) {
  // All points identical: after idx[0] every distance is 0, so the lowest index (0) repeats.
  std::vector<float> same(3 * 50, 0.25f);
  EXPECT_EQ(fps_opt(same, 1, 50, 5, false), (std::vector<int32_t>(5, 0)));
  // A lattice: huge numbers of exact distance ties, broken by the lowest index.
  auto lattice = lattice_cloud(9, 0.125f);
  int64_t n = static_cast<int64_t>(lattice.size() / 3);
  EXPECT_EQ(fps_opt(lattice, 1, n, 200, false), fps_ref(lattice, 1, n, 200, false));
  EXPECT_EQ(fps_opt(lattice, 1, n, 200, true), fps_ref(lattice, 1, n, 200, true));
}

TEST(FurthestPointSample, IgnoreOrigin) {
  // Points 0, 2 and 4 sit at the origin (or within |p|^2 <= 1e-3); they are never sampled
  // (idx[0] = 0 regardless).
  std::vector<float> xyz = {0, 0, 0, 1, 0, 0, 0.01f, 0.01f, 0.01f, 0, 2, 0, 0, 0, 0.0316f, 0, 0, 3};
  auto got = fps_opt(xyz, 1, 6, 6, true);
  EXPECT_EQ(got, fps_ref(xyz, 1, 6, 6, true));
  EXPECT_EQ(got[0], 0);
  for (size_t j = 1; j < got.size(); ++j) EXPECT_TRUE(got[j] == 1 || got[j] == 3 || got[j] == 5) << got[j];
  // Without the rule the near-origin points are ordinary candidates.
  EXPECT_EQ(fps_opt(xyz, 1, 6, 6, false), fps_ref(xyz, 1, 6, 6, false));
  // No candidate at all: every index is 0.
  std::vector<float> origin(3 * 8, 0.f);
  EXPECT_EQ(fps_opt(origin, 1, 8, 4, true), (std::vector<int32_t>(4, 0)));
}

TEST(FurthestPointSample, NonFinitePoints) {
  auto xyz = uniform_cloud(300, 11);
  xyz[3 * 7] = std::numeric_limits<float>::quiet_NaN();
  xyz[3 * 50 + 1] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(fps_opt(xyz, 1, 300, 40, false), fps_ref(xyz, 1, 300, 40, false));
}

TEST(FurthestPointSample, SplitOverThreads) {
  // Large enough for the path that shares one batch between threads (when there are several).
  int threads = omp_get_max_threads();
  int64_t n = kFpsMinPointsPerThread * std::max(2, threads) + 123;
  auto xyz = uniform_cloud(n, 5);
  EXPECT_EQ(fps_opt(xyz, 1, n, 64, false), fps_ref(xyz, 1, n, 64, false));
  if (threads == 1) {
    omp_set_num_threads(2);  // force the split path even on one core
    EXPECT_EQ(fps_opt(xyz, 1, n, 64, true), fps_ref(xyz, 1, n, 64, true));
    omp_set_num_threads(threads);
  }
}

TEST(FurthestPointSample, SessionAndErrors) {
  auto xyz = uniform_cloud(2 * 100, 3);
  auto out = run_node("FurthestPointSample", {{"xyz", floats({2, 100, 3}, xyz)}}, {"idx"}, {int_attr("npoint", 10)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].shape(), (Shape{2, 10}));
  auto want = fps_ref(xyz, 2, 100, 10, false);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out[0].data_as<int32_t>()));

  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({1, 0, 3}, {})}}, {"idx"}, {int_attr("npoint", 4)});
      },
      {"node_under_test", "'xyz'", "N = 0"});
  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({1, 2, 4}, std::vector<float>(8))}}, {"idx"},
                 {int_attr("npoint", 4)});
      },
      {"node_under_test", "'xyz'", "last dimension 4"});
  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({2, 3}, std::vector<float>(6))}}, {"idx"},
                 {int_attr("npoint", 4)});
      },
      {"node_under_test", "rank 3"});
  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({1, 2, 3}, std::vector<float>(6))}}, {"idx"},
                 {int_attr("npoint", 0)});
      },
      {"node_under_test", "npoint", "0"});
  expect_error_with(
      [] {
        run_node("FurthestPointSample", {{"xyz", floats({1, 2, 3}, std::vector<float>(6))}}, {"idx"}, {});
      },
      {"node_under_test", "npoint"});
}

// ------------------------------------------------------------------ BallQuery
std::vector<int32_t> bq_ref(const std::vector<float>& xyz, const std::vector<float>& centres, int64_t b, int64_t n,
                            int64_t m, BallQueryAttrs a) {
  std::vector<int32_t> out(static_cast<size_t>(b * m * a.nsample));
  ball_query_ref(xyz.data(), centres.data(), b, n, m, a, out.data());
  return out;
}
std::vector<int32_t> bq_opt(const std::vector<float>& xyz, const std::vector<float>& centres, int64_t b, int64_t n,
                            int64_t m, BallQueryAttrs a) {
  std::vector<int32_t> out(static_cast<size_t>(b * m * a.nsample), -7);
  ball_query(xyz.data(), centres.data(), b, n, m, a, out.data());
  return out;
}

TEST(BallQuery, HandExample) {
  // Points at x = 0, 0.5, 2, 0.25, 0.75 (index order); centre at 0 with radius 1.
  std::vector<float> xyz = {0, 0, 0, 0.5f, 0, 0, 2, 0, 0, 0.25f, 0, 0, 0.75f, 0, 0};
  std::vector<float> c = {0, 0, 0};
  // First three hits in point order: 0, 1, 3 (not the nearest: 0, 3, 1).
  EXPECT_EQ(bq_opt(xyz, c, 1, 5, 1, {1.f, 3, 0.f}), (std::vector<int32_t>{0, 1, 3}));
  // Fewer hits (4) than nsample (6): the first hit fills the remaining slots.
  EXPECT_EQ(bq_opt(xyz, c, 1, 5, 1, {1.f, 6, 0.f}), (std::vector<int32_t>{0, 1, 3, 4, 0, 0}));
  // min_radius 0.3 drops 0.25 but d2 == 0 is always accepted.
  EXPECT_EQ(bq_opt(xyz, c, 1, 5, 1, {1.f, 4, 0.3f}), (std::vector<int32_t>{0, 1, 4, 0}));
  // A centre with no hit: all zeros.
  std::vector<float> far = {100, 100, 100};
  EXPECT_EQ(bq_opt(xyz, far, 1, 5, 1, {1.f, 3, 0.f}), (std::vector<int32_t>{0, 0, 0}));
  // Strict upper bound: a point exactly at the radius (0.5, exact in binary) is not a hit.
  std::vector<float> two = {0.5f, 0, 0, 0.25f, 0, 0};
  EXPECT_EQ(bq_opt(two, c, 1, 2, 1, {0.5f, 2, 0.f}), (std::vector<int32_t>{1, 1}));
  // N = 0: every centre gets zeros.
  EXPECT_EQ(bq_opt({}, c, 1, 0, 1, {1.f, 2, 0.f}), (std::vector<int32_t>{0, 0}));
}

TEST(BallQuery, NearTheRadius) {
  // Points 2e-5 (relative) inside and outside the radius along axes and diagonals: inside
  // accepted, outside not, whatever the grid does.
  const float r = 0.2f;
  std::vector<float> xyz;
  std::vector<int32_t> inside;
  const float dirs[4][3] = {{1, 0, 0}, {0, -1, 0}, {0.6f, 0.8f, 0}, {0.48f, 0.6f, 0.64f}};
  int32_t index = 0;
  for (const auto& d : dirs)
    for (float scale : {1.f - 2e-5f, 1.f + 2e-5f}) {
      for (int a = 0; a < 3; ++a) xyz.push_back(0.5f + d[a] * r * scale);
      if (scale < 1) inside.push_back(index);
      ++index;
    }
  std::vector<float> c = {0.5f, 0.5f, 0.5f};
  auto got = bq_opt(xyz, c, 1, index, 1, {r, 8, 0.f});
  EXPECT_EQ(got, bq_ref(xyz, c, 1, index, 1, {r, 8, 0.f}));
  std::vector<int32_t> want = inside;
  while (want.size() < 8) want.push_back(inside[0]);
  EXPECT_EQ(got, want);
}

TEST(BallQuery, RandomMatchesReference) {
  uint32_t seed = 100;
  for (int64_t n : {1, 2, 17, 1000, 4097})
    for (int64_t m : {1, 33, 300})
      for (float radius : {0.05f, 0.1f, 0.3f, 2.f})
        for (int64_t nsample : {1, 5, 32, 64}) {
          int64_t b = 2;
          auto xyz = uniform_cloud(b * n, seed++);
          auto centres = uniform_cloud(b * m, seed++, -0.1f, 1.1f);
          for (float min_r : {0.f, 0.03f}) {
            BallQueryAttrs a{radius, nsample, min_r};
            ASSERT_EQ(bq_opt(xyz, centres, b, n, m, a), bq_ref(xyz, centres, b, n, m, a))
                << "n=" << n << " m=" << m << " r=" << radius << " nsample=" << nsample << " min_r=" << min_r;
          }
        }
}

TEST(BallQuery, LargeBallsStopEarly) {
  // Many hits per ball: the blocked walk must still give the first nsample in point order.
  const int64_t n = 16384, m = 300;
  auto xyz = uniform_cloud(n, 7);
  auto centres = uniform_cloud(m, 8);
  for (float radius : {0.1f, 0.3f, 0.6f})
    for (int64_t nsample : {16, 32, 64})
      ASSERT_EQ(bq_opt(xyz, centres, 1, n, m, {radius, nsample, 0.f}),
                bq_ref(xyz, centres, 1, n, m, {radius, nsample, 0.f}))
          << radius << " " << nsample;
}

TEST(BallQuery, AdversarialClouds) {
  // Centres on the points (d2 == 0), duplicate points, a lattice whose spacing equals the
  // radius (distances exactly at the bound; points exactly on cell boundaries), clusters,
  // a plane, and non-finite coordinates.
  auto lattice = lattice_cloud(12, 0.125f);
  int64_t ln = static_cast<int64_t>(lattice.size() / 3);
  for (float radius : {0.125f, 0.25f, 0.1875f})
    for (float min_r : {0.f, 0.125f})
      EXPECT_EQ(bq_opt(lattice, lattice, 1, ln, ln, {radius, 16, min_r}),
                bq_ref(lattice, lattice, 1, ln, ln, {radius, 16, min_r}));

  auto dup = uniform_cloud(40, 9);
  dup = batches({dup, dup, dup, dup, dup});  // every point five times
  EXPECT_EQ(bq_opt(dup, dup, 1, 200, 200, {0.2f, 7, 0.f}), bq_ref(dup, dup, 1, 200, 200, {0.2f, 7, 0.f}));

  auto clusters = clustered_cloud(3000, 10);
  auto qc = clustered_cloud(200, 10);
  EXPECT_EQ(bq_opt(clusters, qc, 1, 3000, 200, {0.05f, 32, 0.f}), bq_ref(clusters, qc, 1, 3000, 200, {0.05f, 32, 0.f}));
  EXPECT_EQ(bq_opt(clusters, qc, 1, 3000, 200, {1.f, 32, 0.f}), bq_ref(clusters, qc, 1, 3000, 200, {1.f, 32, 0.f}));

  auto plane = planar_cloud(2000, 12);
  auto pq = uniform_cloud(100, 13);
  EXPECT_EQ(bq_opt(plane, pq, 1, 2000, 100, {0.1f, 16, 0.f}), bq_ref(plane, pq, 1, 2000, 100, {0.1f, 16, 0.f}));

  auto nf = uniform_cloud(500, 14);
  nf[3 * 3] = std::numeric_limits<float>::quiet_NaN();
  nf[3 * 9 + 2] = -std::numeric_limits<float>::infinity();
  auto nq = uniform_cloud(20, 15);
  nq[0] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(bq_opt(nf, nq, 1, 500, 20, {0.3f, 8, 0.f}), bq_ref(nf, nq, 1, 500, 20, {0.3f, 8, 0.f}));

  // A tiny radius on a spread-out cloud: the grid hits its cell cap and grows its cells.
  auto wide = uniform_cloud(1000, 16, -1000.f, 1000.f);
  EXPECT_EQ(bq_opt(wide, wide, 1, 1000, 1000, {1e-3f, 4, 0.f}), bq_ref(wide, wide, 1, 1000, 1000, {1e-3f, 4, 0.f}));
}

TEST(BallQuery, StrategiesAndQueryOrder) {
  // Centre counts around the prefetch distance and the OpenMP chunk (so prefetches cross batch
  // ends), B = 3, radii giving about nsample/2, 2*nsample and 8*nsample hits per ball (the
  // single-pass, single-pass/block boundary and block strategies), point counts 0, 1, odd and
  // around powers of two, and a NaN centre (it goes through the sorted coordinate copy).
  uint32_t seed = 2000;
  const int64_t b = 3, nsample = 32;
  for (int64_t n : {0, 1, 33, 2047, 2049})
    for (int64_t m : {int64_t{0}, int64_t{1}, kPrefetchQueries - 1, kPrefetchQueries, kPrefetchQueries + 1, int64_t{17},
                      int64_t{257}})
      for (double hits : {16.0, 64.0, 256.0}) {
        auto xyz = uniform_cloud(b * n, seed++);
        auto centres = uniform_cloud(b * m, seed++, -0.05f, 1.05f);
        if (m > 3) centres[3 * (m + 2) + 1] = std::numeric_limits<float>::quiet_NaN();
        const float radius = static_cast<float>(std::cbrt(hits / (4.18879 * std::max<int64_t>(n, 1))));
        BallQueryAttrs a{radius, nsample, 0.f};
        ASSERT_EQ(bq_opt(xyz, centres, b, n, m, a), bq_ref(xyz, centres, b, n, m, a))
            << "n=" << n << " m=" << m << " hits=" << hits;
      }
}

TEST(BallQuery, SessionAndErrors) {
  auto xyz = uniform_cloud(2 * 64, 20);
  auto c = uniform_cloud(2 * 5, 21);
  auto out = run_node("BallQuery", {{"xyz", floats({2, 64, 3}, xyz)}, {"new_xyz", floats({2, 5, 3}, c)}}, {"idx"},
                      {float_attr("radius", 0.4f), int_attr("nsample", 6)});
  EXPECT_EQ(out[0].shape(), (Shape{2, 5, 6}));
  auto want = bq_ref(xyz, c, 2, 64, 5, {0.4f, 6, 0.f});
  EXPECT_TRUE(std::equal(want.begin(), want.end(), out[0].data_as<int32_t>()));
  // M = 0 is fine.
  out = run_node("BallQuery", {{"xyz", floats({1, 4, 3}, std::vector<float>(12))}, {"new_xyz", floats({1, 0, 3}, {})}},
                 {"idx"}, {float_attr("radius", 0.4f), int_attr("nsample", 2)});
  EXPECT_EQ(out[0].shape(), (Shape{1, 0, 2}));

  expect_error_with(
      [&] {
        run_node("BallQuery",
                 {{"xyz", floats({2, 64, 3}, xyz)}, {"new_xyz", floats({1, 5, 3}, std::vector<float>(15))}}, {"idx"},
                 {float_attr("radius", 0.4f), int_attr("nsample", 6)});
      },
      {"node_under_test", "'new_xyz'", "batch 1", "batch 2"});
  expect_error_with(
      [&] {
        run_node("BallQuery", {{"xyz", floats({2, 64, 3}, xyz)}, {"new_xyz", floats({2, 5, 3}, c)}}, {"idx"},
                 {float_attr("radius", -1.f), int_attr("nsample", 6)});
      },
      {"node_under_test", "radius", "-1"});
  expect_error_with(
      [&] {
        run_node("BallQuery", {{"xyz", floats({2, 64, 3}, xyz)}, {"new_xyz", floats({2, 5, 3}, c)}}, {"idx"},
                 {float_attr("radius", 1.f), int_attr("nsample", 0)});
      },
      {"node_under_test", "nsample"});
}

// ------------------------------------------------------------------ KNN
struct KnnResult {
  std::vector<int32_t> idx;
  std::vector<float> d2;
  bool operator==(const KnnResult& o) const {
    if (idx != o.idx || d2.size() != o.d2.size()) return false;
    for (size_t i = 0; i < d2.size(); ++i)  // bitwise, NaN included
      if (std::memcmp(&d2[i], &o.d2[i], sizeof(float)) != 0) return false;
    return true;
  }
};
KnnResult knn_run(bool optimised, const std::vector<float>& xyz, const std::vector<float>& q, int64_t b, int64_t n,
                  int64_t m, int64_t k) {
  KnnResult r{std::vector<int32_t>(static_cast<size_t>(b * m * k), -7),
              std::vector<float>(static_cast<size_t>(b * m * k), -7.f)};
  if (optimised)
    knn(xyz.data(), q.data(), b, n, m, {k}, r.idx.data(), r.d2.data());
  else
    knn_ref(xyz.data(), q.data(), b, n, m, {k}, r.idx.data(), r.d2.data());
  return r;
}
void expect_knn_match(const std::vector<float>& xyz, const std::vector<float>& q, int64_t b, int64_t n, int64_t m,
                      int64_t k) {
  EXPECT_TRUE(knn_run(true, xyz, q, b, n, m, k) == knn_run(false, xyz, q, b, n, m, k))
      << "n=" << n << " m=" << m << " k=" << k;
}

TEST(KNN, HandExample) {
  // Points at x = 3, 1, 2, 1 (indices 0..3); query at 0: d2 = 1 (idx 1), 1 (idx 3), 4, 9.
  std::vector<float> xyz = {3, 0, 0, 1, 0, 0, 2, 0, 0, 1, 0, 0};
  std::vector<float> q = {0, 0, 0};
  auto r = knn_run(true, xyz, q, 1, 4, 1, 3);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{1, 3, 2}));
  EXPECT_EQ(r.d2, (std::vector<float>{1, 1, 4}));
  // N = 1, k = 1.
  r = knn_run(true, {0.5f, 0.5f, 0.5f}, q, 1, 1, 1, 1);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{0}));
}

TEST(KNN, RandomMatchesReference) {
  uint32_t seed = 300;
  for (int64_t n : {1, 2, 5, 64, 1000, 3001})
    for (int64_t k : {1, 3, 16, 64}) {
      if (k > n) continue;
      for (int64_t m : {1, 37, 400}) {
        auto xyz = uniform_cloud(2 * n, seed++);
        auto q = uniform_cloud(2 * m, seed++, -0.2f, 1.2f);
        expect_knn_match(xyz, q, 2, n, m, k);
      }
    }
  auto xyz = uniform_cloud(50, 7);
  expect_knn_match(xyz, xyz, 1, 50, 50, 50);  // k = N
  expect_knn_match(xyz, {}, 1, 50, 0, 5);     // M = 0
}

TEST(KNN, QueryOrderAcrossBatches) {
  // Prefetching looks kPrefetchQueries ahead, across batch ends, including into a batch that
  // takes the exhaustive path (a non-finite point) and has no sorted query copy.
  uint32_t seed = 2100;
  for (int64_t m : {int64_t{1}, kPrefetchQueries - 1, kPrefetchQueries, kPrefetchQueries + 1, int64_t{33}})
    for (int64_t n : {17, 1025}) {
      const int64_t b = 3;
      auto xyz = uniform_cloud(b * n, seed++);
      auto q = uniform_cloud(b * m, seed++, -0.1f, 1.1f);
      expect_knn_match(xyz, q, b, n, m, 5);
      xyz[3 * n + 4] = std::numeric_limits<float>::infinity();  // batch 1 goes exhaustive
      q[0] = std::numeric_limits<float>::quiet_NaN();
      expect_knn_match(xyz, q, b, n, m, 5);
    }
}

TEST(KNN, AdversarialClouds) {
  auto lattice = lattice_cloud(10, 0.125f);  // exact ties everywhere, points on cell boundaries
  int64_t ln = static_cast<int64_t>(lattice.size() / 3);
  for (int64_t k : {1, 6, 7, 19, 27, 33}) expect_knn_match(lattice, lattice, 1, ln, ln, k);
  auto half = lattice;  // queries between lattice points: 8 equidistant neighbours
  for (auto& v : half) v += 0.0625f;
  expect_knn_match(lattice, half, 1, ln, ln, 8);
  expect_knn_match(lattice, half, 1, ln, ln, 9);

  auto dup = uniform_cloud(30, 40);
  dup = batches({dup, dup, dup, dup});
  expect_knn_match(dup, dup, 1, 120, 120, 10);

  auto clusters = clustered_cloud(4000, 41);
  auto far = uniform_cloud(100, 42, -50.f, 50.f);  // mostly outside the clusters' box
  expect_knn_match(clusters, std::vector<float>(clusters.begin(), clusters.begin() + 3 * 600), 1, 4000, 600, 16);
  expect_knn_match(clusters, far, 1, 4000, 100, 5);

  auto plane = planar_cloud(3000, 43);
  auto pq = uniform_cloud(300, 44);
  expect_knn_match(plane, pq, 1, 3000, 300, 12);
  auto cube = uniform_cloud(5000, 47);
  auto distant = uniform_cloud(200, 48, -1000.f, 1000.f);  // far outside on every side
  expect_knn_match(cube, distant, 1, 5000, 200, 3);
  expect_knn_match(cube, distant, 1, 5000, 200, 40);

  auto nf = uniform_cloud(2 * 400, 45);
  nf[3 * 11] = std::numeric_limits<float>::quiet_NaN();  // batch 0: exhaustive path
  nf[3 * 20 + 1] = std::numeric_limits<float>::infinity();
  auto nq = uniform_cloud(2 * 30, 46);
  nq[3 * 40 + 2] = std::numeric_limits<float>::quiet_NaN();  // a NaN query in batch 1
  expect_knn_match(nf, nq, 2, 400, 30, 400);
  expect_knn_match(nf, nq, 2, 400, 30, 7);
}

TEST(KNN, SessionAndErrors) {
  auto xyz = uniform_cloud(2 * 50, 50);
  auto q = uniform_cloud(2 * 7, 51);
  auto out = run_node("KNN", {{"xyz", floats({2, 50, 3}, xyz)}, {"new_xyz", floats({2, 7, 3}, q)}}, {"idx", "dist2"},
                      {int_attr("k", 4)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 7, 4}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 7, 4}));
  auto want = knn_run(false, xyz, q, 2, 50, 7, 4);
  EXPECT_TRUE(std::equal(want.idx.begin(), want.idx.end(), out[0].data_as<int32_t>()));
  EXPECT_TRUE(std::equal(want.d2.begin(), want.d2.end(), out[1].data_as<float>()));
  // Only the idx output.
  out = run_node("KNN", {{"xyz", floats({2, 50, 3}, xyz)}, {"new_xyz", floats({2, 7, 3}, q)}}, {"idx"},
                 {int_attr("k", 4)});
  EXPECT_TRUE(std::equal(want.idx.begin(), want.idx.end(), out[0].data_as<int32_t>()));

  expect_error_with(
      [&] {
        run_node("KNN", {{"xyz", floats({2, 50, 3}, xyz)}, {"new_xyz", floats({2, 7, 3}, q)}}, {"idx", "dist2"},
                 {int_attr("k", 51)});
      },
      {"node_under_test", "'k' = 51", "N = 50", "'xyz'"});
  expect_error_with(
      [&] {
        run_node("KNN", {{"xyz", floats({1, 0, 3}, {})}, {"new_xyz", floats({1, 1, 3}, {0, 0, 0})}}, {"idx"},
                 {int_attr("k", 1)});
      },
      {"node_under_test", "N = 0"});
  expect_error_with(
      [&] {
        run_node("KNN", {{"xyz", floats({2, 50, 3}, xyz)}, {"new_xyz", floats({2, 7, 3}, q)}}, {"idx"},
                 {int_attr("k", 0)});
      },
      {"node_under_test", "'k'"});
}

// ------------------------------------------------------------------ ThreeNN
struct ThreeNNResult {
  std::vector<float> dist;
  std::vector<int32_t> idx;
};
ThreeNNResult three_nn_run(bool optimised, const std::vector<float>& u, const std::vector<float>& k, int64_t b,
                           int64_t n, int64_t m) {
  ThreeNNResult r{std::vector<float>(static_cast<size_t>(b * n * 3), -7.f),
                  std::vector<int32_t>(static_cast<size_t>(b * n * 3), -7)};
  if (optimised)
    three_nn(u.data(), k.data(), b, n, m, r.dist.data(), r.idx.data());
  else
    three_nn_ref(u.data(), k.data(), b, n, m, r.dist.data(), r.idx.data());
  return r;
}
void expect_three_nn_match(const std::vector<float>& u, const std::vector<float>& k, int64_t b, int64_t n, int64_t m) {
  auto a = three_nn_run(true, u, k, b, n, m), r = three_nn_run(false, u, k, b, n, m);
  EXPECT_EQ(a.idx, r.idx) << "n=" << n << " m=" << m;
  EXPECT_EQ(a.dist, r.dist) << "n=" << n << " m=" << m;
}

TEST(ThreeNN, HandExample) {
  std::vector<float> known = {0, 0, 3, 0, 0, 1, 0, 0, 2, 0, 0, 1};  // z = 3, 1, 2, 1
  std::vector<float> u = {0, 0, 0};
  auto r = three_nn_run(true, u, known, 1, 1, 4);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{1, 3, 2}));
  EXPECT_EQ(r.dist, (std::vector<float>{1, 1, 2}));  // Euclidean, not squared
  // m < 3: missing slots have index 0 and distance 1e20.
  r = three_nn_run(true, u, {0, 4, 0, 0, 3, 0}, 1, 1, 2);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{1, 0, 0}));
  EXPECT_EQ(r.dist, (std::vector<float>{3, 4, 1e20f}));
  r = three_nn_run(true, u, {0, 4, 0}, 1, 1, 1);
  EXPECT_EQ(r.idx, (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(r.dist, (std::vector<float>{4, 1e20f, 1e20f}));
}

TEST(ThreeNN, RandomAndAdversarial) {
  uint32_t seed = 500;
  for (int64_t m : {1, 2, 3, 4, 100, 4096})
    for (int64_t n : {0, 1, 50, 1000}) {
      auto known = uniform_cloud(2 * m, seed++);
      auto u = uniform_cloud(2 * n, seed++, -0.3f, 1.3f);
      expect_three_nn_match(u, known, 2, n, m);
    }
  auto lattice = lattice_cloud(10, 0.125f);
  int64_t ln = static_cast<int64_t>(lattice.size() / 3);
  auto half = lattice;
  for (auto& v : half) v += 0.0625f;
  expect_three_nn_match(half, lattice, 1, ln, ln);
  expect_three_nn_match(lattice, lattice, 1, ln, ln);
  auto clusters = clustered_cloud(2000, 60);
  auto far = uniform_cloud(200, 61, -20.f, 20.f);
  expect_three_nn_match(far, clusters, 1, 200, 2000);
  auto cube = uniform_cloud(5000, 66);
  expect_three_nn_match(uniform_cloud(300, 67, -1000.f, 1000.f), cube, 1, 300, 5000);
  auto plane = planar_cloud(1000, 62);
  expect_three_nn_match(uniform_cloud(300, 63), plane, 1, 300, 1000);
  // Non-finite known points never qualify; a non-finite query has no neighbour.
  auto nf = uniform_cloud(4, 64);
  nf[0] = std::numeric_limits<float>::quiet_NaN();
  nf[4] = std::numeric_limits<float>::infinity();
  auto nq = uniform_cloud(3, 65);
  nq[3] = std::numeric_limits<float>::quiet_NaN();
  expect_three_nn_match(nq, nf, 1, 3, 4);
  auto r = three_nn_run(true, nq, nf, 1, 3, 4);
  EXPECT_EQ(r.idx[2], 0);
  EXPECT_EQ(r.dist[2], 1e20f);  // only two finite known points
  EXPECT_EQ(r.dist[3], 1e20f);  // the NaN query
}

TEST(ThreeNN, QueryOrderAcrossBatches) {
  uint32_t seed = 2200;
  for (int64_t n : {int64_t{1}, kPrefetchQueries - 1, kPrefetchQueries, kPrefetchQueries + 1, int64_t{65}})
    for (int64_t m : {1, 4, 1025}) {
      const int64_t b = 3;
      auto known = uniform_cloud(b * m, seed++);
      auto u = uniform_cloud(b * n, seed++, -0.2f, 1.2f);
      u[3 * (b * n - 1)] = std::numeric_limits<float>::quiet_NaN();
      expect_three_nn_match(u, known, b, n, m);
    }
}

TEST(ThreeNN, SessionAndErrors) {
  auto u = uniform_cloud(10, 70), k = uniform_cloud(8, 71);
  auto out = run_node("ThreeNN",
                      {{"unknown", floats({1, 3, 3}, std::vector<float>(u.begin(), u.begin() + 9))},
                       {"known", floats({1, 2, 3}, std::vector<float>(k.begin(), k.begin() + 6))}},
                      {"dist", "idx"}, {});
  EXPECT_EQ(out[0].shape(), (Shape{1, 3, 3}));
  EXPECT_EQ(out[1].dtype(), DType::kInt32);
  EXPECT_EQ(out[0].data_as<float>()[2], 1e20f);
  expect_error_with(
      [&] {
        run_node("ThreeNN", {{"unknown", floats({1, 1, 3}, {0, 0, 0})}, {"known", floats({1, 0, 3}, {})}},
                 {"dist", "idx"}, {});
      },
      {"node_under_test", "'known'", "m = 0"});
}

// ------------------------------------------------------------------ gathers
template <typename Index>
std::vector<Index> random_indices(int64_t count, int64_t limit, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Index> v(static_cast<size_t>(count));
  for (auto& x : v) x = static_cast<Index>(limit ? rng() % limit : 0);
  return v;
}

template <typename Index>
void check_gathers(uint32_t seed) {
  for (int64_t b : {1, 3})
    for (int64_t c : {0, 1, 5, 64})
      for (int64_t n : {1, 7, 300})
        for (int64_t m : {0, 1, 33}) {
          auto f = uniform_cloud(b * c * n, seed++);  // 3x more than needed; fine
          f.resize(static_cast<size_t>(b * c * n));
          auto idx = random_indices<Index>(b * m, n, seed++);
          std::vector<float> a(static_cast<size_t>(b * c * m), -1.f), r(a.size(), -2.f);
          gather_points(f.data(), idx.data(), b, c, n, m, a.data());
          gather_points_ref(f.data(), idx.data(), b, c, n, m, r.data());
          EXPECT_EQ(a, r);
          for (int64_t s : {1, 5}) {
            auto gidx = random_indices<Index>(b * m * s, n, seed++);
            std::vector<float> ga(static_cast<size_t>(b * c * m * s), -1.f), gr(ga.size(), -2.f);
            group_points(f.data(), gidx.data(), b, c, n, m, s, ga.data());
            group_points_ref(f.data(), gidx.data(), b, c, n, m, s, gr.data());
            EXPECT_EQ(ga, gr);
          }
          auto tidx = random_indices<Index>(b * m * 3, n, seed++);
          auto w = uniform_cloud(b * m, seed++);
          std::vector<float> ta(static_cast<size_t>(b * c * m), -1.f), tr(ta.size(), -2.f);
          three_interpolate(f.data(), tidx.data(), w.data(), b, c, n, m, ta.data());
          three_interpolate_ref(f.data(), tidx.data(), w.data(), b, c, n, m, tr.data());
          EXPECT_EQ(ta, tr);
        }
}

TEST(Gathers, MatchReferenceInt32) { check_gathers<int32_t>(800); }
TEST(Gathers, MatchReferenceInt64) { check_gathers<int64_t>(900); }

// Sizes around the kernels' tiles (16-index/16-channel blocks of the point-major path,
// ThreeInterpolate's 512-point tiles, partial channel blocks: rows of 40000/49153 floats give
// blocks of 2 channels), both paths of each operator, and outputs large enough for streaming
// stores (with scalar heads up to the first 64-byte boundary).
template <typename Index>
void check_blocked_gathers(uint32_t seed) {
  const int64_t kIndexTile = 1024;
  const int64_t b = 2;
  // n = 40000 (rows longer than L1) with 17 channels (two 16-channel chunks) takes the
  // point-major path when M*S >= n; the rest the row-by-row gather.
  for (int64_t n : {int64_t{300}, int64_t{40000}})
    for (int64_t c : {1, 5, 17})
      for (int64_t m : {kIndexTile - 1, kIndexTile, kIndexTile + 1, 2 * kIndexTile + 1}) {
        auto f = uniform_cloud(b * c * n, seed++);
        f.resize(static_cast<size_t>(b * c * n));
        auto idx = random_indices<Index>(b * m, n, seed++);
        std::vector<float> a(static_cast<size_t>(b * c * m), -1.f), r(a.size(), -2.f);
        gather_points(f.data(), idx.data(), b, c, n, m, a.data());
        gather_points_ref(f.data(), idx.data(), b, c, n, m, r.data());
        ASSERT_EQ(a, r) << "gather n=" << n << " c=" << c << " m=" << m;
        const int64_t s = n > 1000 ? 20 : 3;  // M*S >= n for the long rows
        auto gidx = random_indices<Index>(b * m * s, n, seed++);
        std::vector<float> ga(static_cast<size_t>(b * c * m * s), -1.f), gr(ga.size(), -2.f);
        group_points(f.data(), gidx.data(), b, c, n, m, s, ga.data());
        group_points_ref(f.data(), gidx.data(), b, c, n, m, s, gr.data());
        ASSERT_EQ(ga, gr) << "group n=" << n << " c=" << c << " m=" << m;
      }
  for (int64_t points : {1, 15, 16, 17, 511, 512, 513, 1025})
    for (int64_t m : {3, 49153}) {  // 49153 features per row: channel blocks of 2
      const int64_t c = 5;
      auto f = uniform_cloud(b * c * m, seed++);
      f.resize(static_cast<size_t>(b * c * m));
      auto tidx = random_indices<Index>(b * points * 3, m, seed++);
      auto w = uniform_cloud(b * points, seed++);
      std::vector<float> ta(static_cast<size_t>(b * c * points), -1.f), tr(ta.size(), -2.f);
      three_interpolate(f.data(), tidx.data(), w.data(), b, c, m, points, ta.data());
      three_interpolate_ref(f.data(), tidx.data(), w.data(), b, c, m, points, tr.data());
      ASSERT_EQ(ta, tr) << "interpolate points=" << points << " m=" << m;
    }
  // Streaming stores: outputs over gather_detail::kStreamOutputBytes. 3 channels take the
  // row-by-row gather / ThreeInterpolate's channel-block path (odd rows), 12 and 17 the
  // point-major ones (rows a multiple of 16 long: streamed after a scalar head up to the first
  // 64-byte boundary); feature rows of 9001 floats are longer than L1.
  for (int64_t c : {3, 12, 17}) {
    const int64_t row = c == 3 ? gather_detail::kStreamOutputBytes / 4 / c + 7
                               : (gather_detail::kStreamOutputBytes / 4 / c / 16 + 1) * 16;
    const int64_t n = 9001;
    auto f = uniform_cloud(c * n, seed++);
    f.resize(static_cast<size_t>(c * n));
    auto idx = random_indices<Index>(row, n, seed++);
    std::vector<float> a(static_cast<size_t>(c * row), -1.f), r(a.size(), -2.f);
    group_points(f.data(), idx.data(), 1, c, n, row, 1, a.data());
    group_points_ref(f.data(), idx.data(), 1, c, n, row, 1, r.data());
    ASSERT_TRUE(a == r) << "streamed group, c=" << c;
    auto tidx = random_indices<Index>(row * 3, n, seed++);
    auto w = uniform_cloud(row, seed++);
    three_interpolate(f.data(), tidx.data(), w.data(), 1, c, n, row, a.data());
    three_interpolate_ref(f.data(), tidx.data(), w.data(), 1, c, n, row, r.data());
    ASSERT_TRUE(a == r) << "streamed interpolate, c=" << c;
  }
}

TEST(Gathers, BlockedSizesInt32) { check_blocked_gathers<int32_t>(3000); }
TEST(Gathers, BlockedSizesInt64) { check_blocked_gathers<int64_t>(4000); }

TEST(Gathers, ThreeInterpolateOrder) {
  // (w0*f0 + w1*f1) + w2*f2 in float32: 1e8 + 1 - 1e8 is 0 in this order, not 1.
  std::vector<float> f = {1e8f, 1.f, -1e8f};
  std::vector<int32_t> idx = {0, 1, 2};
  std::vector<float> w = {1, 1, 1}, out(1);
  three_interpolate(f.data(), idx.data(), w.data(), 1, 1, 3, 1, out.data());
  EXPECT_EQ(out[0], 0.f);
}

TEST(Gathers, SessionAndErrors) {
  auto f = uniform_cloud(2 * 4 * 10, 1000);
  f.resize(2 * 4 * 10);
  std::vector<int64_t> idx = {0, 9, 3, 1, 1, 2};
  auto out =
      run_node("GatherPoints", {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt64, {2, 3}, idx)}},
               {"out"}, {});
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 3}));
  EXPECT_EQ(out[0].data_as<float>()[1], f[9]);
  EXPECT_EQ(out[0].data_as<float>()[4 * 3], f[4 * 10 + 1]);

  std::vector<int32_t> bad = {0, 9, 3, 1, 10, 2};
  expect_error_with(
      [&] {
        run_node("GatherPoints", {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt32, {2, 3}, bad)}},
                 {"out"}, {});
      },
      {"node_under_test", "'idx'", "index 10", "[1, 1]", "[0, 10)"});
  std::vector<int64_t> negative = {0, -1, 3, 1, 1, 2, 0, 0};
  expect_error_with(
      [&] {
        run_node("GroupPoints",
                 {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt64, {2, 2, 2}, negative)}}, {"out"},
                 {});
      },
      {"node_under_test", "'idx'", "index -1", "[0, 0, 1]"});
  std::vector<int32_t> gidx = {0, 1, 2, 3, 4, 5, 6, 7};
  out =
      run_node("GroupPoints", {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt32, {2, 2, 2}, gidx)}},
               {"out"}, {});
  EXPECT_EQ(out[0].shape(), (Shape{2, 4, 2, 2}));
  expect_error_with(
      [&] {
        run_node("GroupPoints",
                 {{"features", floats({2, 4, 10}, f)}, {"idx", tensor_of(DType::kInt32, {1, 4, 2}, gidx)}}, {"out"},
                 {});
      },
      {"node_under_test", "'idx'", "batch 1", "batch 2"});
  expect_error_with(
      [&] {
        run_node("GatherPoints", {{"features", floats({2, 4, 10}, f)}, {"idx", floats({2, 3}, std::vector<float>(6))}},
                 {"out"}, {});
      },
      {"node_under_test", "'idx'", "float"});

  std::vector<int32_t> tidx = {0, 1, 2, 3, 4, 12};
  std::vector<float> w = {0.5f, 0.25f, 0.25f, 1, 0, 0};
  expect_error_with(
      [&] {
        run_node("ThreeInterpolate",
                 {{"features", floats({1, 8, 10}, std::vector<float>(f.begin(), f.begin() + 80))},
                  {"idx", tensor_of(DType::kInt32, {1, 2, 3}, tidx)},
                  {"weight", floats({1, 2, 3}, w)}},
                 {"out"}, {});
      },
      {"node_under_test", "'idx'", "index 12", "[0, 1, 2]", "[0, 10)"});
  tidx[5] = 9;
  out = run_node("ThreeInterpolate",
                 {{"features", floats({1, 8, 10}, std::vector<float>(f.begin(), f.begin() + 80))},
                  {"idx", tensor_of(DType::kInt32, {1, 2, 3}, tidx)},
                  {"weight", floats({1, 2, 3}, w)}},
                 {"out"}, {});
  EXPECT_EQ(out[0].shape(), (Shape{1, 8, 2}));
  EXPECT_EQ(out[0].data_as<float>()[1], f[3]);
  expect_error_with(
      [&] {
        run_node("ThreeInterpolate",
                 {{"features", floats({1, 8, 10}, std::vector<float>(f.begin(), f.begin() + 80))},
                  {"idx", tensor_of(DType::kInt32, {1, 2, 3}, tidx)},
                  {"weight", floats({1, 3, 2}, w)}},
                 {"out"}, {});
      },
      {"node_under_test", "'weight'", "[1, 3, 2]"});
}

// ------------------------------------------------------------------ end to end + schemas
onnx::NodeProto* add_pointrt_node(onnx::GraphProto* g, const char* op, std::vector<std::string> ins,
                                  std::vector<std::string> outs, std::vector<AttrSpec> attrs = {}) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_domain("pointrt");
  n->set_name(std::string(op) + "_node");
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  for (const auto& a : attrs) {
    auto* ap = n->add_attribute();
    ap->set_name(a.name);
    ap->set_type(a.is_float ? onnx::AttributeProto::FLOAT : onnx::AttributeProto::INT);
    if (a.is_float)
      ap->set_f(a.f);
    else
      ap->set_i(a.i);
  }
  return n;
}

TEST(Pointnet2Model, ShapeInferenceAndAllSevenOps) {
  // A PointNet++-style graph with every operator of the family:
  //   FPS(xyz) -> GatherPoints(features) ; BallQuery(xyz, new_xyz) -> GroupPoints(features)
  //   KNN(xyz, new_xyz) ; ThreeNN(xyz, new_xyz) -> ThreeInterpolate(sampled, idx, weight)
  // The graph declares neither type nor shape for any node output: ONNX shape inference with
  // the pointrt schemas fills them at import.
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* o1 = model.add_opset_import();
  o1->set_domain("");
  o1->set_version(17);
  auto* o2 = model.add_opset_import();
  o2->set_domain("pointrt");
  o2->set_version(1);
  auto* g = model.mutable_graph();
  g->set_name("pointnet2_chain");
  const int64_t n = 256, c = 5, m = 32;
  Shape xyz_shape = {1, n, 3}, feat_shape = {1, c, n}, new_shape = {1, m, 3}, weight_shape = {1, n, 3};
  set_value_info(g->add_input(), "xyz", DType::kFloat32, &xyz_shape);
  set_value_info(g->add_input(), "features", DType::kFloat32, &feat_shape);
  set_value_info(g->add_input(), "new_xyz", DType::kFloat32, &new_shape);
  set_value_info(g->add_input(), "weight", DType::kFloat32, &weight_shape);
  add_pointrt_node(g, "FurthestPointSample", {"xyz"}, {"fps_idx"}, {int_attr("npoint", m)});
  add_pointrt_node(g, "GatherPoints", {"features", "fps_idx"}, {"sampled"});
  add_pointrt_node(g, "BallQuery", {"xyz", "new_xyz"}, {"ball_idx"},
                   {float_attr("radius", 0.3f), int_attr("nsample", 8)});
  add_pointrt_node(g, "GroupPoints", {"features", "ball_idx"}, {"grouped"});
  add_pointrt_node(g, "KNN", {"xyz", "new_xyz"}, {"knn_idx", "knn_d2"}, {int_attr("k", 4)});
  add_pointrt_node(g, "ThreeNN", {"xyz", "new_xyz"}, {"nn_dist", "nn_idx"});
  add_pointrt_node(g, "ThreeInterpolate", {"sampled", "nn_idx", "weight"}, {"interpolated"});
  const std::vector<std::string> outputs = {"fps_idx", "sampled", "ball_idx", "grouped",     "knn_idx",
                                            "knn_d2",  "nn_dist", "nn_idx",   "interpolated"};
  for (const auto& out : outputs) g->add_output()->set_name(out);

  Model mdl = load(model);
  ASSERT_EQ(mdl.outputs().size(), outputs.size());
  auto dims = [](const ValueInfo& vi) {
    std::vector<int64_t> d;
    for (const auto& x : vi.shape) d.push_back(x.value);
    return d;
  };
  const std::vector<std::vector<int64_t>> want_shapes = {{1, m},    {1, c, m}, {1, m, 8}, {1, c, m, 8}, {1, m, 4},
                                                         {1, m, 4}, {1, n, 3}, {1, n, 3}, {1, c, n}};
  const std::vector<DType> want_types = {DType::kInt32,   DType::kFloat32, DType::kInt32,
                                         DType::kFloat32, DType::kInt32,   DType::kFloat32,
                                         DType::kFloat32, DType::kInt32,   DType::kFloat32};
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(mdl.outputs()[i].dtype, want_types[i]) << outputs[i];
    EXPECT_EQ(dims(mdl.outputs()[i]), want_shapes[i]) << outputs[i];
  }

  auto xyz = uniform_cloud(n, 77);
  auto feat = uniform_cloud(c * n, 78);
  feat.resize(static_cast<size_t>(c * n));
  auto centres = uniform_cloud(m, 79);
  auto weight = uniform_cloud(n, 80);
  Session session(mdl);
  auto outs = session.run({{"xyz", floats(xyz_shape, xyz)},
                           {"features", floats(feat_shape, feat)},
                           {"new_xyz", floats(new_shape, centres)},
                           {"weight", floats(weight_shape, weight)}});
  ASSERT_EQ(outs.size(), outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    EXPECT_EQ(outs[i].dtype(), want_types[i]) << outputs[i];
    EXPECT_EQ(outs[i].shape(), Shape(want_shapes[i].begin(), want_shapes[i].end())) << outputs[i];
  }
  auto same = [](const auto& want, const Tensor& got) {
    using T = typename std::decay_t<decltype(want)>::value_type;
    return static_cast<int64_t>(want.size()) == got.numel() && std::equal(want.begin(), want.end(), got.data_as<T>());
  };
  auto fps = fps_ref(xyz, 1, n, m, false);
  EXPECT_TRUE(same(fps, outs[0]));
  std::vector<float> sampled(static_cast<size_t>(c * m));
  gather_points_ref(feat.data(), fps.data(), 1, c, n, m, sampled.data());
  EXPECT_TRUE(same(sampled, outs[1]));
  auto ball = bq_ref(xyz, centres, 1, n, m, {0.3f, 8, 0.f});
  EXPECT_TRUE(same(ball, outs[2]));
  std::vector<float> grouped(static_cast<size_t>(c * m * 8));
  group_points_ref(feat.data(), ball.data(), 1, c, n, m, 8, grouped.data());
  EXPECT_TRUE(same(grouped, outs[3]));
  auto kn = knn_run(false, xyz, centres, 1, n, m, 4);
  EXPECT_TRUE(same(kn.idx, outs[4]));
  EXPECT_TRUE(same(kn.d2, outs[5]));
  auto nn = three_nn_run(false, xyz, centres, 1, n, m);
  EXPECT_TRUE(same(nn.dist, outs[6]));
  EXPECT_TRUE(same(nn.idx, outs[7]));
  std::vector<float> interpolated(static_cast<size_t>(c * n));
  three_interpolate_ref(sampled.data(), nn.idx.data(), weight.data(), 1, c, m, n, interpolated.data());
  EXPECT_TRUE(same(interpolated, outs[8]));
}

TEST(Pointnet2Model, TableRows) {
  int rows = 0;
  for (const auto& op : supported_ops())
    if (op.domain == "pointrt") {
      for (const char* name :
           {"FurthestPointSample", "GatherPoints", "BallQuery", "GroupPoints", "ThreeNN", "ThreeInterpolate", "KNN"})
        if (op.op_type == name) {
          ++rows;
          EXPECT_EQ(op.since_version, 1);
          EXPECT_EQ(op.until_version, 1);
          // float16/bfloat16 run through the float32 kernels (runtime/low_precision.h).
          EXPECT_EQ(op.types, (std::vector<DType>{DType::kFloat32, DType::kFloat16, DType::kBFloat16}));
        }
    }
  EXPECT_EQ(rows, 7);
}

}  // namespace
}  // namespace pointnet2
}  // namespace pointrt
