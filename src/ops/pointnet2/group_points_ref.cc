#include "ops/pointnet2/group_points.h"

namespace pointrt::pointnet2 {

template <typename Index>
void group_points_ref(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                      int64_t s, float* out) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t k = 0; k < s; ++k) {
          int64_t point = static_cast<int64_t>(idx[(b * m + i) * s + k]);
          out[((b * channels + c) * m + i) * s + k] = features[(b * channels + c) * n + point];
        }
}

template void group_points_ref<int32_t>(const float*, const int32_t*, int64_t, int64_t, int64_t, int64_t, int64_t,
                                        float*);
template void group_points_ref<int64_t>(const float*, const int64_t*, int64_t, int64_t, int64_t, int64_t, int64_t,
                                        float*);

}  // namespace pointrt::pointnet2
