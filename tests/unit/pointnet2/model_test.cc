// A PointNet++-style model with all seven operators of the family: ONNX schema shape inference
// at import, the results against the references, and the operator table's rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "ops/pointnet2/gather_points.h"
#include "ops/pointnet2/group_points.h"
#include "ops/pointnet2/three_interpolate.h"
#include "unit/pointnet2/pointnet2_test_util.h"

namespace pointrt {
namespace pointnet2 {
namespace {

using namespace test_helpers;

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
