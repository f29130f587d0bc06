// Operator table rows of the pointrt PointNet++ family (OPS.md "PointNet++ family"). Each row's
// kernel parses its attributes at prepare time, checks shapes, dtypes and indices at run time
// (errors name the node, the input and the value) and calls the optimised kernel of <op>.cc.
#include <memory>
#include "ops/index_types.h"

#include "ops/families.h"
#include "ops/pointnet2/ball_query.h"
#include "ops/pointnet2/furthest_point_sample.h"
#include "ops/pointnet2/gather_points.h"
#include "ops/pointnet2/group_points.h"
#include "ops/pointnet2/knn.h"
#include "ops/pointnet2/schemas.h"
#include "ops/pointnet2/three_interpolate.h"
#include "ops/pointnet2/three_nn.h"

namespace pointrt::pointnet2 {
namespace {

// The kernels' temporary buffers come from the run's allocator; `holder` keeps the block alive
// until the kernel call returns.
ScratchAllocator run_scratch(KernelContext& ctx, Tensor& holder) {
  return [&ctx, &holder](size_t floats) {
    holder = ctx.temporary(floats * sizeof(float));
    return reinterpret_cast<float*>(holder.data());
  };
}

// "'xyz' (value 'points')" for messages.
std::vector<std::string> input_labels(const KernelInit& init, std::initializer_list<const char*> roles) {
  std::vector<std::string> labels;
  size_t i = 0;
  for (const char* role : roles) labels.push_back(init.input_label(i++, role));
  return labels;
}

// Output i, or a scratch tensor when the node does not use it.
Tensor& output_or_scratch(KernelContext& ctx, size_t i, DType dtype, const Shape& shape, Tensor& scratch) {
  if (i < ctx.num_outputs()) return ctx.output(i, dtype, shape);
  scratch = Tensor::allocate(dtype, shape);
  return scratch;
}

std::unique_ptr<OpKernel> furthest_point_sample_kernel(const KernelInit& init) {
  auto attrs = parse_furthest_point_sample(init.attrs(), init.where());
  auto names = input_labels(init, {"xyz"});
  return make_function_kernel([attrs, names](KernelContext& ctx) {
    const Tensor& xyz = ctx.input(0);
    const int64_t n = check_point_cloud(xyz, ctx.where(), names[0]);
    if (n == 0)
      fail(ctx.where(), ": input ", names[0], " has no points (shape ", shape_to_string(xyz.shape()),
           "); N = 0 is an error");
    Tensor& idx = ctx.output(0, DType::kInt32, {xyz.dim(0), attrs.npoint});
    furthest_point_sample(xyz.data_as<float>(), xyz.dim(0), n, attrs, idx.data_as<int32_t>());
  });
}

std::unique_ptr<OpKernel> gather_points_kernel(const KernelInit& init) {
  auto names = input_labels(init, {"features", "idx"});
  return make_function_kernel([names](KernelContext& ctx) {
    const Tensor& features = ctx.input(0);
    const Tensor idx = as_signed_indices(ctx.input(1));
    check_float_rank(features, ctx.where(), names[0], 3);
    const int64_t batch = features.dim(0), channels = features.dim(1), n = features.dim(2);
    check_index_rank(idx, ctx.where(), names[1], 2, batch);
    check_indices_in_range(idx, n, ctx.where(), names[1], "N, the last dimension of 'features'");
    const int64_t m = idx.dim(1);
    Tensor& out = ctx.output(0, DType::kFloat32, {batch, channels, m});
    Tensor scratch;
    dispatch_index(idx.dtype(), ctx.where(), names[1], [&](auto tag) {
      using Index = decltype(tag);
      gather_points(features.data_as<float>(), idx.data_as<Index>(), batch, channels, n, m, out.data_as<float>(),
                    run_scratch(ctx, scratch));
    });
  });
}

std::unique_ptr<OpKernel> ball_query_kernel(const KernelInit& init) {
  auto attrs = parse_ball_query(init.attrs(), init.where());
  auto names = input_labels(init, {"xyz", "new_xyz"});
  return make_function_kernel([attrs, names](KernelContext& ctx) {
    const Tensor& xyz = ctx.input(0);
    const Tensor& centres = ctx.input(1);
    const int64_t n = check_point_cloud(xyz, ctx.where(), names[0]);
    const int64_t m = check_point_cloud(centres, ctx.where(), names[1], xyz.dim(0));
    Tensor& idx = ctx.output(0, DType::kInt32, {xyz.dim(0), m, attrs.nsample});
    ball_query(xyz.data_as<float>(), centres.data_as<float>(), xyz.dim(0), n, m, attrs, idx.data_as<int32_t>());
  });
}

std::unique_ptr<OpKernel> group_points_kernel(const KernelInit& init) {
  auto names = input_labels(init, {"features", "idx"});
  return make_function_kernel([names](KernelContext& ctx) {
    const Tensor& features = ctx.input(0);
    const Tensor idx = as_signed_indices(ctx.input(1));
    check_float_rank(features, ctx.where(), names[0], 3);
    const int64_t batch = features.dim(0), channels = features.dim(1), n = features.dim(2);
    check_index_rank(idx, ctx.where(), names[1], 3, batch);
    check_indices_in_range(idx, n, ctx.where(), names[1], "N, the last dimension of 'features'");
    const int64_t m = idx.dim(1), s = idx.dim(2);
    Tensor& out = ctx.output(0, DType::kFloat32, {batch, channels, m, s});
    Tensor scratch;
    dispatch_index(idx.dtype(), ctx.where(), names[1], [&](auto tag) {
      using Index = decltype(tag);
      group_points(features.data_as<float>(), idx.data_as<Index>(), batch, channels, n, m, s, out.data_as<float>(),
                   run_scratch(ctx, scratch));
    });
  });
}

std::unique_ptr<OpKernel> three_nn_kernel(const KernelInit& init) {
  auto names = input_labels(init, {"unknown", "known"});
  return make_function_kernel([names](KernelContext& ctx) {
    const Tensor& unknown = ctx.input(0);
    const Tensor& known = ctx.input(1);
    const int64_t n = check_point_cloud(unknown, ctx.where(), names[0]);
    const int64_t m = check_point_cloud(known, ctx.where(), names[1], unknown.dim(0));
    if (m == 0)
      fail(ctx.where(), ": input ", names[1], " has no points (shape ", shape_to_string(known.shape()),
           "); m = 0 is an error");
    const Shape shape = {unknown.dim(0), n, 3};
    Tensor& dist = ctx.output(0, DType::kFloat32, shape);
    Tensor scratch;
    Tensor& idx = output_or_scratch(ctx, 1, DType::kInt32, shape, scratch);
    three_nn(unknown.data_as<float>(), known.data_as<float>(), unknown.dim(0), n, m, dist.data_as<float>(),
             idx.data_as<int32_t>());
  });
}

std::unique_ptr<OpKernel> three_interpolate_kernel(const KernelInit& init) {
  auto names = input_labels(init, {"features", "idx", "weight"});
  return make_function_kernel([names](KernelContext& ctx) {
    const Tensor& features = ctx.input(0);
    const Tensor idx = as_signed_indices(ctx.input(1));
    const Tensor& weight = ctx.input(2);
    check_float_rank(features, ctx.where(), names[0], 3);
    const int64_t batch = features.dim(0), channels = features.dim(1), m = features.dim(2);
    check_index_rank(idx, ctx.where(), names[1], 3, batch);
    if (idx.dim(2) != 3)
      fail(ctx.where(), ": input ", names[1], " must be [B, n, 3], got shape ", shape_to_string(idx.shape()));
    check_float_rank(weight, ctx.where(), names[2], 3, batch);
    if (weight.shape() != idx.shape())
      fail(ctx.where(), ": input ", names[2], " must have the shape of ", names[1], " ", shape_to_string(idx.shape()),
           ", got ", shape_to_string(weight.shape()));
    check_indices_in_range(idx, m, ctx.where(), names[1], "m, the last dimension of 'features'");
    const int64_t n = idx.dim(1);
    Tensor& out = ctx.output(0, DType::kFloat32, {batch, channels, n});
    Tensor scratch;
    dispatch_index(idx.dtype(), ctx.where(), names[1], [&](auto tag) {
      using Index = decltype(tag);
      three_interpolate(features.data_as<float>(), idx.data_as<Index>(), weight.data_as<float>(), batch, channels, m, n,
                        out.data_as<float>(), run_scratch(ctx, scratch));
    });
  });
}

std::unique_ptr<OpKernel> knn_kernel(const KernelInit& init) {
  auto attrs = parse_knn(init.attrs(), init.where());
  auto names = input_labels(init, {"xyz", "new_xyz"});
  return make_function_kernel([attrs, names](KernelContext& ctx) {
    const Tensor& xyz = ctx.input(0);
    const Tensor& queries = ctx.input(1);
    const int64_t n = check_point_cloud(xyz, ctx.where(), names[0]);
    const int64_t m = check_point_cloud(queries, ctx.where(), names[1], xyz.dim(0));
    if (attrs.k > n)
      fail(ctx.where(), ": attribute 'k' = ", attrs.k, " is larger than the number of points N = ", n, " of input ",
           names[0], " (shape ", shape_to_string(xyz.shape()), ")");
    const Shape shape = {xyz.dim(0), m, attrs.k};
    Tensor& idx = ctx.output(0, DType::kInt32, shape);
    Tensor scratch;
    Tensor& dist2 = output_or_scratch(ctx, 1, DType::kFloat32, shape, scratch);
    knn(xyz.data_as<float>(), queries.data_as<float>(), xyz.dim(0), n, m, attrs, idx.data_as<int32_t>(),
        dist2.data_as<float>());
  });
}

}  // namespace
}  // namespace pointrt::pointnet2

