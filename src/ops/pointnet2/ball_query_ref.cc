// Reference BallQuery: the OPS.md scan, line by line.
#include "ops/pointnet2/ball_query.h"

namespace pointrt::pointnet2 {

void ball_query_ref(const float* xyz, const float* new_xyz, int64_t batch, int64_t n, int64_t m,
                    const BallQueryAttrs& attrs, int32_t* idx) {
  const float radius2 = attrs.radius2(), min_radius2 = attrs.min_radius2();
  const int64_t nsample = attrs.nsample;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < m; ++j) {
      const float* centre = new_xyz + (b * m + j) * 3;
      int32_t* out = idx + (b * m + j) * nsample;
      for (int64_t s = 0; s < nsample; ++s) out[s] = 0;
      int64_t count = 0;
      for (int64_t k = 0; k < n && count < nsample; ++k) {
        float d2 = squared_distance(centre, xyz + (b * n + k) * 3);
        if (!ball_query_accepts(d2, radius2, min_radius2)) continue;
        if (count == 0)
          for (int64_t s = 0; s < nsample; ++s) out[s] = static_cast<int32_t>(k);
        out[count++] = static_cast<int32_t>(k);
      }
    }
}

}  // namespace pointrt::pointnet2
