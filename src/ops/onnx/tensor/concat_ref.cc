// Naive Concat: walk the output, find the input that owns the axis coordinate.
#include "ops/onnx/tensor/concat.h"

namespace pointrt::tensor {

void concat_ref(const std::vector<const Tensor*>& inputs, int64_t axis, Tensor& y) {
  const size_t es = dtype_size(y.dtype());
  std::vector<int64_t> o(y.rank(), 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    int64_t a = o[axis];
    size_t k = 0;
    while (a >= inputs[k]->dim(axis)) a -= inputs[k++]->dim(axis);
    std::vector<int64_t> i = o;
    i[axis] = a;
    const Strides xs = contiguous_strides(inputs[k]->shape());
    int64_t off = 0;
    for (size_t d = 0; d < i.size(); ++d) off += i[d] * xs[d];
    std::memcpy(static_cast<char*>(y.data()) + n * es, static_cast<const char*>(inputs[k]->data()) + off * es, es);
    next_index(o, y.shape());
  }
}

}  // namespace pointrt::tensor
