// Resize / Upsample: attribute parsing, geometry, per-axis tables and the optimised kernel.
#include "ops/onnx/image/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include "ops/onnx/image/image_util.h"

#ifdef _OPENMP
#include <omp.h>
#else
inline int omp_get_max_threads() { return 1; }
#endif

namespace pointrt {

namespace {

// `allow_bilinear`: Upsample-1's spelling, still written by old exporters for Upsample.
ResizeAttrs::Mode parse_mode(const std::string& s, bool allow_cubic, bool allow_bilinear, const std::string& where) {
  if (s == "nearest") return ResizeAttrs::Mode::kNearest;
  if (s == "linear" || (allow_bilinear && s == "bilinear")) return ResizeAttrs::Mode::kLinear;
  if (s == "cubic" && allow_cubic) return ResizeAttrs::Mode::kCubic;
  fail(where, ": attribute 'mode' is '", s, "', expected ",
       allow_cubic ? "'nearest', 'linear' or 'cubic'" : "'nearest' or 'linear'");
}

}  // namespace

ResizeAttrs parse_resize_attrs(const Attributes& attrs, int64_t opset, const std::string& where) {
  ResizeAttrs a;
  a.mode = parse_mode(attrs.get_string("mode", "nearest"), opset >= 11, false, where);
  if (opset < 11) {  // Resize-10: asymmetric coordinates, ONNX Runtime's nearest rule
    a.coord = ResizeAttrs::Coord::kAsymmetric;
    a.nearest = ResizeAttrs::Nearest::kSimple;
    return a;
  }
  const std::string coord = attrs.get_string("coordinate_transformation_mode", "half_pixel");
  if (coord == "half_pixel")
    a.coord = ResizeAttrs::Coord::kHalfPixel;
  else if (coord == "half_pixel_symmetric")
    a.coord = ResizeAttrs::Coord::kHalfPixelSymmetric;
  else if (coord == "pytorch_half_pixel")
    a.coord = ResizeAttrs::Coord::kPytorchHalfPixel;
  else if (coord == "align_corners")
    a.coord = ResizeAttrs::Coord::kAlignCorners;
  else if (coord == "asymmetric")
    a.coord = ResizeAttrs::Coord::kAsymmetric;
  else if (coord == "tf_half_pixel_for_nn")
    a.coord = ResizeAttrs::Coord::kTfHalfPixelForNN;
  else if (coord == "tf_crop_and_resize")
    a.coord = ResizeAttrs::Coord::kTfCropAndResize;
  else
    fail(where, ": attribute 'coordinate_transformation_mode' is '", coord,
         "', expected one of half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, "
         "asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize");
  const std::string nearest = attrs.get_string("nearest_mode", "round_prefer_floor");
  if (nearest == "round_prefer_floor")
    a.nearest = ResizeAttrs::Nearest::kRoundPreferFloor;
  else if (nearest == "round_prefer_ceil")
    a.nearest = ResizeAttrs::Nearest::kRoundPreferCeil;
  else if (nearest == "floor")
    a.nearest = ResizeAttrs::Nearest::kFloor;
  else if (nearest == "ceil")
    a.nearest = ResizeAttrs::Nearest::kCeil;
  else
    fail(where, ": attribute 'nearest_mode' is '", nearest,
         "', expected round_prefer_floor, round_prefer_ceil, floor or ceil");
  a.cubic_a = attrs.get_float("cubic_coeff_a", -0.75f);
  a.exclude_outside = attrs.get_int("exclude_outside", 0) != 0;
  a.extrapolation_value = attrs.get_float("extrapolation_value", 0.0f);
  if (opset >= 18) {
    a.antialias = attrs.get_int("antialias", 0) != 0;
    if (a.antialias && a.mode == ResizeAttrs::Mode::kNearest)
      fail(where, ": attribute 'antialias' = 1 is only defined for modes linear and cubic, got mode 'nearest'");
    a.axes = attrs.get_ints("axes", {});
    const std::string policy = attrs.get_string("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch")
      a.policy = ResizeAttrs::AspectPolicy::kStretch;
    else if (policy == "not_larger")
      a.policy = ResizeAttrs::AspectPolicy::kNotLarger;
    else if (policy == "not_smaller")
      a.policy = ResizeAttrs::AspectPolicy::kNotSmaller;
    else
      fail(where, ": attribute 'keep_aspect_ratio_policy' is '", policy,
           "', expected stretch, not_larger or not_smaller");
  }
  return a;
}

ResizeAttrs parse_upsample_attrs(const Attributes& attrs, const std::string& where) {
  ResizeAttrs a;
  a.mode = parse_mode(attrs.get_string("mode", "nearest"), false, true, where);
  a.coord = ResizeAttrs::Coord::kAsymmetric;
  a.nearest = ResizeAttrs::Nearest::kSimple;
  return a;
}

ResizeGeometry resolve_resize_geometry(const ResizeAttrs& a, const Shape& in, const Tensor* roi, const Tensor* scales,
                                       const Tensor* sizes, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size());
  auto present = [](const Tensor* t) { return t != nullptr && t->defined() && t->numel() > 0; };
  if (present(scales) && present(sizes))
    fail(where, ": both 'scales' (", shape_to_string(scales->shape()), ") and 'sizes' (",
         shape_to_string(sizes->shape()), ") are given; exactly one must be non-empty");
  if (!present(scales) && !present(sizes))
    fail(where, ": neither 'scales' nor 'sizes' is given; exactly one is required");

