// The PyTorch side of the custom-operator example: example::PointNorm as a C++ torch extension
// (built by torch.utils.cpp_extension, see export_point_norm.py). Same contract and arithmetic as
// point_norm_plugin.c: (sum over the last axis of |x|^p)^(1/p), accumulated in double; p = 2 as
// sqrt(sum x*x). CPU tensors, float32 or float64.
#include <torch/extension.h>

#include <cmath>

namespace {

template <typename T>
void point_norm_rows(const T* x, T* out, int64_t rows, int64_t channels, double p) {
  for (int64_t r = 0; r < rows; ++r) {
    double acc = 0.0;
    for (int64_t c = 0; c < channels; ++c) {
      double v = x[r * channels + c];
      acc += p == 2.0 ? v * v : std::pow(std::fabs(v), p);
    }
    out[r] = static_cast<T>(channels == 0 ? 0.0 : p == 2.0 ? std::sqrt(acc) : std::pow(acc, 1.0 / p));
  }
}

torch::Tensor point_norm(const torch::Tensor& points, double p, int64_t keepdims) {
  TORCH_CHECK(points.dim() >= 1, "example::PointNorm: input 'points' must have rank >= 1");
  TORCH_CHECK(points.scalar_type() == torch::kFloat32 || points.scalar_type() == torch::kFloat64,
              "example::PointNorm: input 'points' must be float32 or float64");
  TORCH_CHECK(p > 0 && std::isfinite(p), "example::PointNorm: attribute 'p' must be finite and > 0");
  // The plugin receives p as a float32 ONNX attribute: round it the same way.
  p = static_cast<float>(p);
  torch::Tensor x = points.contiguous().cpu();
  auto sizes = x.sizes().vec();
  int64_t channels = sizes.back();
  sizes.pop_back();
  int64_t rows = 1;
  for (int64_t s : sizes) rows *= s;
  if (keepdims) sizes.push_back(1);
  torch::Tensor out = torch::empty(sizes, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "point_norm", [&] {
    point_norm_rows(x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), rows, channels, p);
  });
  return out.to(points.device());
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("point_norm", &point_norm, "example::PointNorm (see point_norm_plugin.c)", pybind11::arg("points"),
        pybind11::arg("p") = 2.0, pybind11::arg("keepdims") = 0);
}
