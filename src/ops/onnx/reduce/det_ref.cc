#include "ops/onnx/reduce/det.h"

#include <cmath>
#include <utility>

#include "ops/staging.h"

namespace pointrt::reduce {

void det_ref(const Tensor& x, int64_t batch, int64_t M, Tensor& y) {
  dispatch_float(x.dtype(), "Det", [&](auto tag) {
    using T = decltype(tag);
    std::vector<double> a(static_cast<size_t>(M * M));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < M * M; ++i) a[i] = x.data_as<T>()[b * M * M + i];
      double det = 1;
      for (int64_t k = 0; k < M && det != 0; ++k) {
        int64_t pivot = k;
        for (int64_t r = k + 1; r < M; ++r)
          if (std::fabs(a[r * M + k]) > std::fabs(a[pivot * M + k])) pivot = r;
        if (a[pivot * M + k] == 0) {
          det = 0;
          break;
        }
        if (pivot != k) {
          for (int64_t c = 0; c < M; ++c) std::swap(a[k * M + c], a[pivot * M + c]);
          det = -det;
        }
        det *= a[k * M + k];
        for (int64_t r = k + 1; r < M; ++r) {
          const double f = a[r * M + k] / a[k * M + k];
          for (int64_t c = k; c < M; ++c) a[r * M + c] -= f * a[k * M + c];
        }
      }
      y.data_as<T>()[b] = static_cast<T>(det);
    }
  });
}

std::unique_ptr<OpKernel> make_det_kernel(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    const size_t r = x.rank();
    if (r < 2 || x.dim(r - 1) != x.dim(r - 2))
      fail(ctx.where(), ": input 0 must be [..., M, M], got shape ", shape_to_string(x.shape()));
    const int64_t M = x.dim(r - 1);
    const Shape out(x.shape().begin(), x.shape().end() - 2);
    Tensor y = compute_tensor(ctx.input(0).dtype(), out);
    det_ref(x, shape_numel(out), M, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::reduce
