// Trilu: per matrix row, the kept columns are one contiguous run: a memcpy and a memset per row,
// rows spread over threads.
#include "ops/onnx/tensor/trilu.h"

#include <algorithm>

namespace pointrt::tensor {

void trilu_cpu(const Tensor& x, int64_t k, bool upper, Tensor& y) {
  const int64_t m = x.dim(x.rank() - 2), n = x.dim(x.rank() - 1);
  const int64_t rows = m == 0 ? 0 : x.numel() / std::max<int64_t>(n, 1);
  if (n == 0) return;
  const size_t es = dtype_size(x.dtype());
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(y.data());
#pragma omp parallel for schedule(static) if (worth_parallel(x.numel() * static_cast <int64_t>(es)))
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = r % m;
    // Kept columns [lo, hi): upper keeps j >= i + k, lower keeps j <= i + k.
    const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, n) : 0;
    const int64_t hi = upper ? n : std::clamp<int64_t>(i + k + 1, 0, n);
    char* row = dst + r * n * es;
    const char* in = src + r * n * es;
    std::memset(row, 0, static_cast<size_t>(lo) * es);
    if (hi > lo) std::memcpy(row + lo * es, in + lo * es, static_cast<size_t>(hi - lo) * es);
    std::memset(row + std::max(hi, lo) * es, 0, static_cast<size_t>(n - std::max(hi, lo)) * es);
  }
}

}  // namespace pointrt::tensor
