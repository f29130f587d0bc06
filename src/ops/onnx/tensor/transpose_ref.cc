// Naive Transpose: walk the output, build the input multi-index from perm.
#include "ops/onnx/tensor/transpose.h"

namespace pointrt::tensor {

void transpose_ref(const Tensor& x, const std::vector<int64_t>& perm, Tensor& y) {
  const size_t es = dtype_size(x.dtype()), rank = perm.size();
  std::vector<int64_t> o(rank, 0), i(rank);
  const Strides xs = contiguous_strides(x.shape());
  for (int64_t n = 0; n < y.numel(); ++n) {
    for (size_t d = 0; d < rank; ++d) i[perm[d]] = o[d];
    int64_t off = 0;
    for (size_t d = 0; d < rank; ++d) off += i[d] * xs[d];
    std::memcpy(static_cast<char*>(y.data()) + n * es, static_cast<const char*>(x.data()) + off * es, es);
    next_index(o, y.shape());
  }
}

}  // namespace pointrt::tensor
