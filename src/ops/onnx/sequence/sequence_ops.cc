// SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase, SequenceAt, SequenceLength
// (contract in sequence.h).
#include "core/checked_size.h"
#include "graph/tensor_proto.h"
#include "ops/onnx/sequence/sequence.h"

namespace pointrt::sequence {

size_t sequence_position(const KernelContext& ctx, size_t i, size_t n, bool allow_end) {
  const Tensor& p = ctx.input(i);
  if (p.numel() != 1 || (p.dtype() != DType::kInt64 && p.dtype() != DType::kInt32))
    fail(ctx.where(), ": ", ctx.input_name(i), " (the position) must be one int32 or int64, got ",
         dtype_name(p.dtype()), " ", shape_to_string(p.shape()));
  const int64_t pos = p.dtype() == DType::kInt64 ? *p.data_as<int64_t>() : *p.data_as<int32_t>();
  const int64_t len = static_cast<int64_t>(n), hi = allow_end ? len : len - 1;
  if (pos < -len || pos > hi)
    fail(ctx.where(), ": a sequence position out of range: ", ctx.input_name(i), " is ", pos, " for a sequence of ", n,
         " (allowed [", -len, ", ", hi, "])");
  return static_cast<size_t>(pos < 0 ? pos + len : pos);
}

Tensor new_element(const KernelContext& ctx, DType dtype, const Shape& shape) {
  check_tensor_size(dtype, shape, ctx.run_context().allocator().max_tensor_bytes(),
                    str_cat(ctx.where(), ": a sequence element"));
  return ctx.run_context().allocator().allocate(dtype, shape);
}

namespace {

void check_elem_type(const KernelContext& ctx, const Sequence& seq, const Tensor& t, size_t input) {
  if (t.dtype() != seq.elem_type())
    fail(ctx.where(), ": ", ctx.input_name(input), " is ", dtype_name(t.dtype()), " but the sequence holds ",
         dtype_name(seq.elem_type()));
}

}  // namespace

std::unique_ptr<OpKernel> make_sequence_empty(const KernelInit& init) {
  const int64_t code = init.attrs().get_int("dtype", static_cast<int64_t>(DType::kFloat32));
  const DType dtype = dtype_from_onnx_code(static_cast<int>(code), init.where() + ": attribute 'dtype'");
  return make_function_kernel([dtype](KernelContext& ctx) { ctx.set_any_output(0, Sequence(dtype, {})); });
}

std::unique_ptr<OpKernel> make_sequence_construct(const KernelInit& init) {
  if (init.num_inputs() == 0) fail(init.where(), ": SequenceConstruct takes at least one tensor");
  return make_function_kernel([](KernelContext& ctx) {
    std::vector<Tensor> items;
    items.reserve(ctx.num_inputs());
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      items.push_back(ctx.input(i));
      if (items[i].dtype() != items[0].dtype())
        fail(ctx.where(), ": ", ctx.input_name(i), " is ", dtype_name(items[i].dtype()), " but ", ctx.input_name(0),
             " is ", dtype_name(items[0].dtype()), " (a sequence holds one element type)");
    }
    const DType t = items[0].dtype();
    ctx.set_any_output(0, Sequence(t, std::move(items)));
  });
}

std::unique_ptr<OpKernel> make_sequence_insert(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Sequence& seq = ctx.sequence_input(0);
    const Tensor& t = ctx.input(1);
    check_elem_type(ctx, seq, t, 1);
    const size_t at = ctx.has_input(2) ? sequence_position(ctx, 2, seq.size(), true) : seq.size();
    std::vector<Tensor> items = seq.items();
    items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), t);
    ctx.set_any_output(0, Sequence(seq.elem_type(), std::move(items)));
  });
}

std::unique_ptr<OpKernel> make_sequence_erase(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Sequence& seq = ctx.sequence_input(0);
    if (seq.empty()) fail(ctx.where(), ": a sequence position out of range: erasing from an empty sequence");
    const size_t at = ctx.has_input(1) ? sequence_position(ctx, 1, seq.size(), false) : seq.size() - 1;
    std::vector<Tensor> items = seq.items();
    items.erase(items.begin() + static_cast<std::ptrdiff_t>(at));
    ctx.set_any_output(0, Sequence(seq.elem_type(), std::move(items)));
  });
}

std::unique_ptr<OpKernel> make_sequence_at(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Sequence& seq = ctx.sequence_input(0);
    ctx.set_output(0, seq.at(sequence_position(ctx, 1, seq.size(), false)));
  });
}

std::unique_ptr<OpKernel> make_sequence_length(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Sequence& seq = ctx.sequence_input(0);
    *ctx.output(0, DType::kInt64, {}).data_as<int64_t>() = static_cast<int64_t>(seq.size());
  });
}

}  // namespace pointrt::sequence
