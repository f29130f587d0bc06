#include "ops/pointnet2/gather_points.h"

namespace pointrt {
namespace pointnet2 {

template <typename Index>
void gather_points(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                   float* out) {
  const int64_t rows = batch * channels;
#pragma omp parallel for schedule(static) if (rows * m > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict row = features + r * n;
    const Index* __restrict ids = idx + (r / channels) * m;
    float* __restrict dst = out + r * m;
    for (int64_t j = 0; j < m; ++j) dst[j] = gather_one(row, ids, j);
  }
}

template void gather_points<int32_t>(const float*, const int32_t*, int64_t, int64_t, int64_t, int64_t, float*);
template void gather_points<int64_t>(const float*, const int64_t*, int64_t, int64_t, int64_t, int64_t, float*);

}  // namespace pointnet2
}  // namespace pointrt
