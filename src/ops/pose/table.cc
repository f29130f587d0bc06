// Operator table rows of the pointrt pose family (docs/operators-pose.md). Each kernel parses its
// attributes at prepare time and checks shapes, dtypes and labels at run time; errors name the
// node, the input and the value.
#include <memory>

#include "ops/families.h"
#include "ops/pointnet2/common.h"
#include "ops/pose/instance_reduce.h"
#include "ops/pose/mean_shift.h"
#include "ops/pose/pose_common.h"
#include "ops/pose/rigid_fit.h"
#include "ops/pose/schemas.h"

namespace pointrt::pose {
namespace {
using pointnet2::check_float_rank;

// Output i, or a scratch tensor when the node does not use it.
Tensor& output_or_scratch(KernelContext& ctx, size_t i, DType dtype, const Shape& shape, Tensor& scratch) {
  if (i < ctx.num_outputs()) return ctx.output(i, dtype, shape);
  scratch = Tensor::allocate(dtype, shape);
  return scratch;
}

void check_labels_shape(const Tensor& labels, int64_t batch, int64_t n, const std::string& where,
                        const std::string& name) {
  if (labels.rank() != 2 || labels.dim(0) != batch || labels.dim(1) != n)
    fail(where, ": input ", name, " must be [B, N] = [", batch, ", ", n, "], got shape ",
         shape_to_string(labels.shape()));
}

std::unique_ptr<OpKernel> mean_shift_kernel(const KernelInit& init) {
  auto attrs = parse_mean_shift(init.attrs(), init.where());
  auto votes_name = init.input_label(0, "votes"), labels_name = init.input_label(1, "labels");
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& votes = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    check_float_rank(votes, ctx.where(), votes_name, 4);
    if (votes.dim(3) != 3)
      fail(ctx.where(), ": input ", votes_name, " must be [B, K, N, 3], got shape ", shape_to_string(votes.shape()));
    const int64_t batch = votes.dim(0), sets = votes.dim(1), n = votes.dim(2);
    if (attrs.filter_vote >= sets)
      fail(ctx.where(), ": attribute 'filter_vote' = ", attrs.filter_vote, " is not a vote set of input ", votes_name,
           " (K = ", sets, ")");
    if (n > std::numeric_limits<int32_t>::max()) fail(ctx.where(), ": input ", votes_name, " has too many points");
    check_labels_shape(labels, batch, n, ctx.where(), labels_name);
    const auto l = read_labels(labels, attrs.num_instances, ctx.where(), labels_name);
    const Shape shape = {batch, attrs.num_instances, sets};
    Tensor& modes = ctx.output(0, DType::kFloat32, {batch, attrs.num_instances, sets, 3});
    Tensor scratch;
    Tensor& counts = output_or_scratch(ctx, 1, DType::kInt32, shape, scratch);
    mean_shift(votes.data_as<float>(), l.data(), batch, sets, n, attrs, modes.data_as<float>(),
               counts.data_as<int32_t>());
  });
}

std::unique_ptr<OpKernel> instance_reduce_kernel(const KernelInit& init) {
  auto attrs = parse_instance_reduce(init.attrs(), init.where());
  auto values_name = init.input_label(0, "values"), labels_name = init.input_label(1, "labels");
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& values = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    check_float_rank(values, ctx.where(), values_name, 3);
    const int64_t batch = values.dim(0), n = values.dim(1), channels = values.dim(2);
    check_labels_shape(labels, batch, n, ctx.where(), labels_name);
    const auto l = read_labels(labels, attrs.num_instances, ctx.where(), labels_name);
    Tensor& reduced = ctx.output(0, DType::kFloat32, {batch, attrs.num_instances, channels});
    Tensor scratch;
    Tensor& counts = output_or_scratch(ctx, 1, DType::kInt32, {batch, attrs.num_instances}, scratch);
    instance_reduce(values.data_as<float>(), l.data(), batch, n, channels, attrs, reduced.data_as<float>(),
                    counts.data_as<int32_t>());
  });
}

