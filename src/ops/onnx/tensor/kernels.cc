// Kernel factories of the data-movement ops: attribute parsing at prepare time, input
// checks and the calls into the op files (concat.cc, slice.cc, ...) at run time.
#include "ops/onnx/tensor/kernels.h"

#include <cstring>

#include "ops/onnx/tensor/concat.h"
#include "ops/onnx/tensor/expand.h"
#include "ops/onnx/tensor/gather.h"
#include "ops/onnx/tensor/pad.h"
#include "ops/onnx/tensor/slice.h"
#include "ops/onnx/tensor/transpose.h"

namespace pointrt::tensor {

namespace {
// Reject a non-index dtype for an index input before reading it.
void check_index_dtype(const Tensor& t, const std::string& where, const std::string& label) {
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)
    fail(where, ": ", label, " must be int32 or int64, got ", dtype_name(t.dtype()));
}
}  // namespace

std::unique_ptr<OpKernel> make_concat(const KernelInit& init) {
  // Concat-1..3: axis optional, default 1.
  const int64_t axis_attr = init.opset() < 4 ? init.attrs().get_int("axis", 1) : init.attrs().get_int("axis");
  return make_function_kernel([=](KernelContext& ctx) {
    std::vector<const Tensor*> ins;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) ins.push_back(&ctx.input(i));
    if (ins.empty()) fail(ctx.where(), ": Concat needs at least one input");
    if (ins[0]->rank() == 0) fail(ctx.where(), ": Concat inputs must have rank >= 1, input 0 is a scalar");
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(ins[0]->rank()), ctx.where());
    Shape s = concat_shape(ins, axis, ctx.where());
    Tensor& y = ctx.output(0, ins[0]->dtype(), s);
    concat_cpu(ins, axis, y);
  });
}

std::unique_ptr<OpKernel> make_split(const KernelInit& init, bool split_is_input, bool has_num_outputs) {
  const int64_t axis_attr = init.attrs().get_int("axis", 0);
  const std::vector<int64_t> split_attr = split_is_input ? std::vector<int64_t>{} : init.attrs().get_ints("split", {});
  const int64_t num_outputs = has_num_outputs ? init.attrs().get_int("num_outputs", 0) : 0;
  if (has_num_outputs && init.attrs().has("num_outputs") &&
      num_outputs != static_cast<int64_t>(init.node.outputs.size()))
    fail(init.where(), ": attribute 'num_outputs' is ", num_outputs, " but the node has ", init.node.outputs.size(),
         " outputs");
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()), ctx.where());
    std::vector<int64_t> split = split_attr;
    if (split_is_input && ctx.has_input(1)) split = read_int_list(ctx.input(1), ctx.where(), "input 1 (split)");
    if (!split.empty() && num_outputs)
      fail(ctx.where(), ": give either input 'split' or attribute 'num_outputs', not both");
    const int64_t parts = static_cast<int64_t>(ctx.num_outputs());
    std::vector<int64_t> sizes = split_sizes(x.dim(axis), split, parts, has_num_outputs, ctx.where());
    std::vector<Tensor*> outs;
    for (int64_t i = 0; i < parts; ++i) {
      Shape s = x.shape();
      s[axis] = sizes[i];
      outs.push_back(&ctx.output(i, x.dtype(), s));
    }
    split_cpu(x, axis, outs);
  });
}

std::unique_ptr<OpKernel> make_transpose(const KernelInit& init) {
  const std::vector<int64_t> perm_attr = init.attrs().get_ints("perm", {});
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> perm = transpose_perm(perm_attr, x.rank(), ctx.where());
    Tensor& y = ctx.output(0, x.dtype(), transpose_shape(x.shape(), perm));
    transpose_cpu(x, perm, y);
  });
}

std::unique_ptr<OpKernel> make_slice(const KernelInit& init, bool params_are_inputs) {
  std::vector<int64_t> starts, ends, axes;
  if (!params_are_inputs) {
    starts = init.attrs().get_ints("starts");
    ends = init.attrs().get_ints("ends");
    axes = init.attrs().get_ints("axes", {});
  }
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    SlicePlan plan;
    if (params_are_inputs) {
      const std::string w = ctx.where();
      std::vector<int64_t> s = read_int_list(ctx.input(1), w, "input 1 (starts)");
      std::vector<int64_t> e = read_int_list(ctx.input(2), w, "input 2 (ends)");
      std::vector<int64_t> a =
          ctx.has_input(3) ? read_int_list(ctx.input(3), w, "input 3 (axes)") : std::vector<int64_t>{};
      std::vector<int64_t> st =
          ctx.has_input(4) ? read_int_list(ctx.input(4), w, "input 4 (steps)") : std::vector<int64_t>{};
      plan = slice_plan(x.shape(), s, e, a, st, w);
    } else {
      plan = slice_plan(x.shape(), starts, ends, axes, {}, ctx.where());
    }
    Tensor& y = ctx.output(0, x.dtype(), plan.out_shape);
    slice_cpu(x, plan, y);
  });
}

