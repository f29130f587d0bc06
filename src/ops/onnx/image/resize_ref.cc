// Naive Resize: every output element computed on its own, the way onnx/reference/ops/op_resize.py
// does it (recursive over axes, outermost axis last, neighbours found by sorting distances in an
// edge-padded input). Slow and obviously faithful: the oracle for the unit tests.
#include <algorithm>
#include <cmath>

#include "ops/onnx/image/image_util.h"
#include "ops/onnx/image/resize.h"

namespace pointrt::image {

namespace {

struct AxisSample {
  bool extrapolate = false;
  std::vector<int64_t> index;  // unclamped, may lie outside [0, len)
  std::vector<double> coeff;
};

// The reference's _get_neighbor: the n indices of the edge-padded array nearest to x (ties to
// the smaller index), returned in the unpadded coordinate system, ascending.
std::vector<int64_t> nearest_indices(double x, int64_t n, int64_t len) {
  const int64_t pad = (n + 1) / 2;
  const double xp = x + static_cast<double>(pad);  // position in the padded array
  std::vector<int64_t> all;
  for (int64_t j = 0; j < len + 2 * pad; ++j) all.push_back(j);
  std::stable_sort(all.begin(), all.end(), [&](int64_t a, int64_t b) {
    double da = std::fabs(xp - static_cast<double>(a)), db = std::fabs(xp - static_cast<double>(b));
    return da < db || (da == db && a < b);
  });
  all.resize(static_cast<size_t>(n));
  std::sort(all.begin(), all.end());
  for (int64_t& j : all) j -= pad;
  return all;
}

AxisSample sample_axis(const ResizeAttrs& a, const ResizeGeometry& g, size_t axis, int64_t x) {
  AxisSample s;
  const int64_t len = g.in[axis];
  double x_ori;
  if (!resize_source_coordinate(a, x, g.scales[axis], len, g.out[axis], g.roi_start[axis], g.roi_end[axis], &x_ori)) {
    s.extrapolate = true;
    return s;
  }
  resize_coefficients(a, x_ori, g.scales[axis], s.coeff);
  s.index = nearest_indices(x_ori, static_cast<int64_t>(s.coeff.size()), len);
  if (a.exclude_outside) {
    double sum = 0;
    for (size_t i = 0; i < s.index.size(); ++i) {
      if (s.index[i] < 0 || s.index[i] >= len) s.coeff[i] = 0;
      sum += s.coeff[i];
    }
    for (double& c : s.coeff) c /= sum;
  }
  return s;
}

// Value at output coordinate, axes [axis, rank) still to interpolate, `base` = flat offset of
// the input element selected on the axes before.
double interpolate(const std::vector<AxisSample>& samples, const std::vector<double>& x, const Shape& in,
                   const std::vector<int64_t>& strides, size_t axis, int64_t base, double extrapolation) {
  if (axis == in.size()) return x[static_cast<size_t>(base)];
  const AxisSample& s = samples[axis];
  if (s.extrapolate) return extrapolation;
  double acc = 0;
  for (size_t i = 0; i < s.index.size(); ++i) {
    const int64_t idx = std::min(std::max(s.index[i], int64_t{0}), in[axis] - 1);
    acc += s.coeff[i] * interpolate(samples, x, in, strides, axis + 1, base + idx * strides[axis], extrapolation);
  }
  return acc;
}

}  // namespace

void resize_reference(const ResizeAttrs& a, const ResizeGeometry& g, const Tensor& x, Tensor& y,
                      const std::string& where) {
  if (y.shape() != g.out) fail(where, ": reference output has the wrong shape");
  const size_t rank = g.in.size();
  std::vector<double> xd = tensor_to_doubles(x, where, "X"), yd(static_cast<size_t>(y.numel()));
  std::vector<int64_t> strides(rank, 1);
  for (size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * g.in[d];
  std::vector<int64_t> coord(rank, 0);
  std::vector<AxisSample> samples(rank);
  for (int64_t flat = 0; flat < y.numel(); ++flat) {
    int64_t rem = flat;
    for (size_t d = rank; d-- > 0;) {
      coord[d] = rem % g.out[d];
      rem /= g.out[d];
    }
    for (size_t d = 0; d < rank; ++d) samples[d] = sample_axis(a, g, d, coord[d]);
    yd[static_cast<size_t>(flat)] = interpolate(samples, xd, g.in, strides, 0, 0, a.extrapolation_value);
  }
  switch (y.dtype()) {
    case DType::kFloat32:
      for (size_t i = 0; i < yd.size(); ++i) y.data_as<float>()[i] = static_cast<float>(yd[i]);
      break;
    case DType::kFloat64: std::copy(yd.begin(), yd.end(), y.data_as<double>()); break;
    case DType::kFloat16:
      for (size_t i = 0; i < yd.size(); ++i) y.data_as<uint16_t>()[i] = float_to_half(static_cast<float>(yd[i]));
      break;
    default: doubles_to_tensor_truncating(yd, y);
  }
}

}  // namespace pointrt::image
