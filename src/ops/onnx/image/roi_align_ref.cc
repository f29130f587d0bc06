// Naive RoiAlign: every output element recomputes its samples from the formulas in roi_align.h.
#include "ops/onnx/image/roi_align.h"

namespace pointrt::image {

void roi_align_ref(const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch, const RoiAlignParams& p,
                   Tensor& y) {
  using namespace detail;
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), R = rois.dim(0);
  dispatch_float(x.dtype(), "RoiAlign", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t r = 0; r < R; ++r) {
      double roi[4];
      for (int k = 0; k < 4; ++k) roi[k] = rois.data_as<T>()[r * 4 + k];
      const RoiFrame f = roi_frame(roi, p);
      for (int64_t c = 0; c < C; ++c) {
        const T* plane = x.data_as<T>() + (batch[r] * C + c) * H * W;
        for (int64_t ph = 0; ph < p.out_h; ++ph)
          for (int64_t pw = 0; pw < p.out_w; ++pw) {
            double acc = 0;
            bool first = true;
            for (int64_t iy = 0; iy < f.grid_h; ++iy)
              for (int64_t ix = 0; ix < f.grid_w; ++ix) {
                const double sy = f.start_h + ph * f.bin_h + (iy + 0.5) * f.bin_h / f.grid_h;
                const double sx = f.start_w + pw * f.bin_w + (ix + 0.5) * f.bin_w / f.grid_w;
                const Sample s = bilinear_sample(sy, sx, H, W);
                if (!p.max_mode) {
                  for (int k = 0; k < 4; ++k) acc += s.w[k] * plane[s.pos[k]];
                  continue;
                }
                double v = s.w[0] * plane[s.pos[0]];
                for (int k = 1; k < 4; ++k) v = std::max(v, s.w[k] * plane[s.pos[k]]);
                acc = first ? v : std::max(acc, v);
                first = false;
              }
            y.data_as<T>()[((r * C + c) * p.out_h + ph) * p.out_w + pw] =
                static_cast<T>(p.max_mode ? acc : acc / f.count);
          }
      }
    }
  });
}

}  // namespace pointrt::image