std::unique_ptr<OpKernel> make_pad(const KernelInit& init, bool params_are_inputs, bool has_axes, bool allow_wrap) {
  const PadMode mode = parse_pad_mode(init.attrs().get_string("mode", "constant"), allow_wrap, init.where());
  const std::vector<int64_t> pads_attr = params_are_inputs ? std::vector<int64_t>{} : init.attrs().get_ints("pads");
  const float value_attr = params_are_inputs ? 0.f : init.attrs().get_float("value", 0.f);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const std::string w = ctx.where();
    std::vector<int64_t> pads = pads_attr, axes;
    if (params_are_inputs) pads = read_int_list(ctx.input(1), w, "input 1 (pads)");
    if (has_axes && ctx.has_input(3)) axes = read_int_list(ctx.input(3), w, "input 3 (axes)");
    // The constant as one element of x's dtype.
    uint64_t value = 0;
    if (params_are_inputs && ctx.has_input(2) && ctx.input(2).numel() > 0) {
      const Tensor& v = ctx.input(2);
      if (v.dtype() != x.dtype())
        fail(w, ": input 2 (constant_value) is ", dtype_name(v.dtype()), " but input 0 is ", dtype_name(x.dtype()));
      std::memcpy(&value, v.data(), dtype_size(v.dtype()));
    } else if (!params_are_inputs) {
      if (x.dtype() == DType::kFloat16) {
        uint16_t h = float_to_half(value_attr);
        std::memcpy(&value, &h, 2);
      } else {
        dispatch_all(x.dtype(), w.c_str(), [&](auto tag) {
          using T = decltype(tag);
          T v = static_cast<T>(value_attr);
          std::memcpy(&value, &v, sizeof(T));
        });
      }
    }
    PadPlan plan = pad_plan(x.shape(), pads, axes, mode, w);
    Tensor& y = ctx.output(0, x.dtype(), plan.out_shape);
    pad_cpu(x, plan, &value, y);
  });
}

std::unique_ptr<OpKernel> make_gather(const KernelInit& init) {
  const int64_t axis_attr = init.attrs().get_int("axis", 0);
  const std::string label = input_label(init, 1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor &x = ctx.input(0), &idx = ctx.input(1);
    check_index_dtype(idx, ctx.where(), label);
    if (x.rank() == 0) fail(ctx.where(), ": input 0 (data) must have rank >= 1, got a scalar");
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()), ctx.where());
    Tensor& y = ctx.output(0, x.dtype(), gather_shape(x.shape(), idx.shape(), axis));
    gather_cpu(x, idx, axis, y, ctx.where(), label);
  });
}

namespace {
// Expand's output shape: x broadcast against the shape tensor `shape_input` (input 1 of Expand).
Shape expand_shape(const Shape& x, const Tensor& shape_input, const std::string& where, const char* label) {
  std::vector<int64_t> shape = read_int_list(shape_input, where, label);
  for (int64_t d : shape)
    if (d < 0) fail(where, ": ", label, " ", shape_to_string(shape), " holds a negative dimension");
  return broadcast_shape(x, shape, where);
}

// GatherElements, or (`expanded`) the tensor pass's GatherElementsExpanded(data, i, shape) =
// GatherElements(data, Expand(i, shape)), whose errors read as the GatherElements node's with the
// index named as expanded.
std::unique_ptr<OpKernel> gather_elements_kernel(const KernelInit& init, bool expanded) {
  const int64_t axis_attr = init.attrs().get_int("axis", 0);
  const std::string label = expanded ? "input 1 (indices, expanded by input 2's shape)" : input_label(init, 1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor &x = ctx.input(0), &idx = ctx.input(1);
    check_index_dtype(idx, ctx.where(), label);
    if (x.rank() == 0) fail(ctx.where(), ": input 0 (data) must have rank >= 1, got a scalar");
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(x.rank()), ctx.where());
    const Shape index_shape =
        expanded ? expand_shape(idx.shape(), ctx.input(2), ctx.where(), "input 2 (Expand's shape)") : idx.shape();
    check_gather_elements(x, index_shape, axis, ctx.where());
    Tensor& y = ctx.output(0, x.dtype(), index_shape);
    gather_elements_cpu(x, idx, index_shape, axis, y, ctx.where(), label);
  });
}
}  // namespace

std::unique_ptr<OpKernel> make_gather_elements(const KernelInit& init) { return gather_elements_kernel(init, false); }
std::unique_ptr<OpKernel> make_gather_elements_expanded(const KernelInit& init) {
  return gather_elements_kernel(init, true);
}

std::unique_ptr<OpKernel> make_gather_nd(const KernelInit& init) {
  const int64_t batch_dims = init.attrs().get_int("batch_dims", 0);
  const std::string label = input_label(init, 1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor &x = ctx.input(0), &idx = ctx.input(1);
    check_index_dtype(idx, ctx.where(), label);
    Tensor& y = ctx.output(0, x.dtype(), gather_nd_shape(x.shape(), idx.shape(), batch_dims, ctx.where()));
    gather_nd_cpu(x, idx, batch_dims, y, ctx.where(), label);
  });
}

std::unique_ptr<OpKernel> make_expand(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0, x.dtype(), expand_shape(x.shape(), ctx.input(1), ctx.where(), "input 1 (shape)"));
    expand_cpu(x, y);
  });
}

std::unique_ptr<OpKernel> make_tile(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> repeats = read_int_list(ctx.input(1), ctx.where(), "input 1 (repeats)");
    Tensor& y = ctx.output(0, x.dtype(), tile_shape(x.shape(), repeats, ctx.where()));
    tile_cpu(x, repeats, y);
  });
}

}  // namespace pointrt::tensor
