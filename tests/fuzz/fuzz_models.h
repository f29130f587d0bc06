// The small models fuzz_run feeds fuzzed inputs to: elementwise and casts, shape-driven
// operators with fed shapes and indices, the PointNet++ operators and the sparse ones (from raw
// points, and with fed sites). Built in code, so the target needs no files.
#pragma once

#include <string>
#include <vector>

#include "support/model_builder.h"

namespace pointrt::fuzz {

struct FuzzModel {
  std::string name;
  test::ModelBuilder builder;
};

inline Tensor floats_tensor(const Shape& shape, float value) {
  Tensor t = Tensor::allocate(DType::kFloat32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = value * static_cast<float>(1 + i % 7);
  return t;
}

inline Tensor int64_tensor(const std::vector<int64_t>& v) {
  Tensor t = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<int64_t>()[i] = v[i];
  return t;
}

inline FuzzModel elementwise_model() {
  using test::ModelBuilder;
  FuzzModel m{"elementwise", ModelBuilder()};
  auto& b = m.builder;
  b.input("a", DType::kFloat32, {std::string("N"), std::string("C")});
  b.input("c", DType::kFloat32, {std::string("C")});
  b.node("Add", {"a", "c"}, {"s"});
  b.node("Div", {"s", "a"}, {"d"});
  b.node("Sqrt", {"d"}, {"q"});
  ModelBuilder::attr_int(b.node("Softmax", {"q"}, {"y"}), "axis", -1);
  ModelBuilder::attr_int(b.node("Cast", {"s"}, {"i"}), "to", onnx::TensorProto::INT32);
  ModelBuilder::attr_ints(b.node("ReduceMax", {"a"}, {"r"}), "axes", {1});
  b.node("MatMul", {"a", "d"}, {"mm"});  // [N, C] x [N, C]: valid only when N == C
  for (const char* o : {"y", "i", "r", "mm"}) b.output(o);
  return m;
}

inline FuzzModel shape_model() {
  using test::ModelBuilder;
  FuzzModel m{"shapes", ModelBuilder()};
  auto& b = m.builder;
  b.input("x", DType::kFloat32, {std::string("N")});
  b.input("shape", DType::kInt64, {std::string("K")});
  b.input("idx", DType::kInt64, {std::string("M")});
  b.input("starts", DType::kInt64, {int64_t(1)});
  b.input("k", DType::kInt64, {int64_t(1)});
  b.initializer("flat", int64_tensor({-1}));
  b.node("Expand", {"x", "shape"}, {"e"});
  b.node("Reshape", {"e", "flat"}, {"ef"});
  b.node("Slice", {"ef", "starts", "k"}, {"sl"});
  b.node("Gather", {"x", "idx"}, {"g"});
  b.node("ConstantOfShape", {"shape"}, {"zeros"});
  b.node("TopK", {"x", "k"}, {"tv", "ti"});
  b.node("Tile", {"x", "k"}, {"tiled"});
  b.node("Reshape", {"x", "shape"}, {"rs"});
  for (const char* o : {"sl", "g", "zeros", "tv", "ti", "tiled", "rs"}) b.output(o);
  return m;
}

inline FuzzModel pointnet2_model() {
  using test::ModelBuilder;
  FuzzModel m{"pointnet2", ModelBuilder()};
  auto& b = m.builder;
  b.add_opset("pointrt", 1);
  b.input("xyz", DType::kFloat32, {int64_t(1), std::string("N"), int64_t(3)});
  b.input("feats", DType::kFloat32, {int64_t(1), int64_t(4), std::string("N")});
  b.input("gidx", DType::kInt64, {int64_t(1), std::string("M"), std::string("S")});
  b.input("widx", DType::kInt32, {int64_t(1), std::string("Q"), int64_t(3)});
  b.input("weight", DType::kFloat32, {int64_t(1), std::string("Q"), int64_t(3)});
  ModelBuilder::attr_int(b.node("FurthestPointSample", {"xyz"}, {"fidx"}, "pointrt"), "npoint", 8);
  ModelBuilder::attr_ints(b.node("Transpose", {"xyz"}, {"xyzT"}), "perm", {0, 2, 1});
  b.node("GatherPoints", {"xyzT", "fidx"}, {"cT"}, "pointrt");
  ModelBuilder::attr_ints(b.node("Transpose", {"cT"}, {"centers"}), "perm", {0, 2, 1});
  auto& bq = b.node("BallQuery", {"xyz", "centers"}, {"bidx"}, "pointrt");
  ModelBuilder::attr_float(bq, "radius", 0.5f);
  ModelBuilder::attr_int(bq, "nsample", 4);
  b.node("GroupPoints", {"feats", "bidx"}, {"grouped"}, "pointrt");
  b.node("GroupPoints", {"feats", "gidx"}, {"grouped_fed"}, "pointrt");
  b.node("ThreeNN", {"xyz", "centers"}, {"dist", "nidx"}, "pointrt");
  b.node("ThreeInterpolate", {"feats", "widx", "weight"}, {"interp"}, "pointrt");
  ModelBuilder::attr_int(b.node("KNN", {"xyz", "centers"}, {"kidx", "kd2"}, "pointrt"), "k", 3);
  for (const char* o : {"grouped", "grouped_fed", "dist", "interp", "kidx"}) b.output(o);
  return m;
}

// Sparse convolution from raw points: Voxelize -> subm conv -> strided conv -> ScatterDense.
inline FuzzModel sparse_points_model() {
  using test::ModelBuilder;
  FuzzModel m{"sparse_points", ModelBuilder()};
  auto& b = m.builder;
  b.add_opset("pointrt", 1);
  b.input("points", DType::kFloat32, {std::string("P"), int64_t(4)});
  b.initializer("w1", floats_tensor({8, 3, 3, 3, 4}, 0.01f));
  b.initializer("w2", floats_tensor({8, 3, 3, 3, 8}, -0.02f));
  auto& v = b.node("Voxelize", {"points"}, {"vf", "coords", "counts"}, "pointrt");
  ModelBuilder::attr_floats(v, "voxel_size", {0.5f, 0.5f, 0.5f});
  ModelBuilder::attr_floats(v, "point_cloud_range", {0, 0, 0, 4, 4, 2});
  ModelBuilder::attr_int(v, "max_points_per_voxel", 4);
  ModelBuilder::attr_int(v, "max_voxels", 64);
  auto& c1 = b.node("SparseConv", {"vf", "coords", "w1"}, {"f1", "i1"}, "pointrt");
  ModelBuilder::attr_ints(c1, "kernel_size", {3, 3, 3});
  ModelBuilder::attr_ints(c1, "input_spatial_shape", {4, 8, 8});
  ModelBuilder::attr_int(c1, "subm", 1);
  ModelBuilder::attr_string(c1, "activation", "ReLU");
  auto& c2 = b.node("SparseConv", {"f1", "i1", "w2"}, {"f2", "i2"}, "pointrt");
  ModelBuilder::attr_ints(c2, "kernel_size", {3, 3, 3});
  ModelBuilder::attr_ints(c2, "stride", {2, 2, 2});
  ModelBuilder::attr_ints(c2, "padding", {1, 1, 1});
  ModelBuilder::attr_ints(c2, "input_spatial_shape", {4, 8, 8});
  ModelBuilder::attr_string(c2, "rulebook", "down1");
  auto& inv = b.node("SparseConv", {"f2", "i2", "w2"}, {"f3", "i3"}, "pointrt");
  ModelBuilder::attr_ints(inv, "kernel_size", {3, 3, 3});
  ModelBuilder::attr_ints(inv, "input_spatial_shape", {2, 4, 4});
  ModelBuilder::attr_int(inv, "inverse", 1);
  ModelBuilder::attr_string(inv, "rulebook", "down1");
  ModelBuilder::attr_ints(b.node("ScatterDense", {"f2", "i2"}, {"dense"}, "pointrt"), "spatial_shape", {2, 4, 4});
  for (const char* o : {"dense", "f3", "counts"}) b.output(o);
  return m;
}

// Sparse operators on fed sites: any index value reaches SparseConv and ScatterDense.
inline FuzzModel sparse_sites_model() {
  using test::ModelBuilder;
  FuzzModel m{"sparse_sites", ModelBuilder()};
  auto& b = m.builder;
  b.add_opset("pointrt", 1);
  b.input("features", DType::kFloat32, {std::string("N"), int64_t(4)});
  b.input("indices", DType::kInt32, {std::string("N"), int64_t(4)});
  b.initializer("w", floats_tensor({4, 3, 3, 3, 4}, 0.05f));
  auto& c = b.node("SparseConv", {"features", "indices", "w"}, {"f", "i"}, "pointrt");
  ModelBuilder::attr_ints(c, "kernel_size", {3, 3, 3});
  ModelBuilder::attr_ints(c, "input_spatial_shape", {4, 8, 8});
  ModelBuilder::attr_int(c, "subm", 1);
  auto& r = b.node("SparseConv", {"features", "indices", "w"}, {"fr", "ir"}, "pointrt");
  ModelBuilder::attr_ints(r, "kernel_size", {3, 3, 3});
  ModelBuilder::attr_ints(r, "stride", {2, 2, 2});
  ModelBuilder::attr_ints(r, "input_spatial_shape", {4, 8, 8});
  auto& s = b.node("ScatterDense", {"features", "indices"}, {"dense"}, "pointrt");
  ModelBuilder::attr_ints(s, "spatial_shape", {4, 8, 8});
  ModelBuilder::attr_int(s, "batch_size", 2);
  for (const char* o : {"f", "fr", "dense"}) b.output(o);
  return m;
}

inline std::vector<FuzzModel> fuzz_models() {
  return {elementwise_model(), shape_model(), pointnet2_model(), sparse_points_model(), sparse_sites_model()};
}

}  // namespace pointrt::fuzz
