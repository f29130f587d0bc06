#include "tools/render.h"

#include <png.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/common.h"
#include "tools/pipeline_eval.h"

namespace pointrt {
namespace pipelines {

namespace {

using Color = std::array<uint8_t, 3>;

// A colour per class (Tableau 10), ground truth green.
const Color kPalette[] = {{31, 119, 180},  {255, 127, 14}, {214, 39, 40},  {148, 103, 189}, {140, 86, 75},
                          {227, 119, 194}, {188, 189, 34}, {23, 190, 207}, {127, 127, 127}, {44, 160, 44}};
const Color kGroundTruth = {60, 220, 60};
Color class_color(int64_t c) { return kPalette[static_cast<size_t>(std::max<int64_t>(c, 0)) % 9]; }

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
  Image(int w, int h, Color fill) : width(w), height(h), rgb(static_cast<size_t>(w) * h * 3) {
    for (size_t i = 0; i < rgb.size(); ++i) rgb[i] = fill[i % 3];
  }
  void blend(int x, int y, Color c, double alpha) {
    if (x < 0 || y < 0 || x >= width || y >= height) return;
    uint8_t* p = &rgb[(static_cast<size_t>(y) * width + x) * 3];
    for (int k = 0; k < 3; ++k) p[k] = static_cast<uint8_t>(std::lround(p[k] * (1 - alpha) + c[k] * alpha));
  }
  void disc(double cx, double cy, double r, Color c, double alpha = 1.0) {
    for (int y = static_cast<int>(std::floor(cy - r)); y <= static_cast<int>(std::ceil(cy + r)); ++y)
      for (int x = static_cast<int>(std::floor(cx - r)); x <= static_cast<int>(std::ceil(cx + r)); ++x)
        if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r) blend(x, y, c, alpha);
  }
  // A line of the given width, stamped with discs along it.
  void line(double x0, double y0, double x1, double y1, Color c, double width_px) {
    if (!std::isfinite(x0) || !std::isfinite(y0) || !std::isfinite(x1) || !std::isfinite(y1)) return;
    const double len = std::hypot(x1 - x0, y1 - y0);
    if (len > 20000) return;  // far outside the picture
    const int steps = std::max(1, static_cast<int>(std::ceil(len * 2)));
    for (int i = 0; i <= steps; ++i) {
      const double t = static_cast<double>(i) / steps;
      disc(x0 + t * (x1 - x0), y0 + t * (y1 - y0), width_px / 2, c);
    }
  }
};

void write_png(const Image& img, const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) fail(path, ": cannot open for writing");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) fail(path, ": libpng could not start");
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    fail(path, ": libpng failed while writing");
  }
  png_init_io(png, f.get());
  png_set_IHDR(png, info, img.width, img.height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < img.height; ++y)
    png_write_row(png, const_cast<png_bytep>(&img.rgb[static_cast<size_t>(y) * img.width * 3]));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
}

// The first model input that looks like `predicate`, or an error naming what was wanted.
template <typename Pred>
const Tensor& find_input(const std::map<std::string, Tensor>& feeds, const std::string& preferred, Pred predicate,
                         const char* what) {
  auto it = feeds.find(preferred);
  if (it != feeds.end() && predicate(it->second)) return it->second;
  for (const auto& [name, t] : feeds)
    if (predicate(t)) return t;
  fail("--render: the model has no input that is ", what);
}

// ------------------------------------------------------------------ detector: bird's-eye view

struct View {
  double x0, scale, y1;  // column = (x - x0) * scale, row = (y1 - y) * scale
  double px(double x) const { return (x - x0) * scale; }
  double py(double y) const { return (y1 - y) * scale; }
};

void draw_box(Image& img, const View& v, const double* b, Color c, double width) {
  const double cs = std::cos(b[6]), sn = std::sin(b[6]), hx = b[3] / 2, hy = b[4] / 2;
  const double lx[4] = {-hx, hx, hx, -hx}, ly[4] = {-hy, -hy, hy, hy};
  double x[4], y[4];
  for (int k = 0; k < 4; ++k) {
    x[k] = v.px(b[0] + lx[k] * cs - ly[k] * sn);
    y[k] = v.py(b[1] + lx[k] * sn + ly[k] * cs);
  }
  for (int k = 0; k < 4; ++k) img.line(x[k], y[k], x[(k + 1) % 4], y[(k + 1) % 4], c, width);
  img.line(v.px(b[0]), v.py(b[1]), (x[1] + x[2]) / 2, (y[1] + y[2]) / 2, c, width);  // heading
}

