// RoiAlign: per ROI, the samples' corner offsets and weights are computed once and reused by
// every channel; (ROI, channel) planes run in parallel.
#include "ops/onnx/image/roi_align.h"

#include "ops/staging.h"

namespace pointrt::image {
namespace {

template <typename T>
void roi_align_typed(const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch, const RoiAlignParams& p,
                     Tensor& y) {
  using namespace detail;
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3), R = rois.dim(0), bins = p.out_h * p.out_w;
  std::vector<RoiFrame> frames(static_cast<size_t>(R));
  std::vector<std::vector<Sample>> samples(static_cast<size_t>(R));
  for (int64_t r = 0; r < R; ++r) {
    double roi[4];
    for (int k = 0; k < 4; ++k) roi[k] = rois.data_as<T>()[r * 4 + k];
    const RoiFrame f = frames[r] = roi_frame(roi, p);
    auto& s = samples[r];
    s.reserve(static_cast<size_t>(bins * f.grid_h * f.grid_w));
    for (int64_t ph = 0; ph < p.out_h; ++ph)
      for (int64_t pw = 0; pw < p.out_w; ++pw)
        for (int64_t iy = 0; iy < f.grid_h; ++iy)
          for (int64_t ix = 0; ix < f.grid_w; ++ix)
            s.push_back(bilinear_sample(f.start_h + ph * f.bin_h + (iy + 0.5) * f.bin_h / f.grid_h,
                                        f.start_w + pw * f.bin_w + (ix + 0.5) * f.bin_w / f.grid_w, H, W));
  }
  const T* xd = x.data_as<T>();
  T* yd = y.data_as<T>();
#pragma omp parallel for collapse(2) schedule(dynamic, 4) if (R * C * bins > 4096)
  for (int64_t r = 0; r < R; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const T* plane = xd + (batch[r] * C + c) * H * W;
      const Sample* s = samples[r].data();
      const int64_t per_bin = frames[r].grid_h * frames[r].grid_w;
      for (int64_t b = 0; b < bins; ++b) {
        double acc = 0;
        for (int64_t i = 0; i < per_bin; ++i, ++s) {
          if (!p.max_mode) {
            acc += s->w[0] * plane[s->pos[0]] + s->w[1] * plane[s->pos[1]] + s->w[2] * plane[s->pos[2]] +
                   s->w[3] * plane[s->pos[3]];
            continue;
          }
          const double v = std::max(std::max(s->w[0] * plane[s->pos[0]], s->w[1] * plane[s->pos[1]]),
                                    std::max(s->w[2] * plane[s->pos[2]], s->w[3] * plane[s->pos[3]]));
          acc = i == 0 ? v : std::max(acc, v);
        }
        yd[(r * C + c) * bins + b] = static_cast<T>(p.max_mode ? acc : acc / frames[r].count);
      }
    }
}

}  // namespace

void roi_align_cpu(const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch, const RoiAlignParams& p,
                   Tensor& y) {
  dispatch_float(x.dtype(), "RoiAlign", [&](auto tag) { roi_align_typed<decltype(tag)>(x, rois, batch, p, y); });
}

std::unique_ptr<OpKernel> make_roi_align_kernel(const KernelInit& init) {
  RoiAlignParams p;
  const std::string mode = init.attrs().get_string("mode", "avg");
  if (mode != "avg" && mode != "max") fail(init.where(), ": attribute 'mode' is '", mode, "', expected avg or max");
  p.max_mode = mode == "max";
  const std::string ctm = init.attrs().get_string("coordinate_transformation_mode",
                                                  init.opset() >= 16 ? "half_pixel" : "output_half_pixel");
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    fail(init.where(), ": attribute 'coordinate_transformation_mode' is '", ctm,
         "', expected half_pixel or output_half_pixel");
  p.half_pixel = ctm == "half_pixel";
  p.out_h = init.attrs().get_int("output_height", 1);
  p.out_w = init.attrs().get_int("output_width", 1);
  p.sampling_ratio = init.attrs().get_int("sampling_ratio", 0);
  p.spatial_scale = init.attrs().get_float("spatial_scale", 1.f);
  if (p.out_h < 1 || p.out_w < 1 || p.sampling_ratio < 0)
    fail(init.where(), ": output_height/output_width must be >= 1 and sampling_ratio >= 0");
  return make_function_kernel([p](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0)), rois = to_float32(ctx.input(1));
    const Tensor& bi = ctx.input(2);
    if (x.rank() != 4) fail(ctx.where(), ": input X must be [N, C, H, W], got ", shape_to_string(x.shape()));
    if (rois.rank() != 2 || rois.dim(1) != 4)
      fail(ctx.where(), ": input rois must be [R, 4], got ", shape_to_string(rois.shape()));
    if (rois.dtype() != x.dtype())
      fail(ctx.where(), ": input rois is ", dtype_name(ctx.input(1).dtype()), " but X is ",
           dtype_name(ctx.input(0).dtype()));
    if (bi.rank() != 1 || bi.dim(0) != rois.dim(0))
      fail(ctx.where(), ": input batch_indices must be [", rois.dim(0), "], got ", shape_to_string(bi.shape()));
    if (bi.dtype() != DType::kInt64 && bi.dtype() != DType::kInt32)
      fail(ctx.where(), ": input batch_indices must be int64, got ", dtype_name(bi.dtype()));
    std::vector<int64_t> batch(static_cast<size_t>(bi.numel()));
    for (size_t r = 0; r < batch.size(); ++r) {
      batch[r] = bi.dtype() == DType::kInt64 ? bi.data_as<int64_t>()[r] : bi.data_as<int32_t>()[r];
      if (batch[r] < 0 || batch[r] >= x.dim(0))
        fail(ctx.where(), ": batch_indices holds ", batch[r], " at position ", r, ", outside [0, ", x.dim(0) - 1, "]");
    }
    if ((x.dim(2) == 0 || x.dim(3) == 0) && rois.dim(0) > 0 && x.dim(1) > 0)
      fail(ctx.where(), ": input X ", shape_to_string(x.shape()), " has an empty plane to sample from");
    Tensor y = compute_tensor(ctx.input(0).dtype(), {rois.dim(0), x.dim(1), p.out_h, p.out_w});
    roi_align_cpu(x, rois, batch, p, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::image
