// pointrt::CenterPointDecode (docs/operators-detect.md; references: NVIDIA CUDA-CenterPoint's
// predictKernel, and the 3x3 max-pool peaks + top-K of CenterPoint/OpenPCDet's CenterHead).
//
//   heatmap [B, C, H, W], offset [B, 2, H, W], height [B, 1, H, W], size [B, 3, H, W],
//   rotation [B, 2, H, W] (sin, cos), optional velocity [B, 2, H, W]; all float32
//   -> boxes [B, K, 7 | 9] (x, y, z, dx, dy, dz, yaw [, vx, vy]), scores [B, K], labels [B, K] int32,
//      count [B] int32; K = max_detections.
// Attributes: voxel_size floats (>= 2; vx, vy used), point_cloud_range floats (>= 2; xmin, ymin used),
//   out_size_factor float > 0 (required); score_threshold (0.1); post_center_range floats[6]
//   (optional: xmin, ymin, zmin, xmax, ymax, zmax); max_detections K >= 1 (1000);
//   heatmap_activation "sigmoid" (default) | "none"; size_activation "exp" (default) | "none";
//   peak_kernel odd >= 1 (1: every pixel, CUDA-CenterPoint; 3: CenterNet's 3x3 max-pool peaks);
//   candidates "pixel" (default: one per pixel, its best class, CUDA-CenterPoint) | "class"
//   (one per class and pixel, OpenPCDet).
// Per batch, candidates in index order (pixel: h*W + w; class: c*H*W + h*W + w):
//   score = act(heatmap) (sigmoid 1 / (1 + exp(-x)) in float32); pixel mode takes the first class
//   with the largest score. With peak_kernel k > 1 a candidate must equal the maximum of its class
//   channel over the k x k window around it (clipped at the border: torch max_pool2d with
//   padding (k-1)/2). Kept when score >= score_threshold, and, with post_center_range, when
//   min <= x, y, z <= max. Box: x = (offset[0] + w) * out_size_factor * vx + xmin,
//   y = (offset[1] + h) * out_size_factor * vy + ymin, z = height, dx, dy, dz = act(size[0..2]),
//   yaw = atan2(rotation[0], rotation[1]) (float32, evaluated in this order, no FMA).
//   The K highest scores are output, descending, ties to the lower candidate index; count = how
//   many; the rest is padding (boxes 0, score 0, label -1). CUDA-CenterPoint keeps the first
//   1000 candidates in atomic (arbitrary) order; the two agree whenever at most K pass.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "graph/ir.h"

namespace pointrt::detect {

struct DecodeAttrs {
  float voxel_x = 0, voxel_y = 0, range_x = 0, range_y = 0, out_size_factor = 0;
  float score_threshold = 0.1f;
  bool has_center_range = false;
  std::array<float, 6> center_range{};
  int64_t max_detections = 1000;
  bool sigmoid = true, exp_size = true, per_class = false;
  int64_t peak_kernel = 1;
};
DecodeAttrs parse_decode(const Attributes& attrs, const std::string& where);

/// The head maps of one batch (pointers into [B, c, H, W] tensors at batch b); velocity may be null.
struct HeadMaps {
  const float *heatmap, *offset, *height, *size, *rotation, *velocity;
  int64_t classes, h, w;
};

/// Outputs of one batch: boxes [K, box_dim], scores [K], labels [K]; returns the count.
/// Naive reference (the oracle): every candidate scored, stable sort.
int64_t decode_ref(const HeadMaps& maps, const DecodeAttrs& attrs, float* boxes, float* scores, int32_t* labels);
/// Optimised: a conservative logit prefilter skips the exp of background pixels; peaks tested only
/// for survivors; partial sort of the survivors.
int64_t decode(const HeadMaps& maps, const DecodeAttrs& attrs, float* boxes, float* scores, int32_t* labels);

/// Shared by both: the activated score, the box of candidate (class, pixel) and the padding.
inline int64_t box_dim(const HeadMaps& m) { return m.velocity ? 9 : 7; }
float activate_score(float logit, const DecodeAttrs& attrs);
/// Whether (c, y, x) is a peak of its class channel (always true for peak_kernel 1).
bool is_peak(const HeadMaps& m, const DecodeAttrs& attrs, int64_t c, int64_t y, int64_t x, float score);
/// Writes the box of pixel (y, x); false when the centre is outside post_center_range.
bool decode_box(const HeadMaps& m, const DecodeAttrs& attrs, int64_t y, int64_t x, float* box);
void pad_outputs(int64_t from, int64_t k, int64_t dim, float* boxes, float* scores, int32_t* labels);

}  // namespace pointrt::detect
