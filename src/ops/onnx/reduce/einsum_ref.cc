// Naive Einsum: one odometer over every label; each step adds the product of the operands'
// elements (index 0 on a broadcast size-1 dim) into the output element, in long double /
// 64-bit integers.
#include <vector>

#include "ops/onnx/reduce/einsum.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {

void einsum_reference(const EinsumPlan& plan, const std::vector<const Tensor*>& inputs, Tensor& y) {
  std::vector<int> labels;
  for (size_t l = 0; l < plan.label_size.size(); ++l)
    if (plan.label_size[l] >= 0) labels.push_back(static_cast<int>(l));
  std::vector<int64_t> value(plan.label_size.size(), 0);
  int64_t total = 1;
  for (int l : labels) total *= plan.label_size[l];
  dispatch_numeric(y.dtype(), "einsum_reference", [&](auto tag) {
    using T = decltype(tag);
    using W = std::conditional_t<std::is_floating_point<T>::value, long double, T>;
    std::vector<W> acc(static_cast<size_t>(y.numel()), W(0));
    for (int64_t step = 0; step < total; ++step) {
      int64_t rem = step;
      for (size_t k = labels.size(); k-- > 0;) {
        value[labels[k]] = rem % plan.label_size[labels[k]];
        rem /= plan.label_size[labels[k]];
      }
      W prod = W(1);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const Shape& s = inputs[i]->shape();
        int64_t off = 0;
        for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + (s[d] == 1 ? 0 : value[plan.inputs[i][d]]);
        prod = detail::wmul(prod, W(inputs[i]->data_as<T>()[off]));
      }
      int64_t o = 0;
      for (size_t d = 0; d < plan.output.size(); ++d) o = o * plan.output_shape[d] + value[plan.output[d]];
      acc[o] = detail::wadd(acc[o], prod);
    }
    for (int64_t i = 0; i < y.numel(); ++i) y.data_as<T>()[i] = T(acc[i]);
  });
}

}  // namespace pointrt::reduce
