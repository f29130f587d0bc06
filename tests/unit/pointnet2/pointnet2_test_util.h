// Helpers shared by the PointNet++ family tests (tests/unit/pointnet2/*_test.cc): seeded clouds
// (uniform, clustered, planar, lattice), one-node pointrt models run through a Session, and the
// optimised / reference kernels called on plain vectors.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "ops/pointnet2/ball_query.h"
#include "ops/pointnet2/furthest_point_sample.h"
#include "ops/pointnet2/knn.h"
#include "ops/pointnet2/three_nn.h"
#include "pointrt/pointrt.h"

namespace pointrt::pointnet2::test_helpers {

// ------------------------------------------------------------------ data helpers
inline std::vector<float> uniform_cloud(int64_t count, uint32_t seed, float lo = 0.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(count) * 3);
  for (auto& x : v) x = u(rng);
  return v;
}

// Gaussian blobs: dense clusters and empty space (a grid's worst case for balance).
inline std::vector<float> clustered_cloud(int64_t count, uint32_t seed) {
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
inline std::vector<float> planar_cloud(int64_t count, uint32_t seed) {
  auto v = uniform_cloud(count, seed);
  for (int64_t i = 0; i < count; ++i) v[3 * i + 2] = 0.5f;
  return v;
}

// A lattice with spacing `step` (exact in binary): many exactly equal distances and points
// exactly on grid-cell boundaries.
inline std::vector<float> lattice_cloud(int side, float step) {
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
inline std::vector<float> batches(const std::vector<std::vector<float>>& clouds) {
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
inline AttrSpec int_attr(const std::string& n, int64_t v) { return {n, false, v, 0}; }
inline AttrSpec float_attr(const std::string& n, float v) { return {n, true, 0, v}; }

inline void set_value_info(onnx::ValueInfoProto* vi, const std::string& name, DType dtype, const Shape* shape) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  if (shape) {
    auto* s = tt->mutable_shape();
    for (int64_t d : *shape) s->add_dim()->set_dim_value(d);
  }
}

inline onnx::ModelProto single_node_model(const std::string& op, const std::vector<InputSpec>& inputs,
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

inline Model load(const onnx::ModelProto& proto) {
  std::string bytes;
  proto.SerializeToString(&bytes);
  return Model::load_from_bytes(bytes.data(), bytes.size());
}

inline std::vector<Tensor> run_node(const std::string& op, const std::vector<InputSpec>& inputs,
                                    const std::vector<std::string>& outputs, const std::vector<AttrSpec>& attrs) {
  Model model = load(single_node_model(op, inputs, outputs, attrs));
  Session session(model);
  std::map<std::string, Tensor> feeds;
  for (const auto& in : inputs) feeds[in.name] = in.value;
  return session.run(feeds);
}

template <typename T>
inline Tensor tensor_of(DType dtype, Shape shape, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(dtype, shape);
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
  return t;
}
inline Tensor floats(Shape shape, const std::vector<float>& v) {
  return tensor_of(DType::kFloat32, std::move(shape), v);
}

inline std::vector<int32_t> fps_ref(const std::vector<float>& xyz, int64_t b, int64_t n, int64_t npoint, bool ignore) {
  std::vector<int32_t> out(static_cast<size_t>(b * npoint));
  furthest_point_sample_ref(xyz.data(), b, n, {npoint, ignore}, out.data());
  return out;
}
inline std::vector<int32_t> fps_opt(const std::vector<float>& xyz, int64_t b, int64_t n, int64_t npoint, bool ignore) {
  std::vector<int32_t> out(static_cast<size_t>(b * npoint), -7);
  furthest_point_sample(xyz.data(), b, n, {npoint, ignore}, out.data());
  return out;
}

inline std::vector<int32_t> bq_ref(const std::vector<float>& xyz, const std::vector<float>& centres, int64_t b,
                                   int64_t n, int64_t m, BallQueryAttrs a) {
  std::vector<int32_t> out(static_cast<size_t>(b * m * a.nsample));
  ball_query_ref(xyz.data(), centres.data(), b, n, m, a, out.data());
  return out;
}
inline std::vector<int32_t> bq_opt(const std::vector<float>& xyz, const std::vector<float>& centres, int64_t b,
                                   int64_t n, int64_t m, BallQueryAttrs a) {
  std::vector<int32_t> out(static_cast<size_t>(b * m * a.nsample), -7);
  ball_query(xyz.data(), centres.data(), b, n, m, a, out.data());
  return out;
}

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
inline KnnResult knn_run(bool optimised, const std::vector<float>& xyz, const std::vector<float>& q, int64_t b,
                         int64_t n, int64_t m, int64_t k) {
  KnnResult r{std::vector<int32_t>(static_cast<size_t>(b * m * k), -7),
              std::vector<float>(static_cast<size_t>(b * m * k), -7.f)};
  if (optimised)
    knn(xyz.data(), q.data(), b, n, m, {k}, r.idx.data(), r.d2.data());
  else
    knn_ref(xyz.data(), q.data(), b, n, m, {k}, r.idx.data(), r.d2.data());
  return r;
}

struct ThreeNNResult {
  std::vector<float> dist;
  std::vector<int32_t> idx;
};
inline ThreeNNResult three_nn_run(bool optimised, const std::vector<float>& u, const std::vector<float>& k, int64_t b,
                                  int64_t n, int64_t m) {
  ThreeNNResult r{std::vector<float>(static_cast<size_t>(b * n * 3), -7.f),
                  std::vector<int32_t>(static_cast<size_t>(b * n * 3), -7)};
  if (optimised)
    three_nn(u.data(), k.data(), b, n, m, r.dist.data(), r.idx.data());
  else
    three_nn_ref(u.data(), k.data(), b, n, m, r.dist.data(), r.idx.data());
  return r;
}

}  // namespace pointrt::pointnet2::test_helpers
