// Naive BoxNMS: greedy over the sorted candidates, every pair tested.
#include <vector>

#include "ops/detect/box_iou.h"
#include "ops/detect/box_nms.h"

namespace pointrt::detect {

int64_t box_nms_ref(const float* boxes, const float* scores, const int32_t* labels, int64_t k, int64_t dim,
                    const NmsAttrs& a, int32_t* kept) {
  const std::vector<int32_t> order = nms_order(scores, k);
  std::vector<bool> suppressed(static_cast<size_t>(k), false);
  int64_t count = 0;
  for (size_t oi = 0; oi < order.size() && count < a.max_output; ++oi) {
    const int32_t i = order[oi];
    if (suppressed[i]) continue;
    kept[count++] = i;
    for (size_t oj = oi + 1; oj < order.size(); ++oj) {
      const int32_t j = order[oj];
      if (suppressed[j] || (a.per_class && labels && labels[i] != labels[j])) continue;
      const float *bi = boxes + i * dim, *bj = boxes + j * dim;
      if (a.circle) {
        const float dx = bi[0] - bj[0], dy = bi[1] - bj[1];
        suppressed[j] = dx * dx + dy * dy <= a.min_radius;
      } else {
        suppressed[j] = bev_iou(bi, bj) >= a.iou_threshold;
      }
    }
  }
  return count;
}

}  // namespace pointrt::detect