void render_detector(const RenderInputs& in, const std::string& path) {
  const Tensor& pts = find_input(
      *in.feeds, "points",
      [](const Tensor& t) { return t.dtype() == DType::kFloat32 && t.rank() == 2 && t.dim(1) >= 3; },
      "a point cloud (float32 [P, >= 3])");
  const float* p = pts.data_as<float>();
  const int64_t n = pts.dim(0), f = pts.dim(1);
  double lo[3] = {1e30, 1e30, 1e30}, hi[3] = {-1e30, -1e30, -1e30};
  for (int64_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      if (std::isfinite(p[i * f + d]))
        lo[d] = std::min(lo[d], double(p[i * f + d])), hi[d] = std::max(hi[d], double(p[i * f + d]));
  if (lo[0] > hi[0]) lo[0] = lo[1] = lo[2] = -1, hi[0] = hi[1] = hi[2] = 1;
  const int size = 1000;
  const double span = std::max({hi[0] - lo[0], hi[1] - lo[1], 1e-3}) * 1.04;
  const double cx = (lo[0] + hi[0]) / 2, cy = (lo[1] + hi[1]) / 2;
  const View v{cx - span / 2, size / span, cy + span / 2};
  Image img(size, size, {18, 18, 24});
  for (int64_t i = 0; i < n; ++i) {
    const double z = (p[i * f + 2] - lo[2]) / std::max(hi[2] - lo[2], 1e-6);
    const auto g = static_cast<uint8_t>(110 + 145 * std::clamp(z, 0.0, 1.0));
    const int x = static_cast<int>(v.px(p[i * f])), y = static_cast<int>(v.py(p[i * f + 1]));
    for (int k = 0; k < 4; ++k) img.blend(x + k % 2, y + k / 2, {g, g, g}, 0.9);  // 2 x 2 dots
  }
  if (in.scene.count("gt_boxes")) {
    const Tensor& g = in.scene.at("gt_boxes");
    const auto gb = to_doubles(g, "gt_boxes");
    for (int64_t i = 0; g.rank() == 2 && g.dim(1) >= 7 && i < g.dim(0); ++i)
      draw_box(img, v, &gb[i * g.dim(1)], kGroundTruth, 3.0);
  }
  const Tensor& boxes = in.outputs->at("boxes");
  const auto b = to_doubles(boxes, "output 'boxes'");
  const auto s = to_doubles(in.outputs->at("scores"), "output 'scores'");
  const Tensor& labels = in.outputs->at("labels");
  const int64_t dim = boxes.dim(2),
                count = std::min<int64_t>(in.outputs->at("num_detections").data_as<int32_t>()[0], boxes.dim(1));
  for (int64_t i = 0; i < count; ++i)
    if (s[i] >= in.score_threshold) draw_box(img, v, &b[i * dim], class_color(labels.data_as<int32_t>()[i]), 2.0);
  write_png(img, path);
}

// ------------------------------------------------------------------ pose: projection over the image

struct Camera {
  double fx, fy, cx, cy, scale;
  bool project(const double* p, double& u, double& v) const {
    if (!(p[2] > 1e-6)) return false;
    u = (fx * p[0] / p[2] + cx + 0.5) * scale;
    v = (fy * p[1] / p[2] + cy + 0.5) * scale;
    return true;
  }
};

void transform_point(const double* pose, const double* p, double* out) {
  for (int r = 0; r < 3; ++r)
    out[r] = pose[r * 4] * p[0] + pose[r * 4 + 1] * p[1] + pose[r * 4 + 2] * p[2] + pose[r * 4 + 3];
}

void draw_axes(Image& img, const Camera& cam, const double* pose, double length, double width, bool ground_truth) {
  const double origin[3] = {0, 0, 0};
  double o[3], ou, ov;
  transform_point(pose, origin, o);
  if (!cam.project(o, ou, ov)) return;
  const Color axis[3] = {{230, 40, 40}, {40, 210, 40}, {50, 90, 240}};
  for (int a = 0; a < 3; ++a) {
    double tip[3] = {0, 0, 0}, t[3], tu, tv;
    tip[a] = length;
    transform_point(pose, tip, t);
    if (cam.project(t, tu, tv)) img.line(ou, ov, tu, tv, ground_truth ? Color{255, 255, 255} : axis[a], width);
  }
}

void render_pose(const RenderInputs& in, const std::string& path) {
  const Tensor& rgb = find_input(
      *in.feeds, "rgb", [](const Tensor& t) { return t.dtype() == DType::kFloat32 && t.rank() == 4 && t.dim(1) == 3; },
      "an image (float32 [1, 3, H, W])");
  const int64_t h = rgb.dim(2), w = rgb.dim(3);
  const int scale = static_cast<int>(std::max<int64_t>(1, 640 / std::max<int64_t>(w, 1)));
  const auto cam_v = to_doubles(need(in.scene, "camera", "--scene/--eval"), "camera");
  if (cam_v.size() != 4) fail("--render: 'camera' must hold fx, fy, cx, cy");
  const Camera cam{cam_v[0], cam_v[1], cam_v[2], cam_v[3], static_cast<double>(scale)};
  const float* px = rgb.data_as<float>();
  float peak = 0;
  for (int64_t i = 0; i < 3 * h * w; ++i) peak = std::max(peak, px[i]);
  const double unit = peak > 1.5f ? 1.0 : 255.0;  // 0..1 or 0..255 images
  Image img(static_cast<int>(w * scale), static_cast<int>(h * scale), {0, 0, 0});
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x)
      for (int k = 0; k < 3; ++k)
        img.rgb[(static_cast<size_t>(y) * img.width + x) * 3 + k] =
            static_cast<uint8_t>(std::clamp(px[(k * h + y / scale) * w + x / scale] * unit, 0.0, 255.0));
  const Tensor& mp = need(in.scene, "model_points", "--scene/--eval");
  const auto points = to_doubles(mp, "model_points");
  const auto poses = to_doubles(in.outputs->at("poses"), "output 'poses'");
  const int64_t classes = in.outputs->at("poses").dim(1), per = mp.dim(1);
  if (mp.rank() != 3 || mp.dim(0) != classes) fail("--render: model_points must be [C = ", classes, ", P, 3]");
  std::vector<int32_t> status(static_cast<size_t>(classes), 0);
  if (in.outputs->count("pose_status"))
    std::copy_n(in.outputs->at("pose_status").data_as<int32_t>(), classes, status.begin());
  std::vector<double> gt, present;
  if (in.scene.count("gt_poses") && in.scene.count("gt_present")) {
    gt = to_doubles(in.scene.at("gt_poses"), "gt_poses");
    const Tensor& pr = in.scene.at("gt_present");
    for (int64_t c = 0; c < pr.numel(); ++c)
      present.push_back(pr.dtype() == DType::kBool ? pr.data_as<bool>()[c] : 1.0);
  }
  for (int64_t c = 0; c < classes; ++c) {
    double extent = 0;
    for (int64_t i = 0; i < per; ++i)
      extent = std::max(extent, std::sqrt(points[(c * per + i) * 3] * points[(c * per + i) * 3] +
                                          points[(c * per + i) * 3 + 1] * points[(c * per + i) * 3 + 1] +
                                          points[(c * per + i) * 3 + 2] * points[(c * per + i) * 3 + 2]));
    if (static_cast<int64_t>(gt.size()) == classes * 12 && static_cast<int64_t>(present.size()) == classes &&
        present[c])
      draw_axes(img, cam, &gt[c * 12], extent, 1.5, true);
    if (status[c] != 0 || extent == 0) continue;
    for (int64_t i = 0; i < per; ++i) {
      double q[3], u, v;
      transform_point(&poses[c * 12], &points[(c * per + i) * 3], q);
      if (cam.project(q, u, v)) img.disc(u, v, 1.2, class_color(c), 0.55);
    }
    draw_axes(img, cam, &poses[c * 12], extent, 3.0, false);
  }
  write_png(img, path);
}

}  // namespace

void render_png(const RenderInputs& in, const std::string& path) {
  std::vector<std::string> names;
  for (const auto& [k, v] : *in.outputs) names.push_back(k);
  switch (pipeline_kind(names)) {
    case PipelineKind::kPose: return render_pose(in, path);
    case PipelineKind::kDetector: return render_detector(in, path);
    case PipelineKind::kNone:
      fail(
          "--render: the model's outputs are neither a pose model's ('poses') nor a detector's ('num_detections', "
          "'boxes', 'scores', 'labels'); see docs/pipelines.md");
  }
}

}  // namespace pipelines
}  // namespace pointrt
