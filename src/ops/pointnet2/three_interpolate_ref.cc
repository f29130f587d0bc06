#include "ops/pointnet2/three_interpolate.h"

namespace pointrt::pointnet2 {

template <typename Index>
void three_interpolate_ref(const float* features, const Index* idx, const float* weight, int64_t batch,
                           int64_t channels, int64_t m, int64_t n, float* out) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t c = 0; c < channels; ++c) {
      const float* f = features + (b * channels + c) * m;
      for (int64_t i = 0; i < n; ++i) {
        const Index* id = idx + (b * n + i) * 3;
        const float* w = weight + (b * n + i) * 3;
        out[(b * channels + c) * n + i] = three_interpolate_one(f[id[0]], f[id[1]], f[id[2]], w[0], w[1], w[2]);
      }
    }
}

template void three_interpolate_ref<int32_t>(const float*, const int32_t*, const float*, int64_t, int64_t, int64_t,
                                             int64_t, float*);
template void three_interpolate_ref<int64_t>(const float*, const int64_t*, const float*, int64_t, int64_t, int64_t,
                                             int64_t, float*);

}  // namespace pointrt::pointnet2
