#include "tools/pipeline_eval.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>

#include "core/common.h"
#include "io/npy.h"
#include "ops/detect/exact_box_iou.h"

namespace pointrt {
namespace pipelines {

PipelineKind pipeline_kind(const std::vector<std::string>& names) {
  auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  if (has("poses")) return PipelineKind::kPose;
  if (has("num_detections") && has("boxes") && has("scores") && has("labels")) return PipelineKind::kDetector;
  return PipelineKind::kNone;
}

std::vector<double> to_doubles(const Tensor& t, const std::string& what) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kFloat32)
    std::copy(t.data_as<float>(), t.data_as<float>() + t.numel(), out.begin());
  else if (t.dtype() == DType::kFloat64)
    std::copy(t.data_as<double>(), t.data_as<double>() + t.numel(), out.begin());
  else
    fail(what, " must be float32 or float64, got ", dtype_name(t.dtype()));
  return out;
}

namespace {

std::vector<int64_t> to_ints(const Tensor& t, const std::string& what) {
  std::vector<int64_t> out(static_cast<size_t>(t.numel()));
  dispatch_all(t.dtype(), what.c_str(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < t.numel(); ++i) out[i] = static_cast<int64_t>(t.data_as<T>()[i]);
  });
  return out;
}

void apply_pose(const double* pose, const double* p, double* out) {
  for (int r = 0; r < 3; ++r)
    out[r] = pose[r * 4] * p[0] + pose[r * 4 + 1] * p[1] + pose[r * 4 + 2] * p[2] + pose[r * 4 + 3];
}

}  // namespace

const Tensor& need(const Arrays& arrays, const std::string& name, const std::string& file) {
  auto it = arrays.find(name);
  if (it != arrays.end()) return it->second;
  std::string keys;
  for (const auto& [k, v] : arrays) keys += (keys.empty() ? "" : ", ") + k;
  fail(file, ": no array '", name, "' (it has: ", keys.empty() ? "nothing" : keys, ")");
}

double pose_add(const double* pred, const double* gt, const std::vector<double>& points) {
  const size_t n = points.size() / 3;
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    double a[3], b[3];
    apply_pose(pred, &points[3 * i], a);
    apply_pose(gt, &points[3 * i], b);
    sum += std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
  }
  return n ? sum / n : 0.0;
}

double pose_add_s(const double* pred, const double* gt, const std::vector<double>& points) {
  const size_t n = points.size() / 3;
  std::vector<double> p(3 * n), g(3 * n);
  for (size_t i = 0; i < n; ++i) {
    apply_pose(pred, &points[3 * i], &p[3 * i]);
    apply_pose(gt, &points[3 * i], &g[3 * i]);
  }
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < n; ++j) {
      const double dx = g[3 * i] - p[3 * j], dy = g[3 * i + 1] - p[3 * j + 1], dz = g[3 * i + 2] - p[3 * j + 2];
      best = std::min(best, dx * dx + dy * dy + dz * dz);
    }
    sum += std::sqrt(best);
  }
  return n ? sum / n : 0.0;
}

double box_iou_bev(const double* a, const double* b) { return detect::exact_bev_iou(a, b); }
double box_iou_3d(const double* a, const double* b) { return detect::exact_3d_iou(a, b); }

double average_precision(std::vector<std::pair<double, bool>> hits, int64_t num_gt) {
  if (num_gt == 0) return std::nan("");
  std::stable_sort(hits.begin(), hits.end(), [](const auto& l, const auto& r) { return l.first > r.first; });
  std::vector<double> recall{0.0}, precision{0.0};
  double tp = 0, fp = 0;
  for (const auto& h : hits) {
    (h.second ? tp : fp) += 1;
    recall.push_back(tp / num_gt);
    precision.push_back(tp / std::max(tp + fp, 1e-12));
  }
  recall.push_back(recall.back());
  precision.push_back(0.0);
  for (size_t i = precision.size() - 1; i-- > 0;) precision[i] = std::max(precision[i], precision[i + 1]);
  double ap = 0;
  for (size_t i = 0; i + 1 < recall.size(); ++i)
    if (recall[i + 1] != recall[i]) ap += (recall[i + 1] - recall[i]) * precision[i + 1];
  return ap;
}

