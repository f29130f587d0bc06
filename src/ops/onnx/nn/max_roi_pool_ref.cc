#include <algorithm>
#include <cmath>

#include "ops/onnx/nn/max_roi_pool.h"
#include "ops/staging.h"

namespace pointrt::nn {

void max_roi_pool_ref(const Tensor& x, const Tensor& rois, int64_t ph, int64_t pw, float scale, Tensor& y) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), R = rois.dim(0);
  dispatch_float(x.dtype(), "MaxRoiPool", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t r = 0; r < R; ++r) {
      const T* roi = rois.data_as<T>() + r * 5;
      const int64_t b = static_cast<int64_t>(roi[0]);
      if (!(roi[0] >= 0) || b >= N)
        fail("MaxRoiPool: rois[", r, "] names batch ", roi[0], ", outside [0, ", N - 1, "]");
      auto at = [&](int k) { return static_cast<int64_t>(std::round(roi[k] * scale)); };
      const int64_t x1 = at(1), y1 = at(2), x2 = at(3), y2 = at(4);
      const double bh = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / ph;
      const double bw = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / pw;
      for (int64_t c = 0; c < C; ++c) {
        const T* plane = x.data_as<T>() + (b * C + c) * H * W;
        for (int64_t i = 0; i < ph; ++i)
          for (int64_t j = 0; j < pw; ++j) {
            const int64_t hs = std::clamp<int64_t>(static_cast<int64_t>(std::floor(i * bh)) + y1, 0, H);
            const int64_t he = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((i + 1) * bh)) + y1, 0, H);
            const int64_t ws = std::clamp<int64_t>(static_cast<int64_t>(std::floor(j * bw)) + x1, 0, W);
            const int64_t we = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((j + 1) * bw)) + x1, 0, W);
            T best = 0;
            bool any = false;
            for (int64_t h = hs; h < he; ++h)
              for (int64_t w = ws; w < we; ++w)
                if (!any || plane[h * W + w] > best) {
                  best = plane[h * W + w];
                  any = true;
                }
            y.data_as<T>()[((r * C + c) * ph + i) * pw + j] = best;
          }
      }
    }
  });
}

std::unique_ptr<OpKernel> make_max_roi_pool_kernel(const KernelInit& init) {
  const std::vector<int64_t> pooled = init.attrs().get_ints("pooled_shape");
  const float scale = init.attrs().get_float("spatial_scale", 1.f);
  if (pooled.size() != 2 || pooled[0] < 1 || pooled[1] < 1)
    fail(init.where(), ": attribute 'pooled_shape' must be two positive sizes, got ", shape_to_string(pooled));
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0)), rois = to_float32(ctx.input(1));
    if (x.rank() != 4) fail(ctx.where(), ": input X must be [N, C, H, W], got ", shape_to_string(x.shape()));
    if (rois.rank() != 2 || rois.dim(1) != 5 || rois.dtype() != x.dtype())
      fail(ctx.where(), ": input rois must be [R, 5] of X's type, got ", dtype_name(ctx.input(1).dtype()), " ",
           shape_to_string(rois.shape()));
    Tensor y = compute_tensor(ctx.input(0).dtype(), {rois.dim(0), x.dim(1), pooled[0], pooled[1]});
    try {
      max_roi_pool_ref(x, rois, pooled[0], pooled[1], scale, y);
    } catch (const Error& e) {
      fail(ctx.where(), ": ", e.what());
    }
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::nn
