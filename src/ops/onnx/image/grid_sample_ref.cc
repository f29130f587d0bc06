// Naive GridSample: each output element by the reference's recursion (op_grid_sample.py):
// interpolate every row of the inner axes, then the outer axis over those rows. Slow on
// purpose; the oracle for the unit tests.
#include <cmath>
#include <vector>

#include "ops/onnx/image/grid_sample.h"
#include "ops/onnx/image/image_util.h"

namespace pointrt::image {

namespace {

struct View {
  const double* data;
  std::vector<int64_t> dims;  // remaining spatial dims
};

// Pixel of a 1-D array by the padding rule (the reference's _pixel_at_array).
double pixel_1d(const GridSampleAttrs& a, const std::vector<double>& v, int64_t i) {
  int64_t idx;
  if (!grid_sample_tap_index(a, i, static_cast<int64_t>(v.size()), &idx)) return 0.0;
  return v[static_cast<size_t>(idx)];
}

int64_t to_index(double x, bool floor_it) {
  if (std::isnan(x)) return -(int64_t{1} << 40);
  x = std::min(std::max(x, -1e12), 1e12);
  return static_cast<int64_t>(floor_it ? std::floor(x) : std::trunc(x));
}

double interp_1d(const GridSampleAttrs& a, const std::vector<double>& v, double x) {
  const int64_t x0 = to_index(x, true);
  const double t = std::isnan(x) ? 0.0 : x - static_cast<double>(x0);
  if (a.mode == GridSampleAttrs::Mode::kLinear) return (1 - t) * pixel_1d(a, v, x0) + t * pixel_1d(a, v, x0 + 1);
  float c[4];
  grid_sample_cubic_coeffs(static_cast<float>(t), c);
  double acc = 0;
  for (int k = 0; k < 4; ++k) acc += c[k] * pixel_1d(a, v, x0 - 1 + k);
  return acc;
}

// Interpolate the sub-array at `data` with dims[d..] at coordinates x[d..].
double interp_nd(const GridSampleAttrs& a, const double* data, const std::vector<int64_t>& dims, size_t d,
                 const std::vector<double>& x) {
  int64_t inner = 1;
  for (size_t i = d + 1; i < dims.size(); ++i) inner *= dims[i];
  std::vector<double> rows(static_cast<size_t>(dims[d]));
  for (int64_t i = 0; i < dims[d]; ++i)
    rows[i] = d + 1 == dims.size() ? data[i] : interp_nd(a, data + i * inner, dims, d + 1, x);
  return interp_1d(a, rows, x[d]);
}

double nearest_nd(const GridSampleAttrs& a, const double* data, const std::vector<int64_t>& dims,
                  const std::vector<double>& x) {
  int64_t off = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    int64_t idx;
    if (!grid_sample_tap_index(a, to_index(x[d], false), dims[d], &idx)) return 0.0;
    off = off * dims[d] + idx;
  }
  return data[off];
}

}  // namespace

void grid_sample_reference(const GridSampleAttrs& a, const Tensor& x, const Tensor& grid, Tensor& y) {
  const Shape& xs = x.shape();
  const size_t r = xs.size() - 2;
  std::vector<double> xd = tensor_to_doubles(x, "GridSample reference", "X");
  std::vector<double> gd = tensor_to_doubles(grid, "GridSample reference", "grid");
  std::vector<int64_t> dims(xs.begin() + 2, xs.end());
  int64_t in_plane = 1, P = 1;
  for (int64_t v : dims) in_plane *= v;
  for (size_t i = 2; i < y.rank(); ++i) P *= y.dim(i);
  std::vector<double> out(static_cast<size_t>(y.numel()));
  std::vector<double> coord(r);
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t c = 0; c < xs[1]; ++c)
      for (int64_t p = 0; p < P; ++p) {
        for (size_t d = 0; d < r; ++d)
          coord[d] = grid_sample_source_coordinate(a, static_cast<float>(gd[(n * P + p) * r + (r - 1 - d)]), dims[d]);
        const double* plane = xd.data() + (n * xs[1] + c) * in_plane;
        out[(n * xs[1] + c) * P + p] = a.mode == GridSampleAttrs::Mode::kNearest ? nearest_nd(a, plane, dims, coord)
                                                                                 : interp_nd(a, plane, dims, 0, coord);
      }
  for (size_t i = 0; i < out.size(); ++i) {
    if (y.dtype() == DType::kFloat32)
      y.data_as<float>()[i] = static_cast<float>(out[i]);
    else if (y.dtype() == DType::kFloat64)
      y.data_as<double>()[i] = out[i];
    else
      y.data_as<uint16_t>()[i] = float_to_half(static_cast<float>(out[i]));
  }
}

}  // namespace pointrt::image