std::vector<PoseRecord> evaluate_poses(const std::map<std::string, Tensor>& outputs, const Arrays& gt,
                                       const std::string& file) {
  const Tensor& poses = outputs.at("poses");
  if (poses.rank() != 4 || poses.dim(2) != 3 || poses.dim(3) != 4)
    fail("--eval: output 'poses' must be [B, C, 3, 4], got ", shape_to_string(poses.shape()));
  const int64_t classes = poses.dim(1);
  const auto pred = to_doubles(poses, "output 'poses'");
  std::vector<int64_t> status(static_cast<size_t>(classes), 0);
  if (outputs.count("pose_status")) status = to_ints(outputs.at("pose_status"), "output 'pose_status'");
  const auto gt_poses = to_doubles(need(gt, "gt_poses", file), file + ": gt_poses");
  const auto present = to_ints(need(gt, "gt_present", file), file + ": gt_present");
  const Tensor& model_points = need(gt, "model_points", file);
  if (static_cast<int64_t>(gt_poses.size()) != classes * 12 || static_cast<int64_t>(present.size()) != classes ||
      model_points.rank() != 3 || model_points.dim(0) != classes || model_points.dim(2) != 3)
    fail(file, ": gt_poses [C, 3, 4], gt_present [C] and model_points [C, P, 3] must have C = ", classes,
         " (the model's classes), got ", gt_poses.size() / 12, ", ", present.size(), " and ",
         shape_to_string(model_points.shape()));
  const auto points = to_doubles(model_points, file + ": model_points");
  std::vector<double> diameters;
  if (gt.count("diameters")) diameters = to_doubles(gt.at("diameters"), file + ": diameters");
  const int64_t per = model_points.dim(1);
  std::vector<PoseRecord> records;
  for (int64_t c = 0; c < classes; ++c) {
    if (!present[c]) continue;
    PoseRecord r;
    r.cls = c;
    const std::vector<double> pts(points.begin() + c * per * 3, points.begin() + (c + 1) * per * 3);
    if (static_cast<int64_t>(diameters.size()) == classes) {
      r.diameter = diameters[c];
    } else {
      for (int64_t i = 0; i < per; ++i)
        for (int64_t j = i + 1; j < per; ++j) {
          double d2 = 0;
          for (int k = 0; k < 3; ++k) d2 += (pts[3 * i + k] - pts[3 * j + k]) * (pts[3 * i + k] - pts[3 * j + k]);
          r.diameter = std::max(r.diameter, std::sqrt(d2));
        }
    }
    r.found = status[c] == 0;
    const double inf = std::numeric_limits<double>::infinity();
    r.add = r.found ? pose_add(&pred[c * 12], &gt_poses[c * 12], pts) : inf;
    r.add_s = r.found ? pose_add_s(&pred[c * 12], &gt_poses[c * 12], pts) : inf;
    records.push_back(r);
  }
  return records;
}

std::vector<ClassMatches> evaluate_detections(const std::map<std::string, Tensor>& outputs, const Arrays& gt,
                                              const std::string& file, double iou_threshold) {
  const Tensor& boxes_t = outputs.at("boxes");
  if (boxes_t.rank() != 3 || boxes_t.dim(2) < 7)
    fail("--eval: output 'boxes' must be [B, M, >= 7], got ", shape_to_string(boxes_t.shape()));
  const int64_t dim = boxes_t.dim(2);
  const int64_t n = std::min(to_ints(outputs.at("num_detections"), "num_detections")[0], boxes_t.dim(1));
  const auto boxes = to_doubles(boxes_t, "output 'boxes'");
  const auto scores = to_doubles(outputs.at("scores"), "output 'scores'");
  const auto labels = to_ints(outputs.at("labels"), "output 'labels'");
  const Tensor& gt_boxes_t = need(gt, "gt_boxes", file);
  const auto gt_labels = to_ints(need(gt, "gt_labels", file), file + ": gt_labels");
  if (gt_boxes_t.rank() != 2 || gt_boxes_t.dim(1) < 7 || gt_boxes_t.dim(0) != static_cast<int64_t>(gt_labels.size()))
    fail(file, ": gt_boxes must be [G, >= 7] and gt_labels [G], got ", shape_to_string(gt_boxes_t.shape()), " and ",
         gt_labels.size());
  const auto gt_boxes = to_doubles(gt_boxes_t, file + ": gt_boxes");
  const int64_t gdim = gt_boxes_t.dim(1);
  std::vector<int64_t> classes(gt_labels.begin(), gt_labels.end());
  classes.insert(classes.end(), labels.begin(), labels.begin() + n);
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  std::vector<ClassMatches> result;
  for (int64_t c : classes) {
    ClassMatches m;
    m.cls = c;
    std::vector<int64_t> dets, gts;
    for (int64_t i = 0; i < n; ++i)
      if (labels[i] == c) dets.push_back(i);
    for (size_t j = 0; j < gt_labels.size(); ++j)
      if (gt_labels[j] == c) gts.push_back(static_cast<int64_t>(j));
    std::stable_sort(dets.begin(), dets.end(), [&](int64_t l, int64_t r) { return scores[l] > scores[r]; });
    std::vector<bool> used(gts.size(), false);
    std::vector<std::pair<double, bool>> hits;
    for (int64_t i : dets) {
      double best = iou_threshold;
      int64_t best_j = -1;
      for (size_t j = 0; j < gts.size(); ++j) {
        if (used[j]) continue;
        const double v = box_iou_3d(&boxes[i * dim], &gt_boxes[gts[j] * gdim]);
        if (v >= best) best = v, best_j = static_cast<int64_t>(j);
      }
      if (best_j >= 0) used[best_j] = true;
      hits.push_back({scores[i], best_j >= 0});
      (best_j >= 0 ? m.tp : m.fp) += 1;
    }
    m.fn = static_cast<int64_t>(gts.size()) - m.tp;
    m.ap = average_precision(hits, static_cast<int64_t>(gts.size()));
    result.push_back(m);
  }
  return result;
}

