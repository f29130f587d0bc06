#include "ops/onnx/tensor/slice.h"

#include <algorithm>

namespace pointrt::tensor {

SlicePlan slice_plan(const Shape& in, const std::vector<int64_t>& starts, const std::vector<int64_t>& ends,
                     const std::vector<int64_t>& axes_in, const std::vector<int64_t>& steps, const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (starts.size() != ends.size())
    fail(where, ": 'starts' has ", starts.size(), " values but 'ends' has ", ends.size());
  std::vector<int64_t> axes = axes_in;
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (axes.size() != starts.size())
    fail(where, ": 'axes' has ", axes.size(), " values but 'starts' has ", starts.size());
  if (!steps.empty() && steps.size() != starts.size())
    fail(where, ": 'steps' has ", steps.size(), " values but 'starts' has ", starts.size());
  SlicePlan p;
  p.out_shape = in;
  p.start.assign(in.size(), 0);
  p.step.assign(in.size(), 1);
  std::vector<bool> seen(in.size(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t axis = normalize_axis(axes[k], rank, where);
    if (seen[axis]) fail(where, ": 'axes' names axis ", axis, " twice");
    seen[axis] = true;
    const int64_t dim = in[axis], step = steps.empty() ? 1 : steps[k];
    if (step == 0) fail(where, ": 'steps' value for axis ", axis, " is 0");
    p.step[axis] = step;
    if (dim == 0) {
      p.out_shape[axis] = 0;
      continue;
    }
    // Clamp before adding dim so INT64_MIN/MAX sentinels cannot overflow.
    int64_t s = std::clamp<int64_t>(starts[k], -dim - 1, dim + 1), e = std::clamp<int64_t>(ends[k], -dim - 1, dim + 1);
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    int64_t len = step > 0 ? (e - s + step - 1) / step : (s - e + (-step) - 1) / (-step);
    if (len < 0) len = 0;
    p.out_shape[axis] = len;
    p.start[axis] = len ? s : 0;
    p.step[axis] = step;
  }
  return p;
}

void slice_cpu(const Tensor& x, const SlicePlan& p, Tensor& y) {
  const Strides xs = contiguous_strides(x.shape());
  Strides src(xs.size());
  int64_t offset = 0;
  for (size_t d = 0; d < xs.size(); ++d) {
    src[d] = xs[d] * p.step[d];
    offset += xs[d] * p.start[d];
  }
  strided_copy(x.data(), offset, p.out_shape, src, y.data(), dtype_size(x.dtype()));
}

}  // namespace pointrt::tensor
