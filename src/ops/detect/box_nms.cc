// Optimised BoxNMS: the reference's greedy loop, with each box's bounding circle precomputed so
// that pairs too far apart to overlap skip the polygon IoU (their IoU is exactly 0).
#include "ops/detect/box_nms.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/common.h"
#include "ops/detect/box_iou.h"

namespace pointrt::detect {

NmsAttrs parse_nms(const Attributes& attrs, const std::string& where) {
  NmsAttrs a;
  const std::string mode = attrs.get_string("mode", "rotated");
  if (mode != "rotated" && mode != "circle")
    fail(where, ": attribute 'mode' = '", mode, "' must be 'rotated' or 'circle'");
  a.circle = mode == "circle";
  a.iou_threshold = attrs.get_float("iou_threshold", 0.2f);
  if (std::isnan(a.iou_threshold)) fail(where, ": attribute 'iou_threshold' is NaN");
  if (a.circle) {
    if (!attrs.has("min_radius")) fail(where, ": mode 'circle' needs the attribute 'min_radius'");
    a.min_radius = attrs.get_float("min_radius");
    if (!(a.min_radius >= 0.f)) fail(where, ": attribute 'min_radius' = ", a.min_radius, " must be >= 0");
  }
  a.max_output = attrs.get_int("max_output", 83);
  if (a.max_output < 1 || a.max_output > (1 << 20))
    fail(where, ": attribute 'max_output' = ", a.max_output, " must be in [1, 2^20]");
  a.per_class = attrs.get_int("per_class", 0) != 0;
  return a;
}

std::vector<int32_t> nms_order(const float* scores, int64_t k) {
  std::vector<int32_t> order;
  order.reserve(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i)
    if (!std::isnan(scores[i])) order.push_back(static_cast<int32_t>(i));
  std::stable_sort(order.begin(), order.end(), [&](int32_t l, int32_t r) { return scores[l] > scores[r]; });
  return order;
}

int64_t box_nms(const float* boxes, const float* scores, const int32_t* labels, int64_t k, int64_t dim,
                const NmsAttrs& a, int32_t* kept) {
  const std::vector<int32_t> order = nms_order(scores, k);
  // Half diagonal plus the 1e-2 corner margin (scaled by sqrt 2) of box_iou.h: beyond the sum of
  // two such radii no edge crosses and no corner lies inside, so the IoU is 0.
  std::vector<float> reach;
  const bool use_reach = !a.circle && a.iou_threshold > 0.f;
  if (use_reach) {
    reach.resize(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) {
      const float* b = boxes + i * dim;
      reach[i] = 0.5f * std::sqrt(b[3] * b[3] + b[4] * b[4]) * 1.001f + 0.02f;
    }
  }
  std::vector<char> suppressed(static_cast<size_t>(k), 0);
  int64_t count = 0;
  for (size_t oi = 0; oi < order.size() && count < a.max_output; ++oi) {
    const int32_t i = order[oi];
    if (suppressed[i]) continue;
    kept[count++] = i;
    const float* bi = boxes + i * dim;
    for (size_t oj = oi + 1; oj < order.size(); ++oj) {
      const int32_t j = order[oj];
      if (suppressed[j] || (a.per_class && labels && labels[i] != labels[j])) continue;
      const float* bj = boxes + j * dim;
      const float dx = bi[0] - bj[0], dy = bi[1] - bj[1];
      if (a.circle) {
        suppressed[j] = dx * dx + dy * dy <= a.min_radius;
      } else if (use_reach) {
        const float r = reach[i] + reach[j];
        if (dx * dx + dy * dy <= r * r) suppressed[j] = bev_iou(bi, bj) >= a.iou_threshold;
      } else {
        suppressed[j] = bev_iou(bi, bj) >= a.iou_threshold;
      }
    }
  }
  return count;
}

}  // namespace pointrt::detect
