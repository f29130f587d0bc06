// Resize (opsets 10, 11, 13, 18, 19) and Upsample (opsets 7, 9; deprecated since 10).
//
// The maths follows the ONNX reference implementation (onnx/reference/ops/op_resize.py,
// onnx 1.16.2) exactly, including its corner cases, because that is what produced the
// conformance data and what users compare against:
//  - Coordinates are computed in double. `output_width` in the formulas is the *fractional*
//    scale * input_length (not the integer output length), e.g. align_corners uses
//    x * (in - 1) / (scale * in - 1).
//  - pytorch_half_pixel with an output length of 1 maps to x_original = -0.5 (the reference),
//    not 0 (the spec text); they differ only for cubic.
//  - tf_crop_and_resize returns extrapolation_value when x_original < 0 or > in - 1.
//  - The neighbours of x_original are the n indices nearest to it (ties to the lower index),
//    searched in the input padded by ceil(n/2) edge-replicated cells on each side; that is a
//    window starting at ceil(x) - n/2, clamped into [-pad, in + pad - n]. Indices outside the
//    input read the edge value. The coefficients come from ratio = x - floor(x), with
//    ratio = 1 (not 0) when x is an integer.
//  - nearest: coefficients [1, 0] or [0, 1] over that window; round_prefer_floor picks the
//    lower index when ratio <= 0.5, round_prefer_ceil when ratio < 0.5, floor always, ceil never
//    (and an integer x always picks x itself).
//  - exclude_outside zeroes the coefficients of window indices outside [0, in) and renormalises.
//  - antialias (opset 18, linear/cubic only) widens the filter by 1/scale when downsampling and
//    normalises the coefficients.
//  - N-D interpolation is separable: axes are interpolated innermost first, like the reference's
//    recursion. With tf_crop_and_resize an out-of-range axis yields extrapolation_value.
//  - Output length from scales: floor(scale * in) (scale as given, in double). From sizes:
//    scale = out / in; with keep_aspect_ratio_policy not_larger/not_smaller one scale (min/max
//    over the resized axes) is used and out = floor(scale * in + 0.5).
//  - Opset 10 Resize and Upsample have no coordinate attributes: they use asymmetric
//    coordinates and, for nearest, ONNX Runtime's rule (floor when upsampling an axis, ceil when
//    downsampling it; an integer coordinate picks itself).
//  - Integer element types are computed in double and truncated toward zero (saturating) like
//    numpy's astype; float16 is computed in float32.
// The coordinate modes tf_half_pixel_for_nn (removed in 18) and half_pixel_symmetric (added in
// 19) are accepted at every opset >= 11: their meaning is unambiguous.
#pragma once

#include <string>
#include <vector>

#include "ops/kernel.h"

namespace pointrt::image {

struct ResizeAttrs {
  enum class Mode { kNearest, kLinear, kCubic };
  enum class Coord {
    kHalfPixel,
    kHalfPixelSymmetric,
    kPytorchHalfPixel,
    kAlignCorners,
    kAsymmetric,
    kTfHalfPixelForNN,
    kTfCropAndResize
  };
  enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
  enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double extrapolation_value = 0.0;
  std::vector<int64_t> axes;  // as given (may be negative); empty = every axis
  AspectPolicy policy = AspectPolicy::kStretch;
};

/// Parse Resize's attributes for `opset` (10 .. 21); errors name the node.
ResizeAttrs parse_resize_attrs(const Attributes& attrs, int64_t opset, const std::string& where);
/// Upsample (7, 9): mode nearest | linear, asymmetric coordinates.
ResizeAttrs parse_upsample_attrs(const Attributes& attrs, const std::string& where);

/// The resolved geometry of one Resize: per-axis scale and roi, input and output shapes.
struct ResizeGeometry {
  Shape in, out;
  std::vector<double> scales;     // one per axis of the input
  std::vector<double> roi_start;  // one per axis (tf_crop_and_resize), defaults 0
  std::vector<double> roi_end;    // defaults 1
};

/// From the optional inputs (nullptr or an empty tensor = absent). Checks: exactly one of
/// scales/sizes, their length (rank, or len(axes)), positive scales, non-negative sizes, roi
/// length, axes in range and unique.
ResizeGeometry resolve_resize_geometry(const ResizeAttrs& a, const Shape& in, const Tensor* roi, const Tensor* scales,
                                       const Tensor* sizes, const std::string& where);

/// x_original for output index `x` along one axis; returns false when tf_crop_and_resize
/// extrapolates there.
bool resize_source_coordinate(const ResizeAttrs& a, int64_t x, double scale, int64_t in_len, int64_t out_len,
                              double roi_start, double roi_end, double* x_original);
/// The filter coefficients for x_original (window of coeffs.size() indices, see above).
void resize_coefficients(const ResizeAttrs& a, double x_original, double scale, std::vector<double>& coeffs);

/// First index of the n-wide neighbour window of x_original (may be < 0 or run past in_len),
/// starting the search from `start`; reproduces the reference's sort by |x + pad - j| in double.
int64_t resize_window_start(double x_original, int64_t start, int64_t n, int64_t in_len);

/// One axis' 1-D interpolation as a sparse table (CSR): output o reads src[k] with weight[k]
/// for k in [offsets[o], offsets[o+1]). Zero weights are dropped; indices are clamped.
struct ResizeAxisTable {
  int64_t in_len = 0, out_len = 0;
  std::vector<int64_t> offsets, src;
  std::vector<double> weight;
  std::vector<uint8_t> extrapolate;  // per output index
  bool identity = false;             // out == in and every output copies its own index
};
ResizeAxisTable build_resize_axis_table(const ResizeAttrs& a, const ResizeGeometry& g, size_t axis);

/// Everything a run needs once the shapes are known (built at prepare when they are constant).
struct ResizePlan {
  ResizeGeometry geometry;
  std::vector<ResizeAxisTable> axes;  // one per input axis
};
ResizePlan make_resize_plan(const ResizeAttrs& a, ResizeGeometry g);

/// Which implementation resize_run uses (tests force each one; kAuto otherwise).
enum class ResizePath { kAuto, kSeparablePasses, kPlanes2D };

/// The optimised kernel: separable passes over the non-identity axes, OpenMP over rows; when
/// exactly the last two axes change and there are enough planes, a per-plane 2-D kernel.
/// `y` is allocated by the caller with plan.geometry.out and x's dtype.
void resize_run(const ResizeAttrs& a, const ResizePlan& plan, const Tensor& x, Tensor& y, const std::string& where,
                ResizePath path = ResizePath::kAuto);

/// The naive oracle: each output element straight from the reference's recursion, neighbours
/// found by sorting distances. Any dtype the kernel supports; computes in double.
void resize_reference(const ResizeAttrs& a, const ResizeGeometry& g, const Tensor& x, Tensor& y,
                      const std::string& where);

/// Element types Resize/Upsample rows declare.
const std::vector<DType>& resize_types();

std::unique_ptr<OpKernel> make_resize_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_upsample_kernel(const KernelInit& init);

}  // namespace pointrt::image
