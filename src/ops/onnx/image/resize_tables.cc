// Resize per-axis tables: for each output index, the source coordinate (coordinate transformation
// modes) and the window of input indices with their coefficients (nearest / linear / cubic,
// antialias, exclude_outside).
#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/onnx/image/resize.h"

namespace pointrt::image {

bool resize_source_coordinate(const ResizeAttrs& a, int64_t x_int, double scale, int64_t in_len, int64_t out_len,
                              double roi_start, double roi_end, double* x_original) {
  const double x = static_cast<double>(x_int);
  const double in_w = static_cast<double>(in_len);
  const double out_w = scale * in_w;  // fractional output width, as the reference
  double r = 0;
  switch (a.coord) {
    case ResizeAttrs::Coord::kAlignCorners: r = out_w == 1 ? 0.0 : x * (in_w - 1) / (out_w - 1); break;
    case ResizeAttrs::Coord::kAsymmetric: r = x / scale; break;
    case ResizeAttrs::Coord::kTfCropAndResize:
      r = out_w == 1 ? (roi_end - roi_start) * (in_w - 1) / 2 : x * (roi_end - roi_start) * (in_w - 1) / (out_w - 1);
      r += roi_start * (in_w - 1);
      if (r < 0 || r > in_w - 1) return false;
      break;
    case ResizeAttrs::Coord::kPytorchHalfPixel: r = out_w == 1 ? -0.5 : (x + 0.5) / scale - 0.5; break;
    case ResizeAttrs::Coord::kHalfPixel: r = (x + 0.5) / scale - 0.5; break;
    case ResizeAttrs::Coord::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(out_len) / out_w;
      const double center = in_w / 2;
      const double offset = center * (1 - adjustment);
      r = offset + (x + 0.5) / scale - 0.5;
      break;
    }
    case ResizeAttrs::Coord::kTfHalfPixelForNN: r = (x + 0.5) / scale; break;
  }
  // Keep the integer conversions below defined for absurd scales; the window clamps anyway.
  if (std::isnan(r)) r = 0;
  *x_original = std::min(std::max(r, -1e15), 1e15);
  return true;
}

