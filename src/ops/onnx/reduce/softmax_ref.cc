// Naive Softmax / LogSoftmax: each (outer, inner) line in long double, directly from the
// definition with the maximum subtracted.
#include <cmath>

#include "ops/onnx/reduce/softmax.h"

namespace pointrt::reduce {

void softmax_reference(const Tensor& x, int64_t outer, int64_t R, int64_t inner, bool log, Tensor& y) {
  dispatch_float(x.dtype(), "softmax_reference", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    T* out = y.data_as<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t r) { return (o * R + r) * inner + i; };
        long double mx = -INFINITY, sum = 0;
        for (int64_t r = 0; r < R; ++r) mx = std::max<long double>(mx, in[at(r)]);
        for (int64_t r = 0; r < R; ++r) sum += std::exp(static_cast<long double>(in[at(r)]) - mx);
        for (int64_t r = 0; r < R; ++r) {
          long double v = static_cast<long double>(in[at(r)]) - mx;
          out[at(r)] = static_cast<T>(log ? v - std::log(sum) : std::exp(v) / sum);
        }
      }
  });
}

}  // namespace pointrt::reduce
