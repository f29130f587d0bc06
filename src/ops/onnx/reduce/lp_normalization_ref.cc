#include "ops/onnx/reduce/lp_normalization.h"

#include <cmath>

#include "ops/onnx/reduce/reduce_common.h"
#include "ops/staging.h"

namespace pointrt::reduce {

void lp_normalization_ref(const Tensor& x, int64_t outer, int64_t R, int64_t inner, int64_t p, Tensor& y) {
  dispatch_float(x.dtype(), "LpNormalization", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        double norm = 0;
        for (int64_t r = 0; r < R; ++r) {
          const double v = in[(o * R + r) * inner + i];
          norm += p == 1 ? std::fabs(v) : v * v;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int64_t r = 0; r < R; ++r) {
          const int64_t at = (o * R + r) * inner + i;
          y.data_as<T>()[at] = static_cast<T>(in[at] / norm);
        }
      }
  });
}

std::unique_ptr<OpKernel> make_lp_normalization_kernel(const KernelInit& init) {
  const int64_t axis = init.attrs().get_int("axis", -1), p = init.attrs().get_int("p", 2);
  if (p != 1 && p != 2) fail(init.where(), ": attribute 'p' must be 1 or 2, got ", p);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    const auto s = detail::split_at_axis(x.shape(), normalize_axis(axis, x.rank(), ctx.where()));
    Tensor y = compute_tensor(ctx.input(0).dtype(), x.shape());
    lp_normalization_ref(x, s.outer, s.axis_dim, s.inner, p, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::reduce