  // The axes the scales/sizes/roi entries refer to.
  std::vector<int64_t> axes;
  if (a.axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  } else {
    std::set<int64_t> seen;
    for (int64_t ax : a.axes) {
      int64_t n = normalize_axis(ax, rank, where + " attribute 'axes'");
      if (!seen.insert(n).second) fail(where, ": attribute 'axes' repeats axis ", ax);
      axes.push_back(n);
    }
  }
  const size_t naxes = axes.size();

  ResizeGeometry g;
  g.in = in;
  g.out = in;
  g.scales.assign(rank, 1.0);
  g.roi_start.assign(rank, 0.0);
  g.roi_end.assign(rank, 1.0);

  if (roi != nullptr && roi->defined() && roi->numel() > 0 && a.coord == ResizeAttrs::Coord::kTfCropAndResize) {
    std::vector<double> r = tensor_to_doubles(*roi, where, "roi");
    if (r.size() != 2 * naxes)
      fail(where, ": input 'roi' has ", r.size(), " values, expected ", 2 * naxes, " (2 x ",
           a.axes.empty() ? "rank" : "len(axes)", ")");
    for (size_t i = 0; i < naxes; ++i) {
      g.roi_start[axes[i]] = r[i];
      g.roi_end[axes[i]] = r[naxes + i];
    }
  } else if (a.coord == ResizeAttrs::Coord::kTfCropAndResize) {
    fail(where, ": coordinate_transformation_mode 'tf_crop_and_resize' needs a non-empty 'roi' input");
  }

