// ONNX schemas for CenterPointDecode and BoxNMS; the shape rules are those of the <op>.h headers.
#include "ops/detect/schemas.h"

#include "ops/schema_util.h"

namespace pointrt::detect {

namespace {

using namespace schema_util;

OpSchema decode_schema() {
  const char* f = "T";
  return std::move(pointrt_schema("CenterPointDecode",
                                  "CenterPoint head maps -> the K best boxes (CUDA-CenterPoint / CenterNet peaks).")
                       .TypeConstraint("T", kFloatTypes, "float32, or float16/bfloat16 computed in float32")
                       .Input(0, "heatmap", "[B, C, H, W]", f)
                       .Input(1, "offset", "[B, 2, H, W]", f)
                       .Input(2, "height", "[B, 1, H, W]", f)
                       .Input(3, "size", "[B, 3, H, W]", f)
                       .Input(4, "rotation", "[B, 2, H, W] (sin, cos)", f)
                       .Input(5, "velocity", "[B, 2, H, W]", f, OpSchema::Optional)
                       .Output(0, "boxes", "[B, K, 7 | 9]", f)
                       .Output(1, "scores", "[B, K]", f)
                       .Output(2, "labels", "[B, K]", "tensor(int32)")
                       .Output(3, "count", "[B]", "tensor(int32)")
                       .Attr("voxel_size", "vx, vy (further values ignored)", AttributeProto::FLOATS, true)
                       .Attr("point_cloud_range", "xmin, ymin (further values ignored)", AttributeProto::FLOATS, true)
                       .Attr("out_size_factor", "feature map stride in voxels", AttributeProto::FLOAT, true)
                       .Attr("score_threshold", "keep scores >= this", AttributeProto::FLOAT, 0.1f)
                       .Attr("post_center_range", "xmin, ymin, zmin, xmax, ymax, zmax", AttributeProto::FLOATS, false)
                       .Attr("max_detections", "K", AttributeProto::INT, static_cast<int64_t>(1000))
                       .Attr("heatmap_activation", "sigmoid or none", AttributeProto::STRING, std::string("sigmoid"))
                       .Attr("size_activation", "exp or none", AttributeProto::STRING, std::string("exp"))
                       .Attr("peak_kernel", "1 (every pixel) or an odd max-pool window", AttributeProto::INT,
                             static_cast<int64_t>(1))
                       .Attr("candidates", "pixel or class", AttributeProto::STRING, std::string("pixel"))
                       .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
                         const int64_t k = int_attr(ctx, "max_detections", 1000);
                         auto b = input_dim(ctx, 0, 4, 0);
                         const int64_t dim = ctx.getNumInputs() > 5 && ctx.getInputType(5) ? 9 : 7;
                         set_output(ctx, 0, float_type(ctx, 0), {b, fixed_dim(k), fixed_dim(dim)});
                         set_output(ctx, 1, float_type(ctx, 0), {b, fixed_dim(k)});
                         set_output(ctx, 2, TensorProto::INT32, {b, fixed_dim(k)});
                         set_output(ctx, 3, TensorProto::INT32, {b});
                       }));
}

OpSchema nms_schema() {
  return std::move(
      pointrt_schema("BoxNMS", "Greedy rotated-IoU (CUDA-CenterPoint) or circle (CenterPoint) NMS of 3D boxes.")
          .TypeConstraint("T", kFloatTypes, "float32, or float16/bfloat16 computed in float32")
          .Input(0, "boxes", "[B, K, D >= 7]", "T")
          .Input(1, "scores", "[B, K]", "T")
          .Input(2, "labels", "[B, K]", "I", OpSchema::Optional)
          .Input(3, "count", "[B] boxes that take part", "I", OpSchema::Optional)
          .Output(0, "num_detections", "[B]", "tensor(int32)")
          .Output(1, "detection_boxes", "[B, M, D]", "T")
          .Output(2, "detection_scores", "[B, M]", "T")
          .Output(3, "detection_labels", "[B, M]", "tensor(int32)")
          .Output(4, "detection_indices", "[B, M]", "tensor(int32)", OpSchema::Optional)
          .TypeConstraint("I", kIndexTypes, "labels and counts")
          .Attr("mode", "rotated or circle", AttributeProto::STRING, std::string("rotated"))
          .Attr("iou_threshold", "rotated: suppress IoU >= this", AttributeProto::FLOAT, 0.2f)
          .Attr("min_radius", "circle: suppress squared centre distance <= this", AttributeProto::FLOAT, false)
          .Attr("max_output", "M", AttributeProto::INT, static_cast<int64_t>(83))
          .Attr("per_class", "1: only boxes of one label suppress each other", AttributeProto::INT,
                static_cast<int64_t>(0))
          .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            const int64_t m = int_attr(ctx, "max_output", 83);
            auto b = input_dim(ctx, 0, 3, 0), d = input_dim(ctx, 0, 3, 2);
            set_output(ctx, 0, TensorProto::INT32, {b});
            set_output(ctx, 1, float_type(ctx, 0), {b, fixed_dim(m), d});
            set_output(ctx, 2, float_type(ctx, 0), {b, fixed_dim(m)});
            set_output(ctx, 3, TensorProto::INT32, {b, fixed_dim(m)});
            set_output(ctx, 4, TensorProto::INT32, {b, fixed_dim(m)});
          }));
}

}  // namespace

std::vector<onnx::OpSchema> detect_schemas() { return {decode_schema(), nms_schema()}; }

}  // namespace pointrt::detect
