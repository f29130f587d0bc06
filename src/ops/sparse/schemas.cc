// ONNX schemas for the sparse family; the shape rules are those of OPS.md "Sparse-convolution
// family" and the <op>.h headers. Inference errors are non-fatal notes at import; the kernels
// check again at run time.
#include "ops/sparse/schemas.h"

#include "ops/schema_util.h"

namespace pointrt::sparse {

namespace {

using namespace schema_util;

const char* kTypeDoc = "float32, or float16/bfloat16 computed in float32";

std::vector<int64_t> ints_attr(InferenceContext& ctx, const char* name) {
  const AttributeProto* a = ctx.getAttribute(name);
  if (!a) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

OpSchema voxelize_schema() {
  return std::move(
      pointrt_schema("Voxelize", "Points -> mean voxel features, voxel coordinates (0, z, y, x) and point counts.")
          .TypeConstraint("T", kFloatTypes, kTypeDoc)
          .Input(0, "points", "[P, F >= 3] x, y, z first", "T")
          .Output(0, "voxel_features", "[V, F]", "T")
          .Output(1, "coords", "[V, 4] int32 (0, z, y, x)", "tensor(int32)")
          .Output(2, "num_points", "[V] int32", "tensor(int32)")
          .Attr("voxel_size", "vx, vy, vz", AttributeProto::FLOATS, true)
          .Attr("point_cloud_range", "xmin, ymin, zmin, xmax, ymax, zmax", AttributeProto::FLOATS, true)
          .Attr("max_points_per_voxel", "points kept per voxel", AttributeProto::INT, true)
          .Attr("max_voxels", "voxels kept", AttributeProto::INT, true)
          .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            const TensorShapeProto_Dimension v;  // data-dependent, at most max_voxels
            set_output(ctx, 0, float_type(ctx, 0), {v, input_dim(ctx, 0, 2, 1)});
            set_output(ctx, 1, TensorProto::INT32, {v, fixed_dim(4)});
            set_output(ctx, 2, TensorProto::INT32, {v});
          }));
}

OpSchema sparse_conv_schema() {
  return std::move(
      pointrt_schema("SparseConv", "Submanifold, regular, transposed or inverse 3D sparse convolution (spconv 2.x).")
          .TypeConstraint("T", kFloatTypes, kTypeDoc)
          .TypeConstraint("I", kIndexTypes, "site indices")
          .Input(0, "features", "[N, Cin]", "T")
          .Input(1, "indices", "[N, 4] (batch, i0, i1, i2)", "I")
          .Input(2, "weight", "[Cout, k0, k1, k2, Cin]", "T")
          .Input(3, "bias", "[Cout]", "T", OpSchema::Optional)
          .Output(0, "out_features", "[M, Cout]", "T")
          .Output(1, "out_indices", "[M, 4] int32", "tensor(int32)")
          .Attr("kernel_size", "ints[3]", AttributeProto::INTS, true)
          .Attr("input_spatial_shape", "ints[3]", AttributeProto::INTS, true)
          .Attr("output_spatial_shape", "ints[3] (checked when given)", AttributeProto::INTS, false)
          .Attr("stride", "ints[3]", AttributeProto::INTS, std::vector<int64_t>{1, 1, 1})
          .Attr("padding", "ints[3]", AttributeProto::INTS, std::vector<int64_t>{0, 0, 0})
          .Attr("dilation", "ints[3]", AttributeProto::INTS, std::vector<int64_t>{1, 1, 1})
          .Attr("output_padding", "ints[3]", AttributeProto::INTS, std::vector<int64_t>{0, 0, 0})
          .Attr("subm", "1: submanifold (output sites = input sites)", AttributeProto::INT, static_cast<int64_t>(0))
          .Attr("transposed", "1: transposed", AttributeProto::INT, static_cast<int64_t>(0))
          .Attr("inverse", "1: inverse of the regular convolution named by rulebook", AttributeProto::INT,
                static_cast<int64_t>(0))
          .Attr("rulebook", "key shared by nodes with the same site pairing", AttributeProto::STRING, std::string())
          .Attr("activation", "None, ReLU, LeakyReLU or Sigmoid", AttributeProto::STRING, std::string("None"))
          .Attr("alpha", "LeakyReLU slope", AttributeProto::FLOAT, 0.01f)
          .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            if (ints_attr(ctx, "input_spatial_shape").size() != 3)
              fail_shape_inference("attribute 'input_spatial_shape' must have 3 values");
            // Output sites: a submanifold convolution keeps its input's; the others depend on the data.
            const TensorShapeProto_Dimension m =
                int_attr(ctx, "subm", 0) != 0 ? input_dim(ctx, 0, 2, 0) : TensorShapeProto_Dimension();
            set_output(ctx, 0, float_type(ctx, 0), {m, input_dim(ctx, 2, 5, 0)});
            set_output(ctx, 1, TensorProto::INT32, {m, fixed_dim(4)});
          }));
}

OpSchema scatter_dense_schema() {
  return std::move(
      pointrt_schema("ScatterDense", "Sparse features -> the dense grid [B, C, S0, S1, S2] (spconv's dense()).")
          .TypeConstraint("T", kFloatTypes, kTypeDoc)
          .TypeConstraint("I", kIndexTypes, "site indices")
          .Input(0, "features", "[N, C]", "T")
          .Input(1, "indices", "[N, 4] (batch, i0, i1, i2)", "I")
          .Output(0, "dense", "[batch_size, C, S0, S1, S2]", "T")
          .Attr("spatial_shape", "S0, S1, S2", AttributeProto::INTS, true)
          .Attr("batch_size", "B", AttributeProto::INT, static_cast<int64_t>(1))
          .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            const std::vector<int64_t> s = ints_attr(ctx, "spatial_shape");
            if (s.size() != 3) fail_shape_inference("attribute 'spatial_shape' must have 3 values");
            const int64_t batch = int_attr(ctx, "batch_size", 1);
            set_output(ctx, 0, float_type(ctx, 0),
                       {fixed_dim(batch), input_dim(ctx, 0, 2, 1), fixed_dim(s[0]), fixed_dim(s[1]), fixed_dim(s[2])});
          }));
}

}  // namespace

std::vector<onnx::OpSchema> sparse_schemas() {
  return {voxelize_schema(), sparse_conv_schema(), scatter_dense_schema()};
}

}  // namespace pointrt::sparse