  if (present(scales)) {
    std::vector<double> s = tensor_to_doubles(*scales, where, "scales");
    if (scales->rank() != 1 || s.size() != naxes)
      fail(where, ": input 'scales' has shape ", shape_to_string(scales->shape()), ", expected [", naxes, "] (",
           a.axes.empty() ? "one per input axis, input is " + shape_to_string(in)
                          : std::string("one per entry of 'axes'"),
           ")");
    for (size_t i = 0; i < naxes; ++i) {
      if (!(s[i] > 0) || !std::isfinite(s[i]))
        fail(where, ": input 'scales' value ", s[i], " at index ", i, " must be a positive finite number");
      g.scales[axes[i]] = s[i];
      // floor(scale * in), as the reference's astype(int)
      double o = s[i] * static_cast<double>(in[axes[i]]);
      if (o > 9.0e15) fail(where, ": input 'scales' value ", s[i], " makes axis ", axes[i], " too large");
      g.out[axes[i]] = static_cast<int64_t>(std::floor(o));
    }
  } else {
    if (sizes->dtype() != DType::kInt64)
      fail(where, ": input 'sizes' has element type ", dtype_name(sizes->dtype()), ", expected int64");
    if (sizes->rank() != 1 || static_cast<size_t>(sizes->numel()) != naxes)
      fail(where, ": input 'sizes' has shape ", shape_to_string(sizes->shape()), ", expected [", naxes, "] (",
           a.axes.empty() ? "one per input axis, input is " + shape_to_string(in)
                          : std::string("one per entry of 'axes'"),
           ")");
    const int64_t* sz = sizes->data_as<int64_t>();
    for (size_t i = 0; i < naxes; ++i) {
      if (sz[i] < 0) fail(where, ": input 'sizes' value ", sz[i], " at index ", i, " is negative");
      if (in[axes[i]] == 0 && sz[i] != 0)
        fail(where, ": cannot resize axis ", axes[i], " of length 0 to length ", sz[i]);
      g.out[axes[i]] = sz[i];
      g.scales[axes[i]] = in[axes[i]] == 0 ? 1.0 : static_cast<double>(sz[i]) / static_cast<double>(in[axes[i]]);
    }
    if (a.policy != ResizeAttrs::AspectPolicy::kStretch) {
      double scale = g.scales[axes[0]];
      for (int64_t ax : axes)
        scale = a.policy == ResizeAttrs::AspectPolicy::kNotLarger ? std::min(scale, g.scales[ax])
                                                                  : std::max(scale, g.scales[ax]);
      for (int64_t ax : axes) {
        g.scales[ax] = scale;
        g.out[ax] = static_cast<int64_t>(scale * static_cast<double>(in[ax]) + 0.5);  // round half up
      }
    }
  }
  for (int64_t d = 0; d < rank; ++d)
    if (in[d] == 0 && g.out[d] != 0) fail(where, ": cannot resize axis ", d, " of length 0 to length ", g.out[d]);
  return g;
}

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

namespace {

// One separable pass along one axis: src viewed as [outer, L, inner] -> dst [outer, O, inner].
template <typename T>
void resize_pass(const T* src, T* dst, int64_t outer, int64_t inner, const ResizeAxisTable& t, T extrapolation) {
  const int64_t L = t.in_len, O = t.out_len;
  std::vector<T> w(t.weight.begin(), t.weight.end());
  const int64_t* off = t.offsets.data();
  const int64_t* idx = t.src.data();
  const T* wt = w.data();
  const uint8_t* ex = t.extrapolate.data();
  const bool parallel = outer * O * inner > 16384;
  if (inner == 1) {
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
    for (int64_t r = 0; r < outer; ++r)
      for (int64_t o = 0; o < O; ++o) {
        const T* s = src + r * L;
        if (ex[o]) {
          dst[r * O + o] = extrapolation;
          continue;
        }
        T acc = 0;
        for (int64_t k = off[o]; k < off[o + 1]; ++k) acc += wt[k] * s[idx[k]];
        dst[r * O + o] = acc;
      }
    return;
  }
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t r = 0; r < outer; ++r)
    for (int64_t o = 0; o < O; ++o) {
      T* d = dst + (r * O + o) * inner;
      const T* s = src + r * L * inner;
      const int64_t k0 = off[o], k1 = off[o + 1];
      if (ex[o]) {
        std::fill(d, d + inner, extrapolation);
      } else if (k1 == k0) {
        std::fill(d, d + inner, T(0));
      } else if (k1 == k0 + 1 && wt[k0] == T(1)) {
        std::copy(s + idx[k0] * inner, s + idx[k0] * inner + inner, d);
      } else {
        const T* s0 = s + idx[k0] * inner;
        const T w0 = wt[k0];
        for (int64_t i = 0; i < inner; ++i) d[i] = w0 * s0[i];
        for (int64_t k = k0 + 1; k < k1; ++k) {
          const T* sk = s + idx[k] * inner;
          const T wk = wt[k];
          for (int64_t i = 0; i < inner; ++i) d[i] += wk * sk[i];
        }
      }
    }
}

