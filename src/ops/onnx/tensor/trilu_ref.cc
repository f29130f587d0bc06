// Naive Trilu: one test per element.
#include "ops/onnx/tensor/trilu.h"

namespace pointrt::tensor {

void trilu_ref(const Tensor& x, int64_t k, bool upper, Tensor& y) {
  const int64_t m = x.dim(x.rank() - 2), n = x.dim(x.rank() - 1);
  const size_t es = dtype_size(x.dtype());
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t i = (e / n) % m, j = e % n;
    const bool keep = upper ? j - i >= k : j - i <= k;
    char* dst = static_cast<char*>(y.data()) + e * es;
    if (keep)
      std::memcpy(dst, static_cast<const char*>(x.data()) + e * es, es);
    else
      std::memset(dst, 0, es);
  }
}

}  // namespace pointrt::tensor
