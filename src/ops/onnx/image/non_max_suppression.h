// NonMaxSuppression (opsets 10, 11): greedy per (batch, class) selection, as ONNX Runtime and the
// ONNX reference (onnx/reference/ops/op_non_max_suppression.py) do it.
//  - boxes [B, N, 4]: center_point_box = 0 -> [y1, x1, y2, x2], any diagonal pair (coordinates
//    may be flipped, min/max taken per axis); 1 -> [x_center, y_center, width, height].
//  - scores [B, C, N]. Optional inputs (absent or empty): max_output_boxes_per_class (int64,
//    default 0 = select nothing), iou_threshold (float, default 0, must lie in [0, 1]),
//    score_threshold (float; when given only boxes with score > threshold are candidates).
//  - Per (b, c): candidates sorted by score descending, equal scores by lower box index first;
//    a candidate is kept unless its IoU with an already kept box is > iou_threshold; stop after
//    max_output_boxes_per_class kept boxes. IoU is computed in float32; boxes with an empty
//    intersection or a non-positive area never suppress.
//  - Output selected_indices [num_selected, 3] int64 rows (batch, class, box), ordered by batch,
//    then class, then selection order.
#pragma once

#include <memory>

#include "ops/kernel.h"

namespace pointrt::image {

/// Run NMS on float boxes/scores; thresholds already resolved. Returns rows of (b, c, box).
std::vector<int64_t> non_max_suppression(const float* boxes, const float* scores, int64_t batches, int64_t classes,
                                         int64_t num_boxes, bool center_point_box, int64_t max_per_class,
                                         float iou_threshold, bool has_score_threshold, float score_threshold);

std::unique_ptr<OpKernel> make_non_max_suppression_kernel(const KernelInit& init);

}  // namespace pointrt::image