// The common image case: both of the last two axes resized, many planes. Per plane (one
// OpenMP task each) the needed source rows are interpolated horizontally into a per-thread
// buffer (fixed-width tap tables, no CSR walk), then output rows are blended vertically.
// Same operation order as the separable passes (inner axis first).
template <typename T>
void resize_planes_2d(const T* x, T* y, int64_t planes, const ResizeAxisTable& ty, const ResizeAxisTable& tx,
                      T extrapolation) {
  const int64_t H = ty.in_len, W = tx.in_len, OH = ty.out_len, OW = tx.out_len;
  int64_t K = 1;
  for (int64_t o = 0; o < OW; ++o) K = std::max(K, tx.offsets[o + 1] - tx.offsets[o]);
  std::vector<int64_t> xi(static_cast<size_t>(OW * K), 0);
  std::vector<T> xw(static_cast<size_t>(OW * K), T(0));
  std::vector<int64_t> x_extrapolated;
  bool nearest_x = true;  // every output a single weight-1 tap
  for (int64_t o = 0; o < OW; ++o) {
    const int64_t k0 = tx.offsets[o], n = tx.offsets[o + 1] - k0;
    if (tx.extrapolate[o]) x_extrapolated.push_back(o);
    if (n != 1 || tx.weight[k0] != 1.0) nearest_x = false;
    for (int64_t k = 0; k < n; ++k) {
      xi[o * K + k] = tx.src[k0 + k];
      xw[o * K + k] = static_cast<T>(tx.weight[k0 + k]);
    }
  }
  std::vector<uint8_t> row_needed(static_cast<size_t>(H), 0);
  for (int64_t o = 0; o < OH; ++o)
    if (!ty.extrapolate[o])
      for (int64_t k = ty.offsets[o]; k < ty.offsets[o + 1]; ++k) row_needed[ty.src[k]] = 1;
  std::vector<T> yw(ty.weight.begin(), ty.weight.end());

#pragma omp parallel if (planes > 1 && planes * OH * OW > 16384)
  {
    std::unique_ptr<T[]> hbuf(new T[static_cast<size_t>(H * OW)]);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const T* src = x + p * H * W;
      T* dst = y + p * OH * OW;
      for (int64_t h = 0; h < H; ++h) {
        if (!row_needed[h]) continue;
        const T* s = src + h * W;
        T* d = hbuf.get() + h * OW;
        if (nearest_x) {
          for (int64_t o = 0; o < OW; ++o) d[o] = s[xi[o]];
        } else if (K == 2) {
          const int64_t* ii = xi.data();
          const T* ww = xw.data();
          for (int64_t o = 0; o < OW; ++o) d[o] = ww[2 * o] * s[ii[2 * o]] + ww[2 * o + 1] * s[ii[2 * o + 1]];
        } else {
          for (int64_t o = 0; o < OW; ++o) {
            T acc = xw[o * K] * s[xi[o * K]];
            for (int64_t k = 1; k < K; ++k) acc += xw[o * K + k] * s[xi[o * K + k]];
            d[o] = acc;
          }
        }
        for (int64_t o : x_extrapolated) d[o] = extrapolation;
      }
      for (int64_t oy = 0; oy < OH; ++oy) {
        T* d = dst + oy * OW;
        const int64_t k0 = ty.offsets[oy], k1 = ty.offsets[oy + 1];
        if (ty.extrapolate[oy]) {
          std::fill(d, d + OW, extrapolation);
        } else if (k1 == k0) {
          std::fill(d, d + OW, T(0));
        } else if (k1 == k0 + 1 && yw[k0] == T(1)) {
          std::memcpy(d, hbuf.get() + ty.src[k0] * OW, sizeof(T) * static_cast<size_t>(OW));
        } else {
          const T* r0 = hbuf.get() + ty.src[k0] * OW;
          const T w0 = yw[k0];
          if (k1 == k0 + 2) {  // linear: one fused blend
            const T* r1 = hbuf.get() + ty.src[k0 + 1] * OW;
            const T w1 = yw[k0 + 1];
            for (int64_t o = 0; o < OW; ++o) d[o] = w0 * r0[o] + w1 * r1[o];
          } else {
            for (int64_t o = 0; o < OW; ++o) d[o] = w0 * r0[o];
            for (int64_t k = k0 + 1; k < k1; ++k) {
              const T* rk = hbuf.get() + ty.src[k] * OW;
              const T wk = yw[k];
              for (int64_t o = 0; o < OW; ++o) d[o] += wk * rk[o];
            }
          }
        }
      }
    }
  }
}