void resize_coefficients(const ResizeAttrs& a, double x_ori, double scale, std::vector<double>& c) {
  const double fl = std::floor(x_ori);
  const double ratio = fl == x_ori ? 1.0 : x_ori - fl;  // in (0, 1]
  const double A = a.cubic_a;
  switch (a.mode) {
    case ResizeAttrs::Mode::kNearest: {
      bool lower = false;  // pick the lower window index?
      if (ratio != 1.0) {
        switch (a.nearest) {
          case ResizeAttrs::Nearest::kRoundPreferFloor: lower = ratio <= 0.5; break;
          case ResizeAttrs::Nearest::kRoundPreferCeil: lower = ratio < 0.5; break;
          case ResizeAttrs::Nearest::kFloor: lower = true; break;
          case ResizeAttrs::Nearest::kCeil: lower = false; break;
          case ResizeAttrs::Nearest::kSimple: lower = !(scale < 1.0); break;
        }
      }
      c.assign({lower ? 1.0 : 0.0, lower ? 0.0 : 1.0});
      return;
    }
    case ResizeAttrs::Mode::kLinear: {
      if (!a.antialias) {
        c.assign({1 - ratio, ratio});
        return;
      }
      const double s = std::min(scale, 1.0);
      const int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
      const int64_t footprint = 2 - 2 * start;
      c.resize(footprint);
      double sum = 0;
      for (int64_t i = 0; i < footprint; ++i) {
        double arg = (static_cast<double>(start + i) - ratio) * s;
        c[i] = std::min(std::max(1 - std::fabs(arg), 0.0), 1.0);
        sum += c[i];
      }
      for (double& v : c) v /= sum;
      return;
    }
    case ResizeAttrs::Mode::kCubic: {
      if (!a.antialias) {
        const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
        c.assign({((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
                  ((A + 2) * q - (A + 3)) * q * q + 1, ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A});
        return;
      }
      const double s = std::min(scale, 1.0);
      const int64_t i_start = static_cast<int64_t>(std::floor(-2 / s) + 1);
      const int64_t i_end = 2 - i_start;
      c.resize(i_end - i_start);
      double sum = 0;
      for (int64_t i = i_start; i < i_end; ++i) {
        double x = std::fabs(s * (static_cast<double>(i) - ratio));
        double x2 = x * x, x3 = x * x2, v = 0;
        if (x <= 1)
          v = (A + 2) * x3 - (A + 3) * x2 + 1;
        else if (x < 2)
          v = A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
        c[i - i_start] = v;
        sum += v;
      }
      for (double& v : c) v /= sum;
      return;
    }
  }
}

int64_t resize_window_start(double x_original, int64_t start, int64_t n, int64_t in_len) {
  // Work in the padded coordinates the reference uses: distances |(x + pad) - j| in double, so
  // that a coordinate one ulp off an integer picks the same window as the reference.
  const int64_t pad = (n + 1) / 2;
  const double xp = x_original + static_cast<double>(pad);
  auto dist = [&](int64_t i) { return std::fabs(xp - static_cast<double>(i + pad)); };
  start = std::min(std::max(start, -pad), in_len + pad - n);
  // Shift while a neighbour outside the window ranks before the window's far end
  // (ordering by distance, then by lower index).
  while (start - 1 >= -pad && dist(start - 1) <= dist(start + n - 1)) --start;
  while (start + n < in_len + pad && dist(start + n) < dist(start)) ++start;
  return start;
}

ResizeAxisTable build_resize_axis_table(const ResizeAttrs& a, const ResizeGeometry& g, size_t axis) {
  ResizeAxisTable t;
  t.in_len = g.in[axis];
  t.out_len = g.out[axis];
  t.offsets.assign(1, 0);
  t.extrapolate.assign(t.out_len, 0);
  std::vector<double> c;
  bool identity = t.in_len == t.out_len;
  for (int64_t o = 0; o < t.out_len; ++o) {
    double x;
    if (!resize_source_coordinate(a, o, g.scales[axis], t.in_len, t.out_len, g.roi_start[axis], g.roi_end[axis], &x)) {
      t.extrapolate[o] = 1;
      identity = false;
      t.offsets.push_back(static_cast<int64_t>(t.src.size()));
      continue;
    }
    resize_coefficients(a, x, g.scales[axis], c);
    const int64_t n = static_cast<int64_t>(c.size());
    const double fl = std::floor(x);
    const int64_t k = static_cast<int64_t>(fl == x ? fl - 1 : fl);  // x - ratio
    const int64_t start = resize_window_start(x, k + 1 - n / 2, n, t.in_len);
    if (a.exclude_outside) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        int64_t idx = start + i;
        if (idx < 0 || idx >= t.in_len) c[i] = 0;
        sum += c[i];
      }
      for (double& v : c) v /= sum;
    }
    const size_t first = t.src.size();
    for (int64_t i = 0; i < n; ++i) {
      if (c[i] == 0) continue;
      t.src.push_back(std::min(std::max(start + i, int64_t{0}), t.in_len - 1));
      t.weight.push_back(c[i]);
    }
    if (!(t.src.size() == first + 1 && t.src[first] == o && t.weight[first] == 1.0)) identity = false;
    t.offsets.push_back(static_cast<int64_t>(t.src.size()));
  }
  t.identity = identity;
  return t;
}

ResizePlan make_resize_plan(const ResizeAttrs& a, ResizeGeometry g) {
  ResizePlan p;
  p.geometry = std::move(g);
  for (size_t d = 0; d < p.geometry.in.size(); ++d) p.axes.push_back(build_resize_axis_table(a, p.geometry, d));
  return p;
}

}  // namespace pointrt::image
