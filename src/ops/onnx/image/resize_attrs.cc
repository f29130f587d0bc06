// Resize / Upsample attributes and output geometry (resize.h): modes, coordinate rules, and the
// output shape from scales or sizes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "ops/onnx/image/image_util.h"
#include "ops/onnx/image/resize.h"

namespace pointrt::image {

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

namespace {

// The axes the scales/sizes/roi entries refer to.
std::vector<int64_t> resize_axes(const ResizeAttrs& a, int64_t rank, const std::string& where) {
  std::vector<int64_t> axes;
  if (a.axes.empty()) {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  std::set<int64_t> seen;
  for (int64_t ax : a.axes) {
    int64_t n = normalize_axis(ax, rank, where + " attribute 'axes'");
    if (!seen.insert(n).second) fail(where, ": attribute 'axes' repeats axis ", ax);
    axes.push_back(n);
  }
  return axes;
}

void read_roi(const ResizeAttrs& a, const Tensor* roi, const std::vector<int64_t>& axes, ResizeGeometry& g,
              const std::string& where) {
  const size_t naxes = axes.size();
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
}

std::string expected_count(const ResizeAttrs& a, const Shape& in) {
  return a.axes.empty() ? "one per input axis, input is " + shape_to_string(in)
                        : std::string("one per entry of 'axes'");
}

// Output lengths floor(scale * in), as the reference's astype(int).
void apply_scales(const ResizeAttrs& a, const Tensor& scales, const std::vector<int64_t>& axes, ResizeGeometry& g,
                  const std::string& where) {
  const size_t naxes = axes.size();
  std::vector<double> s = tensor_to_doubles(scales, where, "scales");
  if (scales.rank() != 1 || s.size() != naxes)
    fail(where, ": input 'scales' has shape ", shape_to_string(scales.shape()), ", expected [", naxes, "] (",
         expected_count(a, g.in), ")");
  for (size_t i = 0; i < naxes; ++i) {
    if (!(s[i] > 0) || !std::isfinite(s[i]))
      fail(where, ": input 'scales' value ", s[i], " at index ", i, " must be a positive finite number");
    g.scales[axes[i]] = s[i];
    double o = s[i] * static_cast<double>(g.in[axes[i]]);
    if (o > 9.0e15) fail(where, ": input 'scales' value ", s[i], " makes axis ", axes[i], " too large");
    g.out[axes[i]] = static_cast<int64_t>(std::floor(o));
  }
}

// Output lengths from sizes, through one scale when keep_aspect_ratio_policy says so.
void apply_sizes(const ResizeAttrs& a, const Tensor& sizes, const std::vector<int64_t>& axes, ResizeGeometry& g,
                 const std::string& where) {
  const size_t naxes = axes.size();
  const Shape& in = g.in;
  if (sizes.dtype() != DType::kInt64)
    fail(where, ": input 'sizes' has element type ", dtype_name(sizes.dtype()), ", expected int64");
  if (sizes.rank() != 1 || static_cast<size_t>(sizes.numel()) != naxes)
    fail(where, ": input 'sizes' has shape ", shape_to_string(sizes.shape()), ", expected [", naxes, "] (",
         expected_count(a, in), ")");
  const int64_t* sz = sizes.data_as<int64_t>();
  for (size_t i = 0; i < naxes; ++i) {
    if (sz[i] < 0) fail(where, ": input 'sizes' value ", sz[i], " at index ", i, " is negative");
    if (in[axes[i]] == 0 && sz[i] != 0) fail(where, ": cannot resize axis ", axes[i], " of length 0 to length ", sz[i]);
    g.out[axes[i]] = sz[i];
    g.scales[axes[i]] = in[axes[i]] == 0 ? 1.0 : static_cast<double>(sz[i]) / static_cast<double>(in[axes[i]]);
  }
  if (a.policy == ResizeAttrs::AspectPolicy::kStretch) return;
  double scale = g.scales[axes[0]];
  for (int64_t ax : axes)
    scale = a.policy == ResizeAttrs::AspectPolicy::kNotLarger ? std::min(scale, g.scales[ax])
                                                              : std::max(scale, g.scales[ax]);
  for (int64_t ax : axes) {
    g.scales[ax] = scale;
    g.out[ax] = static_cast<int64_t>(scale * static_cast<double>(in[ax]) + 0.5);  // round half up
  }
}

}  // namespace

ResizeGeometry resolve_resize_geometry(const ResizeAttrs& a, const Shape& in, const Tensor* roi, const Tensor* scales,
                                       const Tensor* sizes, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size());
  auto present = [](const Tensor* t) { return t != nullptr && t->defined() && t->numel() > 0; };
  if (present(scales) && present(sizes))
    fail(where, ": both 'scales' (", shape_to_string(scales->shape()), ") and 'sizes' (",
         shape_to_string(sizes->shape()), ") are given; exactly one must be non-empty");
  if (!present(scales) && !present(sizes))
    fail(where, ": neither 'scales' nor 'sizes' is given; exactly one is required");
  const std::vector<int64_t> axes = resize_axes(a, rank, where);

  ResizeGeometry g;
  g.in = in;
  g.out = in;
  g.scales.assign(rank, 1.0);
  g.roi_start.assign(rank, 0.0);
  g.roi_end.assign(rank, 1.0);
  read_roi(a, roi, axes, g, where);
  if (present(scales))
    apply_scales(a, *scales, axes, g, where);
  else
    apply_sizes(a, *sizes, axes, g, where);
  for (int64_t d = 0; d < rank; ++d)
    if (in[d] == 0 && g.out[d] != 0) fail(where, ": cannot resize axis ", d, " of length 0 to length ", g.out[d]);
  return g;
}

}  // namespace pointrt::image
