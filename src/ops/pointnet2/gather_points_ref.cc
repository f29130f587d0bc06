#include "ops/pointnet2/gather_points.h"

namespace pointrt::pointnet2 {

template <typename Index>
void gather_points_ref(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                       float* out) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t j = 0; j < m; ++j)
        out[(b * channels + c) * m + j] = features[(b * channels + c) * n + static_cast<int64_t>(idx[b * m + j])];
}

template void gather_points_ref<int32_t>(const float*, const int32_t*, int64_t, int64_t, int64_t, int64_t, float*);
template void gather_points_ref<int64_t>(const float*, const int64_t*, int64_t, int64_t, int64_t, int64_t, float*);

}  // namespace pointrt::pointnet2
