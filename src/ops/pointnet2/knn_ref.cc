// Reference KNN: all distances, a full sort in the KNN order, the first k.
#include <algorithm>
#include <numeric>
#include <vector>

#include "ops/pointnet2/knn.h"

namespace pointrt::pointnet2 {

void knn_ref(const float* xyz, const float* new_xyz, int64_t batch, int64_t n, int64_t m, const KnnAttrs& attrs,
             int32_t* idx, float* dist2) {
  std::vector<float> d(static_cast<size_t>(n));
  std::vector<int32_t> order(static_cast<size_t>(n));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < m; ++j) {
      const float* query = new_xyz + (b * m + j) * 3;
      for (int64_t i = 0; i < n; ++i) d[i] = squared_distance(query, xyz + (b * n + i) * 3);
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) { return knn_less(d[x], x, d[y], y); });
      for (int64_t s = 0; s < attrs.k; ++s) {
        idx[(b * m + j) * attrs.k + s] = order[s];
        dist2[(b * m + j) * attrs.k + s] = d[order[s]];
      }
    }
}

}  // namespace pointrt::pointnet2
