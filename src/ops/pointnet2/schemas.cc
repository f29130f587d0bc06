// ONNX schemas (type constraints, attributes, type and shape inference) for the pointrt-domain
// PointNet++ operators. The shape rules are those of the <op>.h headers / OPS.md. Inference
// errors are reported by ONNX as non-fatal notes at import; the kernels check again at run time.
#include "ops/pointnet2/schemas.h"

#include <vector>

#include "ops/schema_util.h"

namespace pointrt::pointnet2 {

namespace {

using namespace schema_util;

OpSchema base(const char* name, const char* doc) {
  OpSchema s = pointrt_schema(name, doc);
  s.TypeConstraint("T", kFloatTypes,
                   "point coordinates or features (float32, or float16/bfloat16 computed in float32)");
  return s;
}

}  // namespace

std::vector<OpSchema> pointnet2_schemas() {
  std::vector<OpSchema> list;

  list.push_back(
      std::move(base("FurthestPointSample", "Furthest point sampling (pointnet2_ops); see docs/operators-pointnet2.md.")
                    .Input(0, "xyz", "[B, N, 3]", "T")
                    .Output(0, "idx", "[B, npoint] int32", "tensor(int32)")
                    .Attr("npoint", "number of samples, >= 1", AttributeProto::INT, true)
                    .Attr("ignore_origin", "1: points with |p|^2 <= 1e-3 are not sampled", AttributeProto::INT,
                          static_cast<int64_t>(0))
                    .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
                      int64_t npoint = required_int_attr(ctx, "npoint");
                      if (npoint < 1) fail_shape_inference("npoint must be >= 1, got ", npoint);
                      set_output(ctx, 0, TensorProto::INT32, {input_dim(ctx, 0, 3, 0, 3), fixed_dim(npoint)});
                    })));

  list.push_back(std::move(base("GatherPoints", "out[b, c, m] = features[b, c, idx[b, m]]")
                               .Input(0, "features", "[B, C, N]", "T")
                               .Input(1, "idx", "[B, M]", "I")
                               .Output(0, "out", "[B, C, M]", "T")
                               .TypeConstraint("I", kIndexTypes, "indices")
                               .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
                                 auto b = input_dim(ctx, 0, 3, 0), c = input_dim(ctx, 0, 3, 1);
                                 auto m = input_dim(ctx, 1, 2, 1);
                                 set_output(ctx, 0, float_type(ctx, 0), {b, c, m});
                               })));

  list.push_back(
      std::move(base("BallQuery", "The first nsample points within radius of each centre, in point order.")
                    .Input(0, "xyz", "[B, N, 3] points", "T")
                    .Input(1, "new_xyz", "[B, M, 3] centres", "T")
                    .Output(0, "idx", "[B, M, nsample] int32", "tensor(int32)")
                    .Attr("radius", "ball radius, > 0", AttributeProto::FLOAT, true)
                    .Attr("nsample", "samples per ball, >= 1", AttributeProto::INT, true)
                    .Attr("min_radius", "inner radius (d2 >= min_radius^2), default 0", AttributeProto::FLOAT, 0.0f)
                    .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
                      int64_t nsample = required_int_attr(ctx, "nsample");
                      if (nsample < 1) fail_shape_inference("nsample must be >= 1, got ", nsample);
                      input_dim(ctx, 0, 3, 0, 3);
                      set_output(ctx, 0, TensorProto::INT32,
                                 {input_dim(ctx, 1, 3, 0, 3), input_dim(ctx, 1, 3, 1, 3), fixed_dim(nsample)});
                    })));

  list.push_back(std::move(base("GroupPoints", "out[b, c, m, s] = features[b, c, idx[b, m, s]]")
                               .Input(0, "features", "[B, C, N]", "T")
                               .Input(1, "idx", "[B, M, S]", "I")
                               .Output(0, "out", "[B, C, M, S]", "T")
                               .TypeConstraint("I", kIndexTypes, "indices")
                               .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
                                 auto b = input_dim(ctx, 0, 3, 0), c = input_dim(ctx, 0, 3, 1);
                                 auto m = input_dim(ctx, 1, 3, 1), s = input_dim(ctx, 1, 3, 2);
                                 set_output(ctx, 0, float_type(ctx, 0), {b, c, m, s});
                               })));

  list.push_back(
      std::move(base("ThreeNN", "The three nearest known points of each query: Euclidean distance and index.")
                    .Input(0, "unknown", "[B, n, 3] queries", "T")
                    .Input(1, "known", "[B, m, 3]", "T")
                    .Output(0, "dist", "[B, n, 3]", "T")
                    .Output(1, "idx", "[B, n, 3] int32", "tensor(int32)")
                    .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
                      input_dim(ctx, 1, 3, 0, 3);
                      auto b = input_dim(ctx, 0, 3, 0, 3), n = input_dim(ctx, 0, 3, 1, 3);
                      set_output(ctx, 0, float_type(ctx, 0), {b, n, fixed_dim(3)});
                      set_output(ctx, 1, TensorProto::INT32, {b, n, fixed_dim(3)});
                    })));

  list.push_back(
      std::move(base("ThreeInterpolate", "out[b, c, i] = sum_j weight[b, i, j] * features[b, c, idx[b, i, j]]")
                    .Input(0, "features", "[B, C, m]", "T")
                    .Input(1, "idx", "[B, n, 3]", "I")
                    .Input(2, "weight", "[B, n, 3]", "T")
                    .Output(0, "out", "[B, C, n]", "T")
                    .TypeConstraint("I", kIndexTypes, "indices")
                    .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
                      auto b = input_dim(ctx, 0, 3, 0), c = input_dim(ctx, 0, 3, 1);
                      input_dim(ctx, 2, 3, 0, 3);
                      auto n = input_dim(ctx, 1, 3, 1, 3);
                      set_output(ctx, 0, float_type(ctx, 0), {b, c, n});
                    })));

  list.push_back(std::move(base("KNN", "The k nearest points of each query, ascending by squared distance.")
                               .Input(0, "xyz", "[B, N, 3] points", "T")
                               .Input(1, "new_xyz", "[B, M, 3] queries", "T")
                               .Output(0, "idx", "[B, M, k] int32", "tensor(int32)")
                               .Output(1, "dist2", "[B, M, k] squared distances", "T", OpSchema::Optional)
                               .Attr("k", "neighbours per query, 1 <= k <= N", AttributeProto::INT, true)
                               .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
                                 int64_t k = required_int_attr(ctx, "k");
                                 if (k < 1) fail_shape_inference("k must be >= 1, got ", k);
                                 auto n = input_dim(ctx, 0, 3, 1, 3);
                                 if (n.has_dim_value() && k > n.dim_value())
                                   fail_shape_inference("k = ", k,
                                                        " is larger than the number of points N = ", n.dim_value());
                                 auto b = input_dim(ctx, 1, 3, 0, 3), m = input_dim(ctx, 1, 3, 1, 3);
                                 set_output(ctx, 0, TensorProto::INT32, {b, m, fixed_dim(k)});
                                 set_output(ctx, 1, float_type(ctx, 0), {b, m, fixed_dim(k)});
                               })));
  return list;
}

}  // namespace pointrt::pointnet2
