#include "ops/onnx/reduce/hardmax.h"

#include "ops/onnx/reduce/softmax.h"
#include "ops/staging.h"

namespace pointrt::reduce {

void hardmax_ref(const Tensor& x, int64_t outer, int64_t R, int64_t inner, Tensor& y) {
  dispatch_float(x.dtype(), "Hardmax", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    T* out = y.data_as<T>();
    std::fill(out, out + y.numel(), T(0));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t best = -1;
        for (int64_t r = 0; r < R; ++r) {
          const T v = in[(o * R + r) * inner + i];
          if (v == v && (best < 0 || v > in[(o * R + best) * inner + i])) best = r;
        }
        if (best >= 0) out[(o * R + best) * inner + i] = T(1);
      }
  });
}

std::unique_ptr<OpKernel> make_hardmax_kernel(const KernelInit& init, bool flatten_2d) {
  const int64_t axis = init.attrs().get_int("axis", flatten_2d ? 1 : -1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    const detail::AxisSplit v = softmax_view(x.shape(), axis, flatten_2d, ctx.where());
    Tensor y = compute_tensor(ctx.input(0).dtype(), x.shape());
    hardmax_ref(x, v.outer, v.axis_dim, v.inner, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::reduce
