// GridSample (opset 16: 4-D, modes bilinear|nearest|bicubic; opset 20: N-D, modes
// linear|nearest|cubic). Follows onnx/reference/ops/op_grid_sample.py (onnx 1.16.2):
//  - X [N, C, D1..Dr], grid [N, O1..Or, r] with grid[..., 0] the coordinate of the LAST spatial
//    axis (x), grid[..., 1] of the one before (y), ... Output [N, C, O1..Or].
//  - Normalised n in [-1, 1] maps to x = (n + 1) / 2 * (len - 1) with align_corners = 1 and
//    x = ((n + 1) * len - 1) / 2 otherwise. Coordinates are float32.
//  - nearest rounds half to even (rint) before the padding rule.
//  - Borders: [-0.5, len - 0.5] (align_corners = 0) or [0, len - 1] (align_corners = 1). A
//    coordinate outside them is clamped to [0, len - 1] (padding border) or reflected at the
//    borders until inside (padding reflection); with padding zeros it stays.
//  - linear uses taps floor(x), floor(x)+1 with weights 1-f, f; cubic taps floor(x)-1 ..
//    floor(x)+2 with Keys' coefficients, A = -0.75. Each tap index is then read by the padding
//    rule: zeros -> 0 outside [0, len), border -> clamped, reflection -> reflected index.
//  - Separable over the spatial axes (the reference recurses innermost first).
// Edge cases the reference leaves undefined are made defined here: NaN coordinates read as
// out of range; reflection over a 1-long axis with align_corners = 1 stays at index 0.
#pragma once

#include <cmath>
#include <memory>
#include <string>

#include "ops/kernel.h"

namespace pointrt::image {

struct GridSampleAttrs {
  enum class Mode { kNearest, kLinear, kCubic };
  enum class Padding { kZeros, kBorder, kReflection };
  Mode mode = Mode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

GridSampleAttrs parse_grid_sample_attrs(const Attributes& attrs, int64_t opset, const std::string& where);
/// Checks X and grid shapes (opset 16: 4-D only) and returns the output shape.
Shape grid_sample_output_shape(const Shape& x, const Shape& grid, int64_t opset, const std::string& where);

inline float grid_sample_denormalize(float n, int64_t len, bool align_corners) {
  const double nd = n, l = static_cast<double>(len);
  return static_cast<float>(align_corners ? (nd + 1) / 2.0 * (l - 1) : ((nd + 1) * l - 1) / 2.0);
}

/// Reflect x by the nearer border until it lies in [lo, hi] (the reference's _gs_reflect).
inline double grid_sample_reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (!(range > 0)) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const double n = std::trunc(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const double n = std::trunc(dx / range);
    const double r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

/// Keys' cubic coefficients for the fractional offset t in [0, 1), A = -0.75.
inline void grid_sample_cubic_coeffs(float t, float c[4]) {
  const float A = -0.75f;
  const float x = std::fabs(t);
  c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
  c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
  c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

/// The coordinate after rounding (nearest) and the out-of-border rule, for one axis.
float grid_sample_source_coordinate(const GridSampleAttrs& a, float normalized, int64_t len);
/// Read index for tap `i` by the padding rule; false when it reads zero (padding zeros).
bool grid_sample_tap_index(const GridSampleAttrs& a, int64_t i, int64_t len, int64_t* index);

void grid_sample_run(const GridSampleAttrs& a, const Tensor& x, const Tensor& grid, Tensor& y);
/// Naive oracle: the reference's recursion per output element, in double.
void grid_sample_reference(const GridSampleAttrs& a, const Tensor& x, const Tensor& grid, Tensor& y);

std::unique_ptr<OpKernel> make_grid_sample_kernel(const KernelInit& init);

}  // namespace pointrt::image
