// Naive CenterPointDecode: score every candidate, keep those that pass, stable sort, first K.
#include <algorithm>
#include <vector>

#include "ops/detect/center_point_decode.h"

namespace pointrt::detect {

int64_t decode_ref(const HeadMaps& m, const DecodeAttrs& a, float* boxes, float* scores, int32_t* labels) {
  struct Candidate {
    float score;
    int64_t label, pixel;
  };
  std::vector<Candidate> kept;
  const int64_t hw = m.h * m.w;
  const int64_t groups = a.per_class ? m.classes : 1;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t p = 0; p < hw; ++p) {
      int64_t label = g;
      float score = activate_score(m.heatmap[g * hw + p], a);
      if (!a.per_class)
        for (int64_t c = 1; c < m.classes; ++c) {
          const float s = activate_score(m.heatmap[c * hw + p], a);
          if (s > score) {
            score = s;
            label = c;
          }
        }
      if (!(score >= a.score_threshold) || !is_peak(m, a, label, p / m.w, p % m.w, score)) continue;
      float box[9];
      if (!decode_box(m, a, p / m.w, p % m.w, box)) continue;
      kept.push_back({score, label, p});
    }
  std::stable_sort(kept.begin(), kept.end(), [](const Candidate& l, const Candidate& r) { return l.score > r.score; });
  const int64_t count = std::min<int64_t>(static_cast<int64_t>(kept.size()), a.max_detections), dim = box_dim(m);
  for (int64_t i = 0; i < count; ++i) {
    decode_box(m, a, kept[i].pixel / m.w, kept[i].pixel % m.w, boxes + i * dim);
    scores[i] = kept[i].score;
    labels[i] = static_cast<int32_t>(kept[i].label);
  }
  pad_outputs(count, a.max_detections, dim, boxes, scores, labels);
  return count;
}

}  // namespace pointrt::detect
