// `pointrt run --eval`: accuracy of a pose model's or a detector's answers against ground truth
// (ADD, ADD-S, the 10%-of-diameter criterion; box matches and AP at an IoU threshold). The same
// metrics as python/pointrt/metrics.py (tests/python/test_metrics.py checks they agree).
//
// A model is recognised by its output names (docs/pipelines.md):
//   pose:     "poses" [B, C, 3, 4] ([R | t], model -> camera), optional "pose_status" [B, C];
//   detector: "num_detections" [B], "boxes" [B, M, >= 7], "scores" [B, M], "labels" [B, M].
// Ground truth (an .npz; batch 0 is evaluated):
//   pose:     gt_poses [C, 3, 4], gt_present [C] (bool or int), model_points [C, P, 3], optional
//             diameters [C] (else the largest distance between two model points);
//   detector: gt_boxes [G, >= 7] (x, y, z, dx, dy, dz, yaw), gt_labels [G] (int).
#pragma once

#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pointrt/pointrt.h"

namespace pointrt {
namespace pipelines {

using Arrays = std::map<std::string, Tensor>;

enum class PipelineKind { kNone, kPose, kDetector };
/// Which answers a model gives, from its output names.
PipelineKind pipeline_kind(const std::vector<std::string>& output_names);

/// A float64 copy of a float32/float64 tensor (an error naming `what` otherwise).
std::vector<double> to_doubles(const Tensor& t, const std::string& what);
/// The array `name` of `arrays`, or an error naming `file` and the keys it has.
const Tensor& need(const Arrays& arrays, const std::string& name, const std::string& file);

/// ADD: mean distance between the model points under both poses ([R | t] row-major 3 x 4).
double pose_add(const double* pred, const double* gt, const std::vector<double>& points);
/// ADD-S: mean distance from each ground-truth-posed point to the closest predicted-posed point.
double pose_add_s(const double* pred, const double* gt, const std::vector<double>& points);

/// Exact rotated BEV and 3D IoU of (x, y, z, dx, dy, dz, yaw) boxes (polygon clipping, float64).
double box_iou_bev(const double* a, const double* b);
double box_iou_3d(const double* a, const double* b);
/// All-point interpolated average precision (PASCAL VOC 2010+); NaN without ground truth.
double average_precision(std::vector<std::pair<double, bool>> scored_hits, int64_t num_gt);

struct PoseRecord {
  int64_t cls = 0;
  bool found = false;  // a pose with status 0
  double add = 0, add_s = 0, diameter = 0;
};
std::vector<PoseRecord> evaluate_poses(const std::map<std::string, Tensor>& outputs, const Arrays& gt,
                                       const std::string& gt_file);

struct ClassMatches {
  int64_t cls = 0, tp = 0, fp = 0, fn = 0;
  double ap = 0;
};
std::vector<ClassMatches> evaluate_detections(const std::map<std::string, Tensor>& outputs, const Arrays& gt,
                                              const std::string& gt_file, double iou_threshold);

/// Evaluates and prints one line per object or class; `names` labels classes (may be empty).
/// Returns the same as JSON (`run --json`): kind, and per object or class its numbers.
nlohmann::json print_evaluation(const std::map<std::string, Tensor>& outputs, const std::string& gt_file,
                                double iou_threshold, const std::vector<std::string>& names, std::ostream& os);

}  // namespace pipelines
}  // namespace pointrt
