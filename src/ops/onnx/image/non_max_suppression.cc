// NonMaxSuppression: box corners and areas precomputed once per batch, greedy selection per
// (batch, class), OpenMP over (batch, class) pairs.
#include "ops/onnx/image/non_max_suppression.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "ops/onnx/image/image_util.h"

namespace pointrt::image {

namespace {

struct Corners {
  float x_min, x_max, y_min, y_max, area;
};

Corners corners_of(const float* b, bool center_point_box) {
  Corners c;
  if (!center_point_box) {
    c.x_min = std::min(b[1], b[3]);
    c.x_max = std::max(b[1], b[3]);
    c.y_min = std::min(b[0], b[2]);
    c.y_max = std::max(b[0], b[2]);
  } else {
    const float w_half = b[2] / 2, h_half = b[3] / 2;
    c.x_min = b[0] - w_half;
    c.x_max = b[0] + w_half;
    c.y_min = b[1] - h_half;
    c.y_max = b[1] + h_half;
  }
  c.area = (c.x_max - c.x_min) * (c.y_max - c.y_min);
  return c;
}

// True when b suppresses a (IoU > threshold), with the reference's early outs.
inline bool suppresses(const Corners& a, const Corners& b, float iou_threshold) {
  const float ix_min = std::max(a.x_min, b.x_min), ix_max = std::min(a.x_max, b.x_max);
  if (ix_max <= ix_min) return false;
  const float iy_min = std::max(a.y_min, b.y_min), iy_max = std::min(a.y_max, b.y_max);
  if (iy_max <= iy_min) return false;
  const float inter = (ix_max - ix_min) * (iy_max - iy_min);
  if (inter <= 0) return false;
  const float uni = a.area + b.area - inter;
  if (a.area <= 0 || b.area <= 0 || uni <= 0) return false;
  return inter / uni > iou_threshold;
}

}  // namespace

std::vector<int64_t> non_max_suppression(const float* boxes, const float* scores, int64_t batches, int64_t classes,
                                         int64_t num_boxes, bool center_point_box, int64_t max_per_class,
                                         float iou_threshold, bool has_score_threshold, float score_threshold) {
  std::vector<int64_t> result;
  if (max_per_class <= 0 || batches * classes * num_boxes == 0) return result;
  std::vector<Corners> corners(static_cast<size_t>(batches * num_boxes));
  for (int64_t i = 0; i < batches * num_boxes; ++i) corners[i] = corners_of(boxes + 4 * i, center_point_box);
  std::vector<std::vector<int64_t>> selected(static_cast<size_t>(batches * classes));
#pragma omp parallel for schedule(dynamic) if (batches * classes > 1 && num_boxes > 64)
  for (int64_t bc = 0; bc < batches * classes; ++bc) {
    const int64_t b = bc / classes;
    const float* s = scores + bc * num_boxes;
    const Corners* box = corners.data() + b * num_boxes;
    std::vector<int64_t> order;
    order.reserve(static_cast<size_t>(num_boxes));
    for (int64_t i = 0; i < num_boxes; ++i)
      if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
    // Descending score; equal scores (and the reference's ordering) by lower index first.
    // NaN scores rank lowest so that the ordering stays a strict weak ordering.
    auto key = [&](int64_t i) { return std::isnan(s[i]) ? -std::numeric_limits<float>::infinity() : s[i]; };
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return key(x) > key(y); });
    std::vector<int64_t>& kept = selected[bc];
    for (int64_t cand : order) {
      if (static_cast<int64_t>(kept.size()) >= max_per_class) break;
      bool keep = true;
      for (int64_t k : kept)
        if (suppresses(box[cand], box[k], iou_threshold)) {
          keep = false;
          break;
        }
      if (keep) kept.push_back(cand);
    }
  }
  for (int64_t bc = 0; bc < batches * classes; ++bc)
    for (int64_t k : selected[bc]) {
      result.push_back(bc / classes);
      result.push_back(bc % classes);
      result.push_back(k);
    }
  return result;
}

namespace {

class NonMaxSuppressionKernel : public OpKernel {
 public:
  explicit NonMaxSuppressionKernel(const KernelInit& init) {
    const int64_t cpb = init.attrs().get_int("center_point_box", 0);
    if (cpb != 0 && cpb != 1) fail(init.where(), ": attribute 'center_point_box' is ", cpb, ", expected 0 or 1");
    center_point_box_ = cpb == 1;
  }

  void run(KernelContext& ctx) const override {
    const Tensor& boxes = ctx.input(0);
    const Tensor& scores = ctx.input(1);
    if (boxes.dtype() != DType::kFloat32 || scores.dtype() != DType::kFloat32)
      fail(ctx.where(), ": inputs 'boxes' and 'scores' must be float32, got ", dtype_name(boxes.dtype()), " and ",
           dtype_name(scores.dtype()));
    if (boxes.rank() != 3 || boxes.dim(2) != 4)
      fail(ctx.where(), ": input 'boxes' has shape ", shape_to_string(boxes.shape()), ", expected [batches, boxes, 4]");
    if (scores.rank() != 3)
      fail(ctx.where(), ": input 'scores' has shape ", shape_to_string(scores.shape()),
           ", expected [batches, classes, boxes]");
    if (scores.dim(0) != boxes.dim(0) || scores.dim(2) != boxes.dim(1))
      fail(ctx.where(), ": input 'scores' has shape ", shape_to_string(scores.shape()), " but 'boxes' is ",
           shape_to_string(boxes.shape()), " (expected scores [", boxes.dim(0), ", classes, ", boxes.dim(1), "])");
    auto scalar = [&](size_t i, const char* name, double* v) {
      if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return false;
      const Tensor& t = ctx.input(i);
      if (t.numel() != 1)
        fail(ctx.where(), ": input '", name, "' has shape ", shape_to_string(t.shape()), ", expected one value");
      *v = tensor_to_doubles(t, ctx.where(), name)[0];
      return true;
    };
    double max_out = 0, iou = 0, score_th = 0;
    if (ctx.has_input(2) && ctx.input(2).numel() > 0 && ctx.input(2).dtype() != DType::kInt64)
      fail(ctx.where(), ": input 'max_output_boxes_per_class' has element type ", dtype_name(ctx.input(2).dtype()),
           ", expected int64");
    int64_t max_per_class = 0;
    if (scalar(2, "max_output_boxes_per_class", &max_out))
      max_per_class = std::max<int64_t>(ctx.input(2).data_as<int64_t>()[0], 0);
    scalar(3, "iou_threshold", &iou);
    if (!(iou >= 0 && iou <= 1)) fail(ctx.where(), ": input 'iou_threshold' is ", iou, ", expected a value in [0, 1]");
    const bool has_score = scalar(4, "score_threshold", &score_th);
    std::vector<int64_t> rows = non_max_suppression(boxes.data_as<float>(), scores.data_as<float>(), boxes.dim(0),
                                                    scores.dim(1), boxes.dim(1), center_point_box_, max_per_class,
                                                    static_cast<float>(iou), has_score, static_cast<float>(score_th));
    Tensor& y = ctx.output(0, DType::kInt64, {static_cast<int64_t>(rows.size() / 3), 3});
    std::copy(rows.begin(), rows.end(), y.data_as<int64_t>());
  }

 private:
  bool center_point_box_ = false;
};

}  // namespace

std::unique_ptr<OpKernel> make_non_max_suppression_kernel(const KernelInit& init) {
  return std::make_unique<NonMaxSuppressionKernel>(init);
}

}  // namespace pointrt::image
