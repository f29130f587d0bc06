// pointrt::BoxNMS (docs/operators-detect.md; references: NVIDIA CUDA-CenterPoint's rotated NMS
// (nms_cuda + the host loop of CenterPoint::doinfer) and CenterPoint's circle_nms).
//
//   boxes [B, K, D >= 7] float32 (x, y, z, dx, dy, dz, yaw, ...), scores [B, K] float32,
//   optional labels [B, K] int32/int64, optional count [B] int32/int64 (only the first count[b]
//   boxes take part; 0 <= count <= K)
//   -> num_detections [B] int32, boxes [B, M, D], scores [B, M], labels [B, M] int32,
//      indices [B, M] int32 (into K); M = max_output; padding: 0, 0, -1, -1
//   (the output convention of TensorRT's EfficientNMS plugin, plus the indices).
// Attributes: mode "rotated" (default) | "circle"; iou_threshold (0.2); min_radius (circle,
//   required there); max_output M >= 1 (83); per_class (0: any box suppresses any other, as
//   CUDA-CenterPoint within one task; 1: only boxes of the same label).
// Greedy, per batch: candidates with a NaN score are dropped; the rest ordered by score
// descending, ties to the lower index. The best remaining box is kept; it suppresses every later
// box j with
//   rotated: bev_iou(kept, j) >= iou_threshold (box_iou.h: CUDA-CenterPoint's devIoU), or
//   circle:  (x_kept - x_j)^2 + (y_kept - y_j)^2 <= min_radius (float32; CenterPoint compares its
//            "min_radius" with the squared centre distance, so it is a squared radius).
// Stops after M kept boxes. CenterPoint's numpy argsort puts equal scores in reverse index
// order; ties by lower index are our rule.
#pragma once

#include <cstdint>
#include <string>

#include "graph/ir.h"

namespace pointrt::detect {

struct NmsAttrs {
  bool circle = false;
  float iou_threshold = 0.2f;
  float min_radius = 0.f;
  int64_t max_output = 83;
  bool per_class = false;
};
NmsAttrs parse_nms(const Attributes& attrs, const std::string& where);

/// One batch: `k` boxes of `dim` floats; labels may be null (all 0). Writes up to M indices of the
/// kept boxes into `kept`, returns how many.
int64_t box_nms_ref(const float* boxes, const float* scores, const int32_t* labels, int64_t k, int64_t dim,
                    const NmsAttrs& attrs, int32_t* kept);
/// Optimised: the same greedy order; a circle bound (centre distance > the sum of the half
/// diagonals plus the margin) skips the IoU of boxes that cannot overlap.
int64_t box_nms(const float* boxes, const float* scores, const int32_t* labels, int64_t k, int64_t dim,
                const NmsAttrs& attrs, int32_t* kept);

/// Candidates ordered by score descending, ties to the lower index; NaN scores left out.
std::vector<int32_t> nms_order(const float* scores, int64_t k);

}  // namespace pointrt::detect
