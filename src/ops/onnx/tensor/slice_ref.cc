// Naive Slice: input index = start + o * step on every dim.
#include "ops/onnx/tensor/slice.h"

namespace pointrt::tensor {

void slice_ref(const Tensor& x, const SlicePlan& p, Tensor& y) {
  const size_t es = dtype_size(x.dtype()), rank = x.rank();
  const Strides xs = contiguous_strides(x.shape());
  std::vector<int64_t> o(rank, 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += (p.start[d] + o[d] * p.step[d]) * xs[d];
    std::memcpy(static_cast<char*>(y.data()) + n * es, static_cast<const char*>(x.data()) + off * es, es);
    next_index(o, y.shape());
  }
}

}  // namespace pointrt::tensor
