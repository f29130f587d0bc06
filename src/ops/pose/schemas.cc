// ONNX schemas for the pose operators; the shape rules are those of the <op>.h headers. Inference
// errors are non-fatal notes at import; the kernels check again at run time.
#include "ops/pose/schemas.h"

#include "ops/schema_util.h"

namespace pointrt::pose {

namespace {

using namespace schema_util;

const std::vector<std::string>& kLabelTypes = kIndexTypes;

int64_t required_instances(InferenceContext& ctx) {
  const int64_t c = int_attr(ctx, "num_instances", -1);
  if (c < 1) fail_shape_inference("attribute 'num_instances' must be >= 1, got ", c);
  return c;
}

OpSchema mean_shift_schema() {
  return std::move(
      pointrt_schema("MeanShift", "Per-instance Gaussian mean shift of per-point votes from the densest vote (PVN3D).")
          .TypeConstraint("T", kFloatTypes, "float32, or float16/bfloat16 computed in float32")
          .Input(0, "votes", "[B, K, N, 3]", "T")
          .Input(1, "labels", "[B, N] instance of each point", "L")
          .Output(0, "modes", "[B, C, K, 3]", "T")
          .Output(1, "counts", "[B, C, K] points that voted (0 = no mode)", "tensor(int32)", OpSchema::Optional)
          .TypeConstraint("L", kLabelTypes, "labels")
          .Attr("num_instances", "C", AttributeProto::INT, true)
          .Attr("bandwidth", "Gaussian kernel bandwidth", AttributeProto::FLOAT, true)
          .Attr("max_iterations", "at most this many shifts", AttributeProto::INT, static_cast<int64_t>(300))
          .Attr("stop_threshold", "stop when a shift is shorter (default bandwidth * 1e-3)", AttributeProto::FLOAT,
                false)
          .Attr("ignore_label", "label that belongs to no instance", AttributeProto::INT, static_cast<int64_t>(-1))
          .Attr("filter_vote", "vote set whose inliers restrict the others (-1: none)", AttributeProto::INT,
                static_cast<int64_t>(-1))
          .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            const int64_t c = required_instances(ctx);
            auto b = input_dim(ctx, 0, 4, 0), k = input_dim(ctx, 0, 4, 1);
            set_output(ctx, 0, float_type(ctx, 0), {b, fixed_dim(c), k, fixed_dim(3)});
            set_output(ctx, 1, TensorProto::INT32, {b, fixed_dim(c), k});
          }));
}

OpSchema instance_reduce_schema() {
  return std::move(
      pointrt_schema("InstanceReduce", "Mean or sum of per-point values per instance of a segmentation.")
          .TypeConstraint("T", kFloatTypes, "float32, or float16/bfloat16 computed in float32")
          .Input(0, "values", "[B, N, D]", "T")
          .Input(1, "labels", "[B, N]", "L")
          .Output(0, "reduced", "[B, C, D]", "T")
          .Output(1, "counts", "[B, C]", "tensor(int32)", OpSchema::Optional)
          .TypeConstraint("L", kLabelTypes, "labels")
          .Attr("num_instances", "C", AttributeProto::INT, true)
          .Attr("reduction", "mean or sum", AttributeProto::STRING, std::string("mean"))
          .Attr("ignore_label", "label that belongs to no instance", AttributeProto::INT, static_cast<int64_t>(-1))
          .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            const int64_t c = required_instances(ctx);
            auto b = input_dim(ctx, 0, 3, 0), d = input_dim(ctx, 0, 3, 2);
            set_output(ctx, 0, float_type(ctx, 0), {b, fixed_dim(c), d});
            set_output(ctx, 1, TensorProto::INT32, {b, fixed_dim(c)});
          }));
}

OpSchema rigid_fit_schema() {
  return std::move(
      pointrt_schema("RigidFit", "Weighted least-squares rotation and translation (Kabsch/Umeyama, reflection fixed).")
          .TypeConstraint("T", kFloatTypes, "float32, or float16/bfloat16 computed in float32")
          .Input(0, "source", "[S..., P, 3] model points", "T")
          .Input(1, "target", "[T..., P, 3], S... a suffix of T...", "T")
          .Input(2, "weight", "[T..., P] >= 0", "T", OpSchema::Optional)
          .Output(0, "pose", "[T..., 3, 4] = [R | t]", "T")
          .Output(1, "status", "[T...] 0 ok, 1 < 3 points, 2 degenerate, 3 non-finite", "tensor(int32)",
                  OpSchema::Optional)
          .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            const int rank = input_rank(ctx, 1);
            if (rank < 0) return;
            if (rank < 2) fail_shape_inference("target must have rank >= 2, got ", rank);
            std::vector<onnx::TensorShapeProto_Dimension> lead;
            for (int d = 0; d < rank - 2; ++d) lead.push_back(input_dim(ctx, 1, rank, d));
            set_output(ctx, 1, TensorProto::INT32, lead);
            lead.push_back(fixed_dim(3));
            lead.push_back(fixed_dim(4));
            set_output(ctx, 0, float_type(ctx, 0), lead);
          }));
}

}  // namespace

std::vector<onnx::OpSchema> pose_schemas() {
  return {mean_shift_schema(), instance_reduce_schema(), rigid_fit_schema()};
}

}  // namespace pointrt::pose
