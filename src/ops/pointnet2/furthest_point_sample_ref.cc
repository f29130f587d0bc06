// Reference FurthestPointSample: the OPS.md pseudo-code, line by line.
#include <vector>

#include "ops/pointnet2/furthest_point_sample.h"

namespace pointrt::pointnet2 {

void furthest_point_sample_ref(const float* xyz, int64_t batch, int64_t n, const FurthestPointSampleAttrs& attrs,
                               int32_t* idx) {
  for (int64_t b = 0; b < batch; ++b) {
    const float* pts = xyz + b * n * 3;
    int32_t* out = idx + b * attrs.npoint;
    std::vector<float> dist(static_cast<size_t>(n), kFpsInitialDistance);
    out[0] = 0;
    for (int64_t j = 1; j < attrs.npoint; ++j) {
      const float* last = pts + 3 * static_cast<int64_t>(out[j - 1]);
      float best = -1;
      int64_t best_index = 0;
      for (int64_t k = 0; k < n; ++k) {
        const float* p = pts + 3 * k;
        if (!fps_is_candidate(p[0], p[1], p[2], attrs.ignore_origin)) continue;
        float d = squared_distance(p, last);
        dist[k] = fps_min(d, dist[k]);
        if (dist[k] > best) {  // strict: the lowest k wins a tie
          best = dist[k];
          best_index = k;
        }
      }
      out[j] = static_cast<int32_t>(best_index);
    }
  }
}

}  // namespace pointrt::pointnet2
