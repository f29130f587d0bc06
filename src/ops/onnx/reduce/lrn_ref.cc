#include "ops/onnx/reduce/lrn.h"

#include <cmath>

#include "ops/staging.h"

namespace pointrt::reduce {

void lrn_ref(const Tensor& x, int64_t N, int64_t C, int64_t S, const LrnParams& p, Tensor& y) {
  const int64_t below = (p.size - 1) / 2, above = p.size - 1 - below;
  dispatch_float(x.dtype(), "LRN", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    T* out = y.data_as<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t s = 0; s < S; ++s) {
          double sq = 0;
          for (int64_t i = std::max<int64_t>(0, c - below); i <= std::min(C - 1, c + above); ++i) {
            const double v = in[(n * C + i) * S + s];
            sq += v * v;
          }
          const int64_t at = (n * C + c) * S + s;
          out[at] = static_cast<T>(in[at] / std::pow(double(p.bias) + double(p.alpha) / p.size * sq, double(p.beta)));
        }
  });
}

std::unique_ptr<OpKernel> make_lrn_kernel(const KernelInit& init) {
  LrnParams p;
  p.size = init.attrs().get_int("size");
  p.alpha = init.attrs().get_float("alpha", p.alpha);
  p.beta = init.attrs().get_float("beta", p.beta);
  p.bias = init.attrs().get_float("bias", p.bias);
  if (p.size < 1) fail(init.where(), ": attribute 'size' must be >= 1, got ", p.size);
  return make_function_kernel([p](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    if (x.rank() < 2) fail(ctx.where(), ": input 0 must be [N, C, ...], got shape ", shape_to_string(x.shape()));
    const int64_t N = x.dim(0), C = x.dim(1), S = N * C != 0 ? x.numel() / (N * C) : 0;
    Tensor y = compute_tensor(ctx.input(0).dtype(), x.shape());
    lrn_ref(x, N, C, S, p, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::reduce