namespace pointrt {

Family register_pointnet2() {
  using namespace pointnet2;
  Family family{"pointnet2"};
  OpTable& t = family.rows;
  family.schemas = pointnet2_schemas();
  const char* dom = "pointrt";
  t.add({dom, "FurthestPointSample", 1, 1, kFloat32Only, furthest_point_sample_kernel,
         "float32 xyz; ignore_origin as pointnet2_ops/PVN3D", 0});
  t.add({dom, "GatherPoints", 1, 1, kFloat32Only, gather_points_kernel, "float32 features, int32/int64 idx", 0});
  t.add({dom, "BallQuery", 1, 1, kFloat32Only, ball_query_kernel,
         "float32; grid search, first nsample hits in point order", 0});
  t.add({dom, "GroupPoints", 1, 1, kFloat32Only, group_points_kernel, "float32 features, int32/int64 idx", 0});
  t.add({dom, "ThreeNN", 1, 1, kFloat32Only, three_nn_kernel, "float32; grid search; dist is sqrt(d2)", 0});
  t.add({dom, "ThreeInterpolate", 1, 1, kFloat32Only, three_interpolate_kernel,
         "float32 features/weight, int32/int64 idx", 0});
  t.add({dom, "KNN", 1, 1, kFloat32Only, knn_kernel, "float32; grid search, ties by lower index", 0});
  return family;
}

}  // namespace pointrt
