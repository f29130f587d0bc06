#include "ops/onnx/image/affine_grid.h"

#include "ops/onnx/tensor/tensor_utils.h"
#include "ops/staging.h"

namespace pointrt::image {

void affine_grid_ref(const Tensor& theta, const Shape& spatial, bool align_corners, Tensor& y) {
  const int64_t N = theta.dim(0), dims = static_cast<int64_t>(spatial.size()), points = shape_numel(spatial);
  auto base = [&](int64_t i, int64_t n) {
    if (align_corners) return n == 1 ? 0.0 : -1.0 + 2.0 * i / (n - 1);
    return (2.0 * i + 1) / n - 1;
  };
  dispatch_float(theta.dtype(), "AffineGrid", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t n = 0; n < N; ++n) {
      const T* th = theta.data_as<T>() + n * dims * (dims + 1);
      std::vector<int64_t> idx(spatial.size(), 0);
      for (int64_t p = 0; p < points; ++p, tensor::next_index(idx, spatial)) {
        double coord[4] = {0, 0, 0, 1};  // (x, y, z, 1): x runs along the last spatial dim
        for (int64_t k = 0; k < dims; ++k) coord[k] = base(idx[dims - 1 - k], spatial[dims - 1 - k]);
        coord[dims] = 1;
        for (int64_t r = 0; r < dims; ++r) {
          double v = 0;
          for (int64_t c = 0; c <= dims; ++c) v += th[r * (dims + 1) + c] * coord[c];
          y.data_as<T>()[(n * points + p) * dims + r] = static_cast<T>(v);
        }
      }
    }
  });
}

std::unique_ptr<OpKernel> make_affine_grid_kernel(const KernelInit& init) {
  const bool align = init.attrs().get_int("align_corners", 0) != 0;
  return make_function_kernel([align](KernelContext& ctx) {
    const Tensor theta = to_float32(ctx.input(0));
    const std::vector<int64_t> size = tensor::read_int_list(ctx.input(1), ctx.where(), "input 1 (size)");
    if (size.size() != 4 && size.size() != 5)
      fail(ctx.where(), ": input 1 (size) must be [N, C, H, W] or [N, C, D, H, W], got ", shape_to_string(size));
    const int64_t dims = static_cast<int64_t>(size.size()) - 2;
    if (theta.shape() != Shape{size[0], dims, dims + 1})
      fail(ctx.where(), ": input 0 (theta) has shape ", shape_to_string(theta.shape()), ", expected [", size[0], ", ",
           dims, ", ", dims + 1, "]");
    const Shape spatial(size.begin() + 2, size.end());
    for (int64_t d : spatial)
      if (d < 0) fail(ctx.where(), ": input 1 (size) ", shape_to_string(size), " has a negative dimension");
    Shape out = {size[0]};
    out.insert(out.end(), spatial.begin(), spatial.end());
    out.push_back(dims);
    Tensor y = compute_tensor(ctx.input(0).dtype(), out);
    affine_grid_ref(theta, spatial, align, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::image
