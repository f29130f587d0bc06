#include "ops/onnx/tensor/center_crop_pad.h"

namespace pointrt::tensor {

void center_crop_pad_ref(const Tensor& x, const std::vector<int64_t>& offset, Tensor& y) {
  const size_t es = dtype_size(x.dtype()), rank = x.rank();
  const Strides xs = contiguous_strides(x.shape());
  std::vector<int64_t> o(rank, 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    int64_t src = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      const int64_t i = o[d] + offset[d];
      inside = inside && i >= 0 && i < x.dim(d);
      src += i * xs[d];
    }
    char* dst = static_cast<char*>(y.data()) + n * es;
    if (inside)
      std::memcpy(dst, static_cast<const char*>(x.data()) + src * es, es);
    else
      std::memset(dst, 0, es);
    next_index(o, y.shape());
  }
}

}  // namespace pointrt::tensor
