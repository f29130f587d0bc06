// Naive TopK: selection by repeated scans. Each step picks, among the elements not yet taken,
// the best one by the header's rule (NaN largest, ties by the lower index).
#include <vector>

#include "ops/onnx/reduce/reduce_common.h"
#include "ops/onnx/reduce/topk.h"

namespace pointrt::reduce {

void topk_reference(const Tensor& x, int64_t axis, int64_t k, bool largest, Tensor& values, Tensor& indices) {
  detail::AxisSplit s = detail::split_at_axis(x.shape(), axis);
  dispatch_numeric(x.dtype(), "topk_reference", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    T* v = values.data_as<T>();
    int64_t* ix = indices.data_as<int64_t>();
    // Rank a value: NaN above everything.
    auto greater = [](T a, T b) {
      bool an = a != a, bn = b != b;
      if (an || bn) return an && !bn;
      return a > b;
    };
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        std::vector<bool> taken(static_cast<size_t>(s.axis_dim), false);
        for (int64_t j = 0; j < k; ++j) {
          int64_t best = -1;
          for (int64_t r = 0; r < s.axis_dim; ++r) {
            if (taken[r]) continue;
            if (best < 0) {
              best = r;
              continue;
            }
            T a = in[(o * s.axis_dim + r) * s.inner + i], b = in[(o * s.axis_dim + best) * s.inner + i];
            if (largest ? greater(a, b) : greater(b, a)) best = r;  // strictly better only: lower index wins ties
          }
          taken[best] = true;
          v[(o * k + j) * s.inner + i] = in[(o * s.axis_dim + best) * s.inner + i];
          ix[(o * k + j) * s.inner + i] = best;
        }
      }
  });
}

}  // namespace pointrt::reduce