template <typename T>
void resize_typed(const ResizeAttrs& a, const ResizePlan& plan, const T* x, T* y, ResizePath path) {
  const Shape& in = plan.geometry.in;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> active;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!plan.axes[d].identity) active.push_back(d);  // innermost first, as the reference
  if (active.empty()) {
    std::copy(x, x + shape_numel(in), y);
    return;
  }
  if (active.size() == 2 && active[0] == rank - 1 && active[1] == rank - 2) {
    const int64_t planes = rank > 2 ? shape_numel(Shape(in.begin(), in.end() - 2)) : 1;
    const ResizeAxisTable& ty = plan.axes[rank - 2];
    const ResizeAxisTable& tx = plan.axes[rank - 1];
    const bool fits = ty.in_len * tx.out_len * static_cast<int64_t>(sizeof(T)) <= (int64_t{8} << 20);
    if (path == ResizePath::kPlanes2D || (path == ResizePath::kAuto && fits && planes >= omp_get_max_threads())) {
      resize_planes_2d<T>(x, y, planes, ty, tx, static_cast<T>(a.extrapolation_value));
      return;
    }
  }
  Shape cur = in;
  std::unique_ptr<T[]> buf_a, buf_b;
  const T* src = x;
  for (size_t p = 0; p < active.size(); ++p) {
    const int64_t d = active[p];
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= cur[i];
    for (int64_t i = d + 1; i < rank; ++i) inner *= cur[i];
    cur[d] = plan.axes[d].out_len;
    T* dst;
    if (p + 1 == active.size()) {
      dst = y;
    } else {
      std::unique_ptr<T[]>& buf = (p % 2 == 0) ? buf_a : buf_b;
      buf.reset(new T[static_cast<size_t>(shape_numel(cur))]);  // no zero fill: every element is written
      dst = buf.get();
    }
    resize_pass<T>(src, dst, outer, inner, plan.axes[d], static_cast<T>(a.extrapolation_value));
    src = dst;
  }
}

}  // namespace

const std::vector<DType>& resize_types() {
  static const std::vector<DType> types = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt8,
                                           DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,
                                           DType::kUInt32,  DType::kInt64,   DType::kUInt64};
  return types;
}

void resize_run(const ResizeAttrs& a, const ResizePlan& plan, const Tensor& x, Tensor& y, const std::string& where,
                ResizePath path) {
  if (x.shape() != plan.geometry.in)
    fail(where, ": internal: plan for ", shape_to_string(plan.geometry.in), " used with ", shape_to_string(x.shape()));
  if (y.numel() == 0) return;
  switch (x.dtype()) {
    case DType::kFloat32: resize_typed<float>(a, plan, x.data_as<float>(), y.data_as<float>(), path); return;
    case DType::kFloat64: resize_typed<double>(a, plan, x.data_as<double>(), y.data_as<double>(), path); return;
    case DType::kFloat16: {
      std::vector<float> xf = to_float_vector(x), yf(static_cast<size_t>(y.numel()));
      resize_typed<float>(a, plan, xf.data(), yf.data(), path);
      uint16_t* yh = y.data_as<uint16_t>();
      for (size_t i = 0; i < yf.size(); ++i) yh[i] = float_to_half(yf[i]);
      return;
    }
    default: {
      if (!is_int_type(x.dtype()))
        fail(where, ": input 'X' has element type ", dtype_name(x.dtype()), ", which Resize does not support");
      std::vector<double> xd = tensor_to_doubles(x, where, "X"), yd(static_cast<size_t>(y.numel()));
      resize_typed<double>(a, plan, xd.data(), yd.data(), path);
      doubles_to_tensor_truncating(yd, y);
      return;
    }
  }
}