void check_points_tensor(const Tensor& t, const std::string& where, const std::string& name) {
  if (t.dtype() != DType::kFloat32)
    fail(where, ": input ", name, " has element type ", dtype_name(t.dtype()), ", expected float32");
  if (t.rank() < 2 || t.shape().back() != 3)
    fail(where, ": input ", name, " must be [..., P, 3], got shape ", shape_to_string(t.shape()));
}

void check_weights(const Tensor& w, const Shape& expected, const std::string& where, const std::string& name) {
  if (w.dtype() != DType::kFloat32 || w.shape() != expected)
    fail(where, ": input ", name, " must be float32 ", shape_to_string(expected),
         " (the target's shape without its "
         "last dimension), got ",
         dtype_name(w.dtype()), " ", shape_to_string(w.shape()));
  const float* p = w.data_as<float>();
  for (int64_t i = 0; i < w.numel(); ++i)
    if (!(p[i] >= 0.f) || !std::isfinite(p[i]))
      fail(where, ": input ", name, " has weight ", p[i], " at flat index ", i, "; weights must be finite and >= 0");
}

std::unique_ptr<OpKernel> rigid_fit_kernel(const KernelInit& init) {
  auto names = std::vector<std::string>{init.input_label(0, "source"), init.input_label(1, "target"),
                                        init.input_label(2, "weight")};
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& source = ctx.input(0);
    const Tensor& target = ctx.input(1);
    check_points_tensor(source, ctx.where(), names[0]);
    check_points_tensor(target, ctx.where(), names[1]);
    const Shape& ss = source.shape();
    const Shape& ts = target.shape();
    if (ss.size() > ts.size() || !std::equal(ss.begin(), ss.end(), ts.end() - ss.size()))
      fail(ctx.where(), ": input ", names[0], " shape ", shape_to_string(ss), " must equal the last dimensions of ",
           names[1], " shape ", shape_to_string(ts), " (the source repeats over the target's leading dimensions)");
    const Shape lead(ts.begin(), ts.end() - 2);
    const int64_t p = ts[ts.size() - 2], fits = shape_numel(lead);
    const int64_t source_fits = shape_numel(Shape(ss.begin(), ss.end() - 2));
    const float* weight = nullptr;
    if (ctx.has_input(2)) {
      const Tensor& w = ctx.input(2);
      check_weights(w, Shape(ts.begin(), ts.end() - 1), ctx.where(), names[2]);
      weight = w.data_as<float>();
    }
    Shape pose_shape = lead;
    pose_shape.push_back(3);
    pose_shape.push_back(4);
    Tensor& pose = ctx.output(0, DType::kFloat32, pose_shape);
    int32_t* status = ctx.num_outputs() > 1 ? ctx.output(1, DType::kInt32, lead).data_as<int32_t>() : nullptr;
    if (fits > 0)
      rigid_fit(source.data_as<float>(), target.data_as<float>(), weight, fits, source_fits, p, pose.data_as<float>(),
                status);
  });
}

}  // namespace
}  // namespace pointrt::pose

namespace pointrt {

Family register_pose() {
  using namespace pose;
  Family family{"pose"};
  OpTable& t = family.rows;
  family.schemas = pose_schemas();
  const char* dom = "pointrt";
  t.add({dom, "MeanShift", 1, 1, kFloat32Only, mean_shift_kernel,
         "float32 votes, int32/int64 labels; PVN3D's Gaussian kernel from the densest vote", 0});
  t.add({dom, "InstanceReduce", 1, 1, kFloat32Only, instance_reduce_kernel,
         "float32 values, int32/int64 labels; mean or sum per instance", 0});
  t.add({dom, "RigidFit", 1, 1, kFloat32Only, rigid_fit_kernel,
         "float32; weighted Kabsch with the reflection fix, status for degenerate input", 0});
  return family;
}

}  // namespace pointrt
