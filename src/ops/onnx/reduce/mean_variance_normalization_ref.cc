#include "ops/onnx/reduce/mean_variance_normalization.h"

#include <cmath>

#include "ops/onnx/tensor/tensor_utils.h"
#include "ops/staging.h"

namespace pointrt::reduce {

void mean_variance_normalization_ref(const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  // Group every element by its position on the kept axes.
  Shape kept;
  for (size_t d = 0; d < x.rank(); ++d) kept.push_back(reduced[d] ? 1 : x.dim(d));
  const tensor::Strides kept_strides = tensor::contiguous_strides(kept);
  const int64_t groups = shape_numel(kept), n = x.numel();
  std::vector<int64_t> group(static_cast<size_t>(n));
  std::vector<int64_t> idx(x.rank(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t g = 0;
    for (size_t d = 0; d < x.rank(); ++d) g += (reduced[d] ? 0 : idx[d]) * kept_strides[d];
    group[e] = g;
    tensor::next_index(idx, x.shape());
  }
  dispatch_float(x.dtype(), "MeanVarianceNormalization", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    std::vector<double> sum(static_cast<size_t>(groups), 0.0), sq(static_cast<size_t>(groups), 0.0);
    std::vector<int64_t> count(static_cast<size_t>(groups), 0);
    for (int64_t e = 0; e < n; ++e) {
      sum[group[e]] += in[e];
      sq[group[e]] += double(in[e]) * in[e];
      ++count[group[e]];
    }
    for (int64_t e = 0; e < n; ++e) {
      const double m = sum[group[e]] / count[group[e]], var = sq[group[e]] / count[group[e]] - m * m;
      y.data_as<T>()[e] = static_cast<T>((in[e] - m) / (std::sqrt(std::max(var, 0.0)) + 1e-9));
    }
  });
}

std::unique_ptr<OpKernel> make_mean_variance_normalization_kernel(const KernelInit& init) {
  const std::vector<int64_t> axes = init.attrs().get_ints("axes", {0, 2, 3});
  return make_function_kernel([axes](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    std::vector<bool> reduced(x.rank(), false);
    for (int64_t a : axes) reduced[normalize_axis(a, static_cast<int64_t>(x.rank()), ctx.where())] = true;
    Tensor y = compute_tensor(ctx.input(0).dtype(), x.shape());
    mean_variance_normalization_ref(x, reduced, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::reduce
