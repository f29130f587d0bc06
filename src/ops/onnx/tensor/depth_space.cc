// DepthToSpace / SpaceToDepth as one strided copy of a 6-D view (the tiled engine of
// tensor_utils: merged dims, memcpy runs, 2D transpose tiles).
#include "ops/onnx/tensor/depth_space.h"

namespace pointrt::tensor {

Shape depth_space_shape(const Shape& x, int64_t b, DepthSpaceMode mode, const std::string& where) {
  if (x.size() != 4) fail(where, ": input must be 4-D [N, C, H, W], got ", shape_to_string(x));
  if (b <= 0) fail(where, ": attribute 'blocksize' must be positive, got ", b);
  if (mode == DepthSpaceMode::kSpaceToDepth) {
    if (x[2] % b || x[3] % b)
      fail(where, ": H and W of input ", shape_to_string(x), " must be divisible by blocksize ", b);
    return {x[0], x[1] * b * b, x[2] / b, x[3] / b};
  }
  if (x[1] % (b * b)) fail(where, ": C of input ", shape_to_string(x), " must be divisible by blocksize^2 = ", b * b);
  return {x[0], x[1] / (b * b), x[2] * b, x[3] * b};
}

void depth_space_cpu(const Tensor& x, int64_t b, DepthSpaceMode mode, Tensor& y) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  Shape out6;
  Strides src6;
  // Output as 6-D in its own row-major order; strides say where each index reads in x.
  if (mode == DepthSpaceMode::kSpaceToDepth) {
    // y[n, bh, bw, c, h, w] = x[n, c, h*b + bh, w*b + bw]
    out6 = {N, b, b, C, H / b, W / b};
    src6 = {C * H * W, W, 1, H * W, b * W, b};
  } else if (mode == DepthSpaceMode::kDepthToSpaceDCR) {
    // y[n, c, h, bh, w, bw] = x[n, (bh*b + bw)*C' + c, h, w]
    const int64_t c2 = C / (b * b);
    out6 = {N, c2, H, b, W, b};
    src6 = {C * H * W, H * W, W, b * c2 * H * W, 1, c2 * H * W};
  } else {
    // y[n, c, h, bh, w, bw] = x[n, c*b*b + bh*b + bw, h, w]
    const int64_t c2 = C / (b * b);
    out6 = {N, c2, H, b, W, b};
    src6 = {C * H * W, b * b * H * W, W, b * H * W, 1, H * W};
  }
  strided_copy(x.data(), 0, out6, src6, y.data(), dtype_size(x.dtype()));
}

}  // namespace pointrt::tensor
