// Naive Pad: map every output coordinate through pad_map on every dim.
#include "ops/onnx/tensor/pad.h"

namespace pointrt::tensor {

void pad_ref(const Tensor& x, const PadPlan& p, const void* value, Tensor& y) {
  const size_t es = dtype_size(x.dtype()), rank = x.rank();
  const Strides xs = contiguous_strides(x.shape());
  std::vector<int64_t> o(rank, 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    int64_t off = 0;
    bool inside = true;
    for (size_t d = 0; d < rank && inside; ++d) {
      int64_t c = pad_map(o[d], p.before[d], p.kept[d], p.mode);
      if (c < 0)
        inside = false;
      else
        off += (c + p.crop[d]) * xs[d];
    }
    const void* src = inside ? static_cast<const char*>(x.data()) + off * es : value;
    std::memcpy(static_cast<char*>(y.data()) + n * es, src, es);
    next_index(o, y.shape());
  }
}

}  // namespace pointrt::tensor