namespace {

bool all_fixed(const Value* v, Shape* shape) {
  if (v == nullptr || !v->has_shape) return false;
  shape->clear();
  for (const Dim& d : v->shape) {
    if (!d.is_fixed()) return false;
    shape->push_back(d.value);
  }
  return true;
}

class ResizeKernel : public OpKernel {
 public:
  // input indices of roi / scales / sizes (-1 = none); upsample_scales for Upsample-7
  ResizeKernel(const KernelInit& init, ResizeAttrs attrs, int roi, int scales, int sizes,
               std::optional<Tensor> attr_scales, const char* op)
      : attrs_(std::move(attrs)),
        roi_(roi),
        scales_(scales),
        sizes_(sizes),
        attr_scales_(std::move(attr_scales)),
        upsample_(std::string(op) == "Upsample") {
    // Precompute the plan once when the input shape and every geometry input are known now.
    Shape in;
    if (!all_fixed(init.input_value(0), &in)) return;
    auto constant_or_absent = [&](int i, const Tensor** t) {
      *t = nullptr;
      if (i < 0 || !init.has_input(i)) return true;
      *t = init.constant_input(i);
      return *t != nullptr;
    };
    const Tensor *r, *s, *z;
    if (!constant_or_absent(roi_, &r) || !constant_or_absent(scales_, &s) || !constant_or_absent(sizes_, &z)) return;
    if (attr_scales_) s = &*attr_scales_;
    plan_ = make_resize_plan(attrs_, geometry(in, r, s, z, init.where()));
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const auto& types = resize_types();
    if (std::find(types.begin(), types.end(), x.dtype()) == types.end())
      fail(ctx.where(), ": input 'X' has element type ", dtype_name(x.dtype()), ", which is not supported");
    std::optional<ResizePlan> local;
    const ResizePlan* plan = nullptr;
    if (plan_ && plan_->geometry.in == x.shape()) {
      plan = &*plan_;
    } else {
      auto get = [&](int i) -> const Tensor* { return i >= 0 && ctx.has_input(i) ? &ctx.input(i) : nullptr; };
      const Tensor* s = attr_scales_ ? &*attr_scales_ : get(scales_);
      local = make_resize_plan(attrs_, geometry(x.shape(), get(roi_), s, get(sizes_), ctx.where()));
      plan = &*local;
    }
    Tensor& y = ctx.output(0, x.dtype(), plan->geometry.out);
    resize_run(attrs_, *plan, x, y, ctx.where());
  }

 private:
  ResizeGeometry geometry(const Shape& in, const Tensor* roi, const Tensor* scales, const Tensor* sizes,
                          const std::string& where) const {
    if (upsample_) {
      if (scales == nullptr) fail(where, ": 'scales' is required");
      std::vector<double> s = tensor_to_doubles(*scales, where, "scales");
      if (s.size() != in.size())
        fail(where, ": 'scales' has ", s.size(), " values, expected ", in.size(), " (one per axis of input ",
             shape_to_string(in), ")");
      for (size_t i = 0; i < s.size(); ++i)
        if (!(s[i] >= 1) || !std::isfinite(s[i]))
          fail(where, ": 'scales' value ", s[i], " at index ", i, " must be >= 1 (Upsample only enlarges)");
    }
    return resolve_resize_geometry(attrs_, in, roi, scales, sizes, where);
  }

  ResizeAttrs attrs_;
  int roi_, scales_, sizes_;
  std::optional<Tensor> attr_scales_;
  bool upsample_;
  std::optional<ResizePlan> plan_;
};

}  // namespace

std::unique_ptr<OpKernel> make_resize_kernel(const KernelInit& init) {
  ResizeAttrs a = parse_resize_attrs(init.attrs(), init.opset(), init.where());
  if (init.opset() < 11) return std::make_unique<ResizeKernel>(init, a, -1, 1, -1, std::nullopt, "Resize");
  return std::make_unique<ResizeKernel>(init, a, 1, 2, 3, std::nullopt, "Resize");
}

std::unique_ptr<OpKernel> make_upsample_kernel(const KernelInit& init) {
  ResizeAttrs a = parse_upsample_attrs(init.attrs(), init.where());
  if (init.opset() < 9) {
    // Upsample-1: 4-D NCHW input, height_scale / width_scale attributes.
    std::vector<float> s = init.opset() < 7 ? std::vector<float>{1.f, 1.f, init.attrs().get_float("height_scale"),
                                                                 init.attrs().get_float("width_scale")}
                                            : init.attrs().get_floats("scales");
    Tensor t = Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(s.size())});
    std::copy(s.begin(), s.end(), t.data_as<float>());
    return std::make_unique<ResizeKernel>(init, a, -1, -1, -1, t, "Upsample");
  }
  return std::make_unique<ResizeKernel>(init, a, -1, 1, -1, std::nullopt, "Upsample");
}

}  // namespace pointrt
