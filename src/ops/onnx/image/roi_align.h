// RoiAlign (ONNX 10, 16): X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2 in input coordinates
// before spatial_scale), batch_indices [R] (int64) -> Y [R, C, output_height, output_width].
// Per ROI, with offset = 0.5 for coordinate_transformation_mode half_pixel (opset 16's default)
// and 0 for output_half_pixel (opset 10's behaviour):
//   start = roi * spatial_scale - offset; size = end - start (output_half_pixel: at least 1);
//   bin = size / output; grid = sampling_ratio > 0 ? sampling_ratio : ceil(size / output) per axis;
//   sample (iy, ix) of bin (ph, pw) at start + ph * bin + (iy + 0.5) * bin / grid.
// Bilinear sampling as ONNX's reference: a point beyond [-1, H] x [-1, W] samples 0; otherwise
// clamped to >= 0, and at the last row/column the high neighbour is the low one.
// mode avg: mean of the samples (count = max(grid_h * grid_w, 1)); mode max: the maximum over
// samples of max(w1 v1, w2 v2, w3 v3, w4 v4) (the four weighted corners), as ONNX's reference
// and ONNX Runtime do. Geometry and sums in double.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/kernel.h"

namespace pointrt::image {

struct RoiAlignParams {
  bool max_mode = false;
  bool half_pixel = true;
  int64_t out_h = 1, out_w = 1, sampling_ratio = 0;
  float spatial_scale = 1.f;
};

/// x: float32/float64 [N, C, H, W]; rois: x's type [R, 4]; batch: R entries in [0, N); y [R, C, oh, ow].
void roi_align_ref(const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch, const RoiAlignParams& p,
                   Tensor& y);
/// Same results; sample positions and weights computed once per ROI and shared by its channels.
void roi_align_cpu(const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch, const RoiAlignParams& p,
                   Tensor& y);

std::unique_ptr<OpKernel> make_roi_align_kernel(const KernelInit& init);

namespace detail {
/// One ROI's frame: start and bin size per axis and the sampling grid.
struct RoiFrame {
  double start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w, count;
};
inline RoiFrame roi_frame(const double* roi, const RoiAlignParams& p) {
  const double off = p.half_pixel ? 0.5 : 0.0;
  RoiFrame f;
  f.start_w = roi[0] * p.spatial_scale - off;
  f.start_h = roi[1] * p.spatial_scale - off;
  double w = roi[2] * p.spatial_scale - off - f.start_w, h = roi[3] * p.spatial_scale - off - f.start_h;
  if (!p.half_pixel) {
    w = std::max(w, 1.0);
    h = std::max(h, 1.0);
  }
  f.bin_h = h / static_cast<double>(p.out_h);
  f.bin_w = w / static_cast<double>(p.out_w);
  f.grid_h = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(h / p.out_h));
  f.grid_w = p.sampling_ratio > 0 ? p.sampling_ratio : static_cast<int64_t>(std::ceil(w / p.out_w));
  f.count = std::max<int64_t>(f.grid_h * f.grid_w, 1);
  return f;
}
/// The four corners and weights of bilinear sample (y, x) in an H x W plane; all zero outside.
struct Sample {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};
inline Sample bilinear_sample(double y, double x, int64_t H, int64_t W) {
  Sample s;
  if (y < -1.0 || y > static_cast<double>(H) || x < -1.0 || x > static_cast<double>(W)) return s;
  y = std::max(y, 0.0);
  x = std::max(x, 0.0);
  int64_t yl = static_cast<int64_t>(y), xl = static_cast<int64_t>(x), yh, xh;
  if (yl >= H - 1) {
    yh = yl = H - 1;
    y = static_cast<double>(yl);
  } else {
    yh = yl + 1;
  }
  if (xl >= W - 1) {
    xh = xl = W - 1;
    x = static_cast<double>(xl);
  } else {
    xh = xl + 1;
  }
  const double ly = y - yl, lx = x - xl, hy = 1 - ly, hx = 1 - lx;
  s.pos[0] = yl * W + xl;
  s.pos[1] = yl * W + xh;
  s.pos[2] = yh * W + xl;
  s.pos[3] = yh * W + xh;
  s.w[0] = hy * hx;
  s.w[1] = hy * lx;
  s.w[2] = ly * hx;
  s.w[3] = ly * lx;
  return s;
}
}  // namespace detail

}  // namespace pointrt::image
