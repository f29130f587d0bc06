#include "ops/onnx/tensor/reverse_sequence.h"

namespace pointrt::tensor {

void reverse_sequence_ref(const Tensor& x, const std::vector<int64_t>& lens, int64_t batch_axis, int64_t time_axis,
                          Tensor& y) {
  const Strides st = contiguous_strides(x.shape());
  const int64_t batch = x.dim(batch_axis), steps = x.dim(time_axis);
  const int64_t inner = x.numel() / std::max<int64_t>(batch * steps, 1);  // dims 2.. form one run
  const size_t run = static_cast<size_t>(inner) * dtype_size(x.dtype());
  const size_t es = dtype_size(x.dtype());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
      const int64_t dst = (b * st[batch_axis] + t * st[time_axis]) * static_cast<int64_t>(es);
      const int64_t src = (b * st[batch_axis] + from * st[time_axis]) * static_cast<int64_t>(es);
      if (run) std::memcpy(static_cast<char*>(y.data()) + dst, static_cast<const char*>(x.data()) + src, run);
    }
}

}  // namespace pointrt::tensor
