// Naive DepthToSpace / SpaceToDepth: the index formulas of depth_space.h, one element at a time.
#include "ops/onnx/tensor/depth_space.h"

namespace pointrt::tensor {

void depth_space_ref(const Tensor& x, int64_t b, DepthSpaceMode mode, Tensor& y) {
  const int64_t C = x.dim(1), H = x.dim(2), W = x.dim(3);
  const int64_t oc = y.dim(1), oh = y.dim(2), ow = y.dim(3);
  const size_t es = dtype_size(x.dtype());
  for (int64_t e = 0; e < y.numel(); ++e) {
    const int64_t w = e % ow, h = (e / ow) % oh, c = (e / (ow * oh)) % oc, n = e / (ow * oh * oc);
    int64_t ic, ih, iw;
    if (mode == DepthSpaceMode::kSpaceToDepth) {
      const int64_t cell = c / C;
      ic = c % C;
      ih = h * b + cell / b;
      iw = w * b + cell % b;
    } else {
      ic = mode == DepthSpaceMode::kDepthToSpaceDCR ? ((h % b) * b + w % b) * oc + c : c * b * b + (h % b) * b + w % b;
      ih = h / b;
      iw = w / b;
    }
    const int64_t src = ((n * C + ic) * H + ih) * W + iw;
    std::memcpy(static_cast<char*>(y.data()) + e * es, static_cast<const char*>(x.data()) + src * es, es);
  }
}

}  // namespace pointrt::tensor
