// Kernel factories of Trilu, EyeLike, DepthToSpace/SpaceToDepth, ReverseSequence, CenterCropPad,
// Compress and Unique: attributes at prepare time, input checks and output shapes at run time.
#include <optional>

#include "ops/onnx/tensor/center_crop_pad.h"
#include "ops/onnx/tensor/compress.h"
#include "ops/onnx/tensor/depth_space.h"
#include "ops/onnx/tensor/eye_like.h"
#include "ops/onnx/tensor/kernels.h"
#include "ops/onnx/tensor/reverse_sequence.h"
#include "ops/onnx/tensor/trilu.h"
#include "ops/onnx/tensor/unique.h"

namespace pointrt::tensor {

std::unique_ptr<OpKernel> make_trilu(const KernelInit& init) {
  const bool upper = init.attrs().get_int("upper", 1) != 0;
  return make_function_kernel([upper](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) fail(ctx.where(), ": input 0 must have rank >= 2, got shape ", shape_to_string(x.shape()));
    const int64_t k = ctx.has_input(1) ? read_int_scalar(ctx.input(1), ctx.where(), "input 1 (k)") : 0;
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    trilu_cpu(x, k, upper, y);
  });
}

std::unique_ptr<OpKernel> make_eye_like(const KernelInit& init) {
  const int64_t k = init.attrs().get_int("k", 0);
  std::optional<DType> out;  // from `dtype`, checked at prepare; else X's type (the table checks it)
  if (init.attrs().has("dtype")) out = eye_like_output_type(init.attrs(), DType::kUndefined, init.where());
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 2) fail(ctx.where(), ": input 0 must be 2-D, got shape ", shape_to_string(x.shape()));
    Tensor& y = ctx.output(0, out ? *out : x.dtype(), x.shape());
    eye_like_ref(k, y);
  });
}

std::unique_ptr<OpKernel> make_depth_space(const KernelInit& init, bool to_space) {
  const int64_t block = init.attrs().get_int("blocksize");
  DepthSpaceMode mode = DepthSpaceMode::kSpaceToDepth;
  if (to_space) {
    const std::string m = init.attrs().get_string("mode", "DCR");
    if (m != "DCR" && m != "CRD") fail(init.where(), ": attribute 'mode' is '", m, "', expected DCR or CRD");
    mode = m == "DCR" ? DepthSpaceMode::kDepthToSpaceDCR : DepthSpaceMode::kDepthToSpaceCRD;
  }
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0, x.dtype(), depth_space_shape(x.shape(), block, mode, ctx.where()));
    depth_space_cpu(x, block, mode, y);
  });
}

std::unique_ptr<OpKernel> make_reverse_sequence(const KernelInit& init) {
  const int64_t batch_axis = init.attrs().get_int("batch_axis", 1), time_axis = init.attrs().get_int("time_axis", 0);
  if (!((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0)))
    fail(init.where(), ": batch_axis (", batch_axis, ") and time_axis (", time_axis, ") must be 0 and 1 or 1 and 0");
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) fail(ctx.where(), ": input 0 must have rank >= 2, got shape ", shape_to_string(x.shape()));
    const std::vector<int64_t> lens = read_int_list(ctx.input(1), ctx.where(), "input 1 (sequence_lens)");
    if (static_cast<int64_t>(lens.size()) != x.dim(batch_axis))
      fail(ctx.where(), ": input 1 (sequence_lens) has ", lens.size(), " entries, but the batch axis has ",
           x.dim(batch_axis));
    for (size_t b = 0; b < lens.size(); ++b)
      if (lens[b] < 0 || lens[b] > x.dim(time_axis))
        fail(ctx.where(), ": input 1 (sequence_lens) holds ", lens[b], " at position ", b, ", outside [0, ",
             x.dim(time_axis), "]");
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    reverse_sequence_ref(x, lens, batch_axis, time_axis, y);
  });
}

std::unique_ptr<OpKernel> make_center_crop_pad(const KernelInit& init) {
  const std::vector<int64_t> axes_attr = init.attrs().get_ints("axes", {});
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const std::vector<int64_t> target = read_int_list(ctx.input(1), ctx.where(), "input 1 (shape)");
    std::vector<int64_t> axes = axes_attr;
    if (axes.empty())
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    if (target.size() != axes.size())
      fail(ctx.where(), ": input 1 (shape) has ", target.size(), " entries for ", axes.size(), " axes");
    Shape out = x.shape();
    std::vector<int64_t> offset(x.rank(), 0);
    std::vector<bool> seen(x.rank(), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t d = normalize_axis(axes[i], rank, ctx.where());
      if (seen[d]) fail(ctx.where(), ": attribute 'axes' names axis ", d, " twice");
      seen[d] = true;
      if (target[i] < 0) fail(ctx.where(), ": input 1 (shape) holds a negative size ", target[i]);
      out[d] = target[i];
      offset[d] = target[i] <= x.dim(d) ? (x.dim(d) - target[i]) / 2 : -((target[i] - x.dim(d)) / 2);
    }
    Tensor& y = ctx.output(0, x.dtype(), out);
    center_crop_pad_ref(x, offset, y);
  });
}

std::unique_ptr<OpKernel> make_compress(const KernelInit& init) {
  const bool has_axis = init.attrs().has("axis");
  const int64_t axis_attr = init.attrs().get_int("axis", 0);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const Tensor x = has_axis ? in : in.reshaped({in.numel()});
    if (x.rank() == 0) fail(ctx.where(), ": input 0 must have rank >= 1 when 'axis' is given");
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()), ctx.where());
    const std::vector<int64_t> kept = compress_selection(ctx.input(1), x.dim(axis), ctx.where());
    Shape s = x.shape();
    s[axis] = static_cast<int64_t>(kept.size());
    Tensor& y = ctx.output(0, x.dtype(), s);
    compress_ref(x, axis, kept, y);
  });
}

namespace {
void int64_output(KernelContext& ctx, size_t i, const std::vector<int64_t>& v) {
  if (i >= ctx.num_outputs() || ctx.node().outputs[i] < 0) return;
  Tensor& t = ctx.output(i, DType::kInt64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
}
}  // namespace

std::unique_ptr<OpKernel> make_unique(const KernelInit& init) {
  const bool has_axis = init.attrs().has("axis");
  const int64_t axis_attr = init.attrs().get_int("axis", 0);
  const bool sorted = init.attrs().get_int("sorted", 1) != 0;
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& in = ctx.input(0);
    const Tensor x = has_axis ? in : in.reshaped({in.numel()});
    if (x.rank() == 0) fail(ctx.where(), ": input 0 must have rank >= 1 when 'axis' is given");
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()), ctx.where());
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (size_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
    const UniqueResult r = unique_ref(x, outer, x.dim(axis), inner, sorted);
    Shape s = x.shape();
    s[axis] = static_cast<int64_t>(r.first.size());
    Tensor& y = ctx.output(0, x.dtype(), s);
    compress_ref(x, axis, r.first, y);  // the unique slices, in the chosen order
    int64_output(ctx, 1, r.first);
    int64_output(ctx, 2, r.inverse);
    int64_output(ctx, 3, r.counts);
  });
}

}  // namespace pointrt::tensor