nlohmann::json print_evaluation(const std::map<std::string, Tensor>& outputs, const std::string& gt_file,
                                double iou_threshold, const std::vector<std::string>& names, std::ostream& os) {
  std::vector<std::string> output_names;
  for (const auto& [k, v] : outputs) output_names.push_back(k);
  const Arrays gt = read_npz(gt_file);
  auto name = [&](int64_t c) {
    return c >= 0 && c < static_cast<int64_t>(names.size()) ? names[c] : str_cat("class ", c);
  };
  os << std::fixed << std::setprecision(4);
  nlohmann::json rows = nlohmann::json::array();
  switch (pipeline_kind(output_names)) {
    case PipelineKind::kPose: {
      int passed = 0;
      const auto records = evaluate_poses(outputs, gt, gt_file);
      for (const auto& r : records) {
        const bool pass = r.add_s < 0.1 * r.diameter;
        passed += pass;
        os << "eval " << name(r.cls) << ": " << (r.found ? "" : "no pose; ") << "ADD " << r.add * 1000 << " mm, ADD-S "
           << r.add_s * 1000 << " mm, diameter " << r.diameter * 1000 << " mm -> "
           << (pass ? "ADD-S < 10% of the diameter" : "ADD-S >= 10% of the diameter") << "\n";
        // JSON has no infinity: a missing pose has null distances.
        auto finite = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
        rows.push_back({{"class", r.cls},
                        {"name", name(r.cls)},
                        {"found", r.found},
                        {"add_m", finite(r.add)},
                        {"add_s_m", finite(r.add_s)},
                        {"diameter_m", r.diameter},
                        {"under_10_percent", pass}});
      }
      os << "eval: " << passed << "/" << records.size() << " objects with ADD-S under 10% of their diameter\n";
      return {{"kind", "pose"}, {"objects", rows}, {"passed", passed}};
    }
    case PipelineKind::kDetector: {
      for (const auto& m : evaluate_detections(outputs, gt, gt_file, iou_threshold)) {
        os << "eval " << name(m.cls) << ": " << m.tp << " matched, " << m.fp << " false, " << m.fn
           << " missed at 3D IoU " << iou_threshold << "; AP (this scan) " << m.ap << "\n";
        rows.push_back({{"class", m.cls},
                        {"name", name(m.cls)},
                        {"matched", m.tp},
                        {"false", m.fp},
                        {"missed", m.fn},
                        {"ap", std::isfinite(m.ap) ? nlohmann::json(m.ap) : nlohmann::json(nullptr)}});
      }
      return {{"kind", "detector"}, {"iou", iou_threshold}, {"classes", rows}};
    }
    case PipelineKind::kNone: break;
  }
  fail(
      "--eval: the model's outputs are neither a pose model's ('poses') nor a detector's ('num_detections', "
      "'boxes', 'scores', 'labels'); see docs/pipelines.md");
}

}  // namespace pipelines
}  // namespace pointrt
