#include "ops/version_adapter.h"

namespace pointrt {
namespace {

class AdaptedKernel : public OpKernel {
 public:
  AdaptedKernel(std::unique_ptr<OpKernel> inner, InputAdapter adapt)
      : inner_(std::move(inner)), adapt_(std::move(adapt)) {}
  void run(KernelContext& ctx) const override {
    const std::vector<Tensor> inputs = adapt_(ctx);
    std::vector<const Tensor*> ptrs;
    for (const Tensor& t : inputs) ptrs.push_back(t.defined() ? &t : nullptr);
    KernelContext inner_ctx = ctx.with_inputs(std::move(ptrs));
    inner_->run(inner_ctx);
  }

 private:
  std::unique_ptr<OpKernel> inner_;
  InputAdapter adapt_;
};

}  // namespace

std::unique_ptr<OpKernel> make_adapted_kernel(std::unique_ptr<OpKernel> inner, InputAdapter adapt) {
  return std::make_unique<AdaptedKernel>(std::move(inner), std::move(adapt));
}

std::vector<Tensor> node_inputs(KernelContext& ctx) {
  std::vector<Tensor> r(ctx.num_inputs());
  for (size_t i = 0; i < r.size(); ++i)
    if (ctx.has_input(i)) r[i] = ctx.input(i);
  return r;
}

Tensor legacy_broadcast_view(const Tensor& a, const Tensor& b, bool broadcast, bool has_axis, int64_t axis,
                             const std::string& where) {
  if (!broadcast) {
    if (a.shape() != b.shape())
      fail(where, ": input 1 has shape ", shape_to_string(b.shape()), " but input 0 has ", shape_to_string(a.shape()),
           "; before opset 7 they must be equal unless broadcast = 1");
    return b;
  }
  const int64_t ra = static_cast<int64_t>(a.rank()), rb = static_cast<int64_t>(b.rank());
  if (b.numel() == 1 && rb <= 1) return b.reshaped({});  // a scalar broadcasts anywhere
  if (rb > ra)
    fail(where, ": input 1 of shape ", shape_to_string(b.shape()), " has a higher rank than input 0 of shape ",
         shape_to_string(a.shape()), " (broadcast = 1 broadcasts input 1 to input 0)");
  const int64_t start = has_axis ? (axis < 0 ? axis + ra : axis) : ra - rb;
  if (start < 0 || start + rb > ra)
    fail(where, ": axis ", axis, " does not place input 1 of shape ", shape_to_string(b.shape()),
         " inside input 0 of shape ", shape_to_string(a.shape()));
  Shape s = b.shape();
  for (int64_t d = 0; d < rb; ++d)
    if (s[d] != 1 && s[d] != a.dim(start + d))
      fail(where, ": input 1 of shape ", shape_to_string(b.shape()), " does not match input 0 of shape ",
           shape_to_string(a.shape()), " at axis ", start + d, " (broadcast = 1, axis = ", start, ")");
  s.resize(ra - start, 1);
  return b.reshaped(s);
}

KernelFactory legacy_broadcast_factory(KernelFactory inner) {
  return [inner](const KernelInit& init) {
    const bool broadcast = init.attrs().get_int("broadcast", 0) != 0;
    const bool has_axis = init.attrs().has("axis");
    const int64_t axis = init.attrs().get_int("axis", 0);
    return make_adapted_kernel(inner(init), [=](KernelContext& ctx) {
      std::vector<Tensor> in = node_inputs(ctx);
      if (in.size() != 2 || !in[0].defined() || !in[1].defined())
        fail(ctx.where(), ": needs two inputs, got ", ctx.num_inputs());
      in[1] = legacy_broadcast_view(in[0], in[1], broadcast, has_axis, axis, ctx.where());
      return in;
    });
  };
}

}  // namespace pointrt
