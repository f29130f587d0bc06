// Optional, OptionalHasElement, OptionalGetElement (contract in sequence.h).
#include "ops/onnx/sequence/sequence.h"

namespace pointrt::sequence {

std::unique_ptr<OpKernel> make_optional(const KernelInit& init) {
  if (!init.has_input(0) && !init.attrs().has("type"))
    fail(init.where(), ": an Optional without an input needs the attribute 'type'");
  return make_function_kernel(
      [](KernelContext& ctx) { ctx.set_any_output(0, ctx.has_input(0) ? ctx.any_input(0) : AnyValue::none()); });
}

std::unique_ptr<OpKernel> make_optional_has_element(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const AnyValue v = ctx.any_input(0);
    *ctx.output(0, DType::kBool, {}).data_as<bool>() = v.is_tensor() || v.is_sequence();
  });
}

std::unique_ptr<OpKernel> make_optional_get_element(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    AnyValue v = ctx.any_input(0);
    if (!v.is_tensor() && !v.is_sequence())
      fail(ctx.where(), ": ", ctx.input_name(0), " is an empty optional (OptionalGetElement needs a value)");
    ctx.set_any_output(0, std::move(v));
  });
}

}  // namespace pointrt::sequence
