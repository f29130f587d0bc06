// SplitToSequence and ConcatFromSequence (contract in sequence.h).
#include <cstring>

#include "ops/onnx/sequence/sequence.h"

namespace pointrt::sequence {

namespace {

// Copies `count` elements (strings one by one) from src[src_off] to dst[dst_off].
void copy_run(const Tensor& src, int64_t src_off, Tensor& dst, int64_t dst_off, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DType::kString) {
    const std::string* s = src.data_as<std::string>() + src_off;
    std::copy(s, s + count, dst.data_as<std::string>() + dst_off);
    return;
  }
  const size_t es = dtype_size(src.dtype());
  std::memcpy(static_cast<char*>(dst.data()) + dst_off * es, static_cast<const char*>(src.data()) + src_off * es,
              static_cast<size_t>(count) * es);
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

int normalized_axis(const KernelContext& ctx, int64_t axis, size_t rank, const char* what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    fail(ctx.where(), ": ", what, " ", axis, " is out of range for rank ", rank, " (allowed [", -r, ", ", r - 1, "])");
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

}  // namespace

std::vector<int64_t> split_lengths(const KernelContext& ctx, const Tensor* split, int64_t length) {
  if (!split) return std::vector<int64_t>(static_cast<size_t>(length), 1);
  if (split->dtype() != DType::kInt64 && split->dtype() != DType::kInt32)
    fail(ctx.where(), ": 'split' must be int32 or int64, got ", dtype_name(split->dtype()));
  auto at = [&](int64_t i) {
    return split->dtype() == DType::kInt64 ? split->data_as<int64_t>()[i] : split->data_as<int32_t>()[i];
  };
  std::vector<int64_t> lengths;
  if (split->rank() == 0) {
    const int64_t chunk = at(0);
    if (chunk <= 0) fail(ctx.where(), ": 'split' is ", chunk, ", a chunk length must be positive");
    for (int64_t done = 0; done < length; done += chunk) lengths.push_back(std::min(chunk, length - done));
    return lengths;
  }
  if (split->rank() != 1)
    fail(ctx.where(), ": 'split' must be a scalar or 1-D, got shape ", shape_to_string(split->shape()));
  int64_t total = 0;
  for (int64_t i = 0; i < split->numel(); ++i) {
    const int64_t l = at(i);
    if (l < 0) fail(ctx.where(), ": 'split' holds ", l, ", chunk lengths must not be negative");
    lengths.push_back(l);
    total += l;
  }
  if (total != length)
    fail(ctx.where(), ": the 'split' lengths add up to ", total, " but the axis has length ", length);
  return lengths;
}

std::vector<Tensor> split_along(const KernelContext& ctx, const Tensor& input, int axis,
                                const std::vector<int64_t>& lengths) {
  const Shape& s = input.shape();
  const int64_t outer = product(s, 0, axis), inner = product(s, axis + 1, s.size()), len = s[axis];
  std::vector<Tensor> parts;
  parts.reserve(lengths.size());
  int64_t start = 0;
  for (int64_t l : lengths) {
    Shape ps = s;
    ps[axis] = l;
    Tensor part = new_element(ctx, input.dtype(), ps);
    for (int64_t o = 0; o < outer; ++o) copy_run(input, (o * len + start) * inner, part, o * l * inner, l * inner);
    parts.push_back(std::move(part));
    start += l;
  }
  return parts;
}

Tensor concat_elements(KernelContext& ctx, const std::vector<Tensor>& items, int64_t axis_attr, bool new_axis) {
  if (items.empty()) fail(ctx.where(), ": the input sequence is empty (there is no shape to concatenate to)");
  const Shape& first = items[0].shape();
  const int axis = normalized_axis(ctx, axis_attr, first.size() + (new_axis ? 1 : 0), "axis");
  Shape out_shape = first;
  if (new_axis) out_shape.insert(out_shape.begin() + axis, 0);
  for (size_t i = 0; i < items.size(); ++i) {
    const Shape& si = items[i].shape();
    bool same = si.size() == first.size();
    for (size_t d = 0; same && d < si.size(); ++d)
      same = si[d] == first[d] || (!new_axis && static_cast<int>(d) == axis);
    if (!same)
      fail(ctx.where(), ": sequence element ", i, " is ", shape_to_string(si), " but element 0 is ",
           shape_to_string(first), new_axis ? " (stacking needs equal shapes)" : " (only the axis may differ)");
    if (i > 0 || new_axis) out_shape[axis] += new_axis ? 1 : si[axis];
  }
  Tensor& out = ctx.output(0, items[0].dtype(), out_shape);
  const int64_t outer = product(out_shape, 0, axis), inner = product(out_shape, axis + 1, out_shape.size());
  const int64_t out_len = out_shape[axis];
  int64_t start = 0;
  for (const Tensor& t : items) {
    const int64_t l = new_axis ? 1 : t.dim(axis);
    for (int64_t o = 0; o < outer; ++o) copy_run(t, o * l * inner, out, (o * out_len + start) * inner, l * inner);
    start += l;
  }
  return out;
}

std::unique_ptr<OpKernel> make_split_to_sequence(const KernelInit& init) {
  const int64_t axis = init.attrs().get_int("axis", 0);
  const bool keepdims = init.attrs().get_int("keepdims", 1) != 0;
  return make_function_kernel([axis, keepdims](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.rank() == 0) fail(ctx.where(), ": the input must have rank >= 1, got a scalar");
    const int a = normalized_axis(ctx, axis, x.rank(), "axis");
    const Tensor* split = ctx.has_input(1) ? &ctx.input(1) : nullptr;
    std::vector<Tensor> parts = split_along(ctx, x, a, split_lengths(ctx, split, x.dim(a)));
    if (!split && !keepdims)
      for (Tensor& p : parts) {
        Shape s = p.shape();
        s.erase(s.begin() + a);
        p = p.reshaped(s);
      }
    ctx.set_any_output(0, Sequence(x.dtype(), std::move(parts)));
  });
}

std::unique_ptr<OpKernel> make_concat_from_sequence(const KernelInit& init) {
  const int64_t axis = init.attrs().get_int("axis");
  const bool new_axis = init.attrs().get_int("new_axis", 0) != 0;
  return make_function_kernel(
      [axis, new_axis](KernelContext& ctx) { concat_elements(ctx, ctx.sequence_input(0).items(), axis, new_axis); });
}

}  // namespace pointrt::sequence
