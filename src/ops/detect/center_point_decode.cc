// Optimised CenterPointDecode: rows in parallel; a conservative bound on the logit skips the exp
// of pixels that cannot reach the score threshold; survivors partially sorted.
#include "ops/detect/center_point_decode.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/common.h"

namespace pointrt::detect {

namespace {
std::string choice(const Attributes& attrs, const char* name, const char* dflt, const char* other,
                   const std::string& where) {
  const std::string v = attrs.get_string(name, dflt);
  if (v != dflt && v != other)
    fail(where, ": attribute '", name, "' = '", v, "' must be '", dflt, "' or '", other, "'");
  return v;
}
}  // namespace

DecodeAttrs parse_decode(const Attributes& attrs, const std::string& where) {
  DecodeAttrs a;
  const auto vs = attrs.get_floats("voxel_size");
  const auto pr = attrs.get_floats("point_cloud_range");
  if (vs.size() < 2 || !(vs[0] > 0.f) || !(vs[1] > 0.f))
    fail(where, ": attribute 'voxel_size' needs at least 2 positive values (vx, vy), got ", vs.size(), " value(s)");
  if (pr.size() < 2) fail(where, ": attribute 'point_cloud_range' needs at least 2 values (xmin, ymin)");
  a.voxel_x = vs[0];
  a.voxel_y = vs[1];
  a.range_x = pr[0];
  a.range_y = pr[1];
  a.out_size_factor = attrs.get_float("out_size_factor");
  if (!(a.out_size_factor > 0.f)) fail(where, ": attribute 'out_size_factor' = ", a.out_size_factor, " must be > 0");
  a.score_threshold = attrs.get_float("score_threshold", 0.1f);
  if (std::isnan(a.score_threshold)) fail(where, ": attribute 'score_threshold' is NaN");
  if (attrs.has("post_center_range")) {
    const auto r = attrs.get_floats("post_center_range");
    if (r.size() != 6) fail(where, ": attribute 'post_center_range' must have 6 values, got ", r.size());
    a.has_center_range = true;
    std::copy(r.begin(), r.end(), a.center_range.begin());
  }
  a.max_detections = attrs.get_int("max_detections", 1000);
  if (a.max_detections < 1 || a.max_detections > (1 << 20))
    fail(where, ": attribute 'max_detections' = ", a.max_detections, " must be in [1, 2^20]");
  a.sigmoid = choice(attrs, "heatmap_activation", "sigmoid", "none", where) == "sigmoid";
  a.exp_size = choice(attrs, "size_activation", "exp", "none", where) == "exp";
  a.per_class = choice(attrs, "candidates", "pixel", "class", where) == "class";
  a.peak_kernel = attrs.get_int("peak_kernel", 1);
  if (a.peak_kernel < 1 || a.peak_kernel % 2 == 0 || a.peak_kernel > 31)
    fail(where, ": attribute 'peak_kernel' = ", a.peak_kernel, " must be odd, in [1, 31]");
  return a;
}

float activate_score(float logit, const DecodeAttrs& a) { return a.sigmoid ? 1.f / (1.f + std::exp(-logit)) : logit; }

bool is_peak(const HeadMaps& m, const DecodeAttrs& a, int64_t c, int64_t y, int64_t x, float score) {
  const int64_t r = a.peak_kernel / 2;
  const float* channel = m.heatmap + c * m.h * m.w;
  for (int64_t yy = std::max<int64_t>(0, y - r); yy <= std::min(m.h - 1, y + r); ++yy)
    for (int64_t xx = std::max<int64_t>(0, x - r); xx <= std::min(m.w - 1, x + r); ++xx)
      if (activate_score(channel[yy * m.w + xx], a) > score) return false;
  return true;
}

bool decode_box(const HeadMaps& m, const DecodeAttrs& a, int64_t y, int64_t x, float* box) {
  const int64_t hw = m.h * m.w, p = y * m.w + x;
  const float cx = (m.offset[p] + static_cast<float>(x)) * a.out_size_factor * a.voxel_x + a.range_x;
  const float cy = (m.offset[hw + p] + static_cast<float>(y)) * a.out_size_factor * a.voxel_y + a.range_y;
  const float cz = m.height[p];
  if (a.has_center_range) {
    const auto& r = a.center_range;
    if (cx < r[0] || cx > r[3] || cy < r[1] || cy > r[4] || cz < r[2] || cz > r[5]) return false;
  }
  box[0] = cx;
  box[1] = cy;
  box[2] = cz;
  for (int d = 0; d < 3; ++d) box[3 + d] = a.exp_size ? std::exp(m.size[d * hw + p]) : m.size[d * hw + p];
  box[6] = std::atan2(m.rotation[p], m.rotation[hw + p]);
  if (m.velocity) {
    box[7] = m.velocity[p];
    box[8] = m.velocity[hw + p];
  }
  return true;
}

void pad_outputs(int64_t from, int64_t k, int64_t dim, float* boxes, float* scores, int32_t* labels) {
  std::fill(boxes + from * dim, boxes + k * dim, 0.f);
  std::fill(scores + from, scores + k, 0.f);
  std::fill(labels + from, labels + k, -1);
}

namespace {

struct Candidate {
  float score;
  int32_t label;
  int64_t index;  // candidate index (the tie-break)
  int64_t pixel;
};

// Logits below this cannot give a score >= the threshold (a margin far above float rounding of
// the sigmoid); -inf when no such bound is safe.
float logit_cutoff(const DecodeAttrs& a) {
  if (!a.sigmoid) return a.score_threshold;
  const double t = a.score_threshold;
  if (!(t > 1e-6 && t < 1 - 1e-6)) return -INFINITY;
  const double logit = std::log(t / (1 - t));
  return static_cast<float>(logit - 1e-3 - 1e-3 * std::fabs(logit));
}

// The candidate of pixel p of group g (a class in class mode), if it passes every test.
bool candidate_at(const HeadMaps& m, const DecodeAttrs& a, float cutoff, int64_t g, int64_t p, Candidate& out) {
  const int64_t hw = m.h * m.w;
  if (a.per_class) {
    if (!(m.heatmap[g * hw + p] >= cutoff)) return false;
    out.label = static_cast<int32_t>(g);
    out.score = activate_score(m.heatmap[g * hw + p], a);
  } else {
    float best_logit = m.heatmap[p];
    for (int64_t c = 1; c < m.classes; ++c) best_logit = std::fmax(best_logit, m.heatmap[c * hw + p]);
    if (!(best_logit >= cutoff)) return false;
    out.label = 0;
    out.score = activate_score(m.heatmap[p], a);
    for (int64_t c = 1; c < m.classes; ++c) {
      const float s = activate_score(m.heatmap[c * hw + p], a);
      if (s > out.score) {
        out.score = s;
        out.label = static_cast<int32_t>(c);
      }
    }
  }
  if (!(out.score >= a.score_threshold) || !is_peak(m, a, out.label, p / m.w, p % m.w, out.score)) return false;
  float box[9];
  if (!decode_box(m, a, p / m.w, p % m.w, box)) return false;
  out.index = g * hw + p;
  out.pixel = p;
  return true;
}

}  // namespace

int64_t decode(const HeadMaps& m, const DecodeAttrs& a, float* boxes, float* scores, int32_t* labels) {
  const float cutoff = logit_cutoff(a);
  const int64_t groups = a.per_class ? m.classes : 1, rows = groups * m.h;
  const int threads = (rows * m.w * m.classes > (1 << 15)) ? omp_get_max_threads() : 1;
  std::vector<std::vector<Candidate>> found(static_cast<size_t>(threads));
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t row = 0; row < rows; ++row) {
    auto& mine = found[omp_get_thread_num()];
    const int64_t g = row / m.h, y = row % m.h;
    Candidate c;
    for (int64_t x = 0; x < m.w; ++x)
      if (candidate_at(m, a, cutoff, g, y * m.w + x, c)) mine.push_back(c);
  }
  std::vector<Candidate> all;
  for (auto& f : found) all.insert(all.end(), f.begin(), f.end());
  auto better = [](const Candidate& l, const Candidate& r) {
    return l.score != r.score ? l.score > r.score : l.index < r.index;
  };
  const int64_t count = std::min<int64_t>(static_cast<int64_t>(all.size()), a.max_detections), dim = box_dim(m);
  std::partial_sort(all.begin(), all.begin() + count, all.end(), better);
  for (int64_t i = 0; i < count; ++i) {
    decode_box(m, a, all[i].pixel / m.w, all[i].pixel % m.w, boxes + i * dim);
    scores[i] = all[i].score;
    labels[i] = all[i].label;
  }
  pad_outputs(count, a.max_detections, dim, boxes, scores, labels);
  return count;
}

}  // namespace pointrt::detect
