// Reference ThreeNN: pointnet2_ops three_nn_kernel's loop, then the wrapper's sqrt.
#include "ops/pointnet2/three_nn.h"

namespace pointrt::pointnet2 {

void three_nn_ref(const float* unknown, const float* known, int64_t batch, int64_t n, int64_t m, float* dist,
                  int32_t* idx) {
  const float inf = std::numeric_limits<float>::infinity();  // the kernel's 1e40f
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < n; ++j) {
      const float* u = unknown + (b * n + j) * 3;
      float best1 = inf, best2 = inf, best3 = inf;
      int32_t besti1 = 0, besti2 = 0, besti3 = 0;
      for (int64_t k = 0; k < m; ++k) {
        float d = squared_distance(u, known + (b * m + k) * 3);
        int32_t i = static_cast<int32_t>(k);
        if (d < best1) {
          best3 = best2;
          besti3 = besti2;
          best2 = best1;
          besti2 = besti1;
          best1 = d;
          besti1 = i;
        } else if (d < best2) {
          best3 = best2;
          besti3 = besti2;
          best2 = d;
          besti2 = i;
        } else if (d < best3) {
          best3 = d;
          besti3 = i;
        }
      }
      const float best[3] = {best1, best2, best3};
      const int32_t besti[3] = {besti1, besti2, besti3};
      for (int s = 0; s < 3; ++s) {
        bool found = best[s] < inf;
        dist[(b * n + j) * 3 + s] = found ? std::sqrt(best[s]) : kThreeNNMissingDistance;
        idx[(b * n + j) * 3 + s] = found ? besti[s] : 0;
      }
    }
}

}  // namespace pointrt::pointnet2
