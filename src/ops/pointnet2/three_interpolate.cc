#include "ops/pointnet2/three_interpolate.h"

namespace pointrt {
namespace pointnet2 {

template <typename Index>
void three_interpolate(const float* features, const Index* idx, const float* weight, int64_t batch, int64_t channels,
                       int64_t m, int64_t n, float* out) {
  const int64_t rows = batch * channels;
#pragma omp parallel for schedule(static) if (rows * n > 16384)
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = r / channels;
    const float* __restrict f = features + r * m;
    const Index* __restrict id = idx + b * n * 3;
    const float* __restrict w = weight + b * n * 3;
    float* __restrict dst = out + r * n;
    for (int64_t i = 0; i < n; ++i)
      dst[i] = three_interpolate_one(f[id[3 * i]], f[id[3 * i + 1]], f[id[3 * i + 2]], w[3 * i], w[3 * i + 1], w[3 * i + 2]);
  }
}

template void three_interpolate<int32_t>(const float*, const int32_t*, const float*, int64_t, int64_t, int64_t, int64_t, float*);
template void three_interpolate<int64_t>(const float*, const int64_t*, const float*, int64_t, int64_t, int64_t, int64_t, float*);

}  // namespace pointnet2
}  // namespace pointrt
