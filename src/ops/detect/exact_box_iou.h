// Exact IoU of yawed 3D boxes (x, y, z, dx, dy, dz, yaw): the bird's-eye-view intersection by
// Sutherland-Hodgman clipping in float64, times the overlap of the z ranges for 3D. For metrics
// (`pointrt run --eval`) and as the tests' oracle for bev_iou (box_iou.h, CUDA-CenterPoint's
// approximation used inside NMS).
#pragma once

#include <cmath>
#include <utility>
#include <vector>

namespace pointrt::detect {

using Polygon = std::vector<std::pair<double, double>>;

/// The corners of a box's footprint, counter-clockwise.
template <typename T>
Polygon footprint(const T* b) {
  const double c = std::cos(double(b[6])), s = std::sin(double(b[6])), hx = b[3] / 2.0, hy = b[4] / 2.0;
  const double lx[4] = {-hx, hx, hx, -hx}, ly[4] = {-hy, -hy, hy, hy};
  Polygon p;
  for (int k = 0; k < 4; ++k) p.push_back({b[0] + lx[k] * c - ly[k] * s, b[1] + lx[k] * s + ly[k] * c});
  return p;
}

/// The part of convex `subject` inside convex counter-clockwise `clip`.
inline Polygon clip_polygon(Polygon subject, const Polygon& clip) {
  for (size_t e = 0; e < clip.size() && !subject.empty(); ++e) {
    const auto a = clip[e], b = clip[(e + 1) % clip.size()];
    auto side = [&](std::pair<double, double> p) {
      return (b.first - a.first) * (p.second - a.second) - (b.second - a.second) * (p.first - a.first);
    };
    Polygon out;
    for (size_t i = 0; i < subject.size(); ++i) {
      const auto p = subject[i], q = subject[(i + 1) % subject.size()];
      const double sp = side(p), sq = side(q);
      if (sp >= 0) out.push_back(p);
      if ((sp >= 0) != (sq >= 0)) {
        const double t = sp / (sp - sq);
        out.push_back({p.first + t * (q.first - p.first), p.second + t * (q.second - p.second)});
      }
    }
    subject = std::move(out);
  }
  return subject;
}

inline double polygon_area(const Polygon& p) {
  double a = 0;
  for (size_t i = 0; i < p.size(); ++i)
    a += p[i].first * p[(i + 1) % p.size()].second - p[(i + 1) % p.size()].first * p[i].second;
  return std::fabs(a) / 2;
}

template <typename T>
double exact_bev_iou(const T* a, const T* b) {
  const double inter = polygon_area(clip_polygon(footprint(a), footprint(b)));
  const double uni = double(a[3]) * a[4] + double(b[3]) * b[4] - inter;
  return uni > 0 ? inter / uni : 0.0;
}

template <typename T>
double exact_3d_iou(const T* a, const T* b) {
  const double dz = std::fmin(a[2] + a[5] / 2.0, b[2] + b[5] / 2.0) - std::fmax(a[2] - a[5] / 2.0, b[2] - b[5] / 2.0);
  if (dz <= 0) return 0.0;
  const double inter = polygon_area(clip_polygon(footprint(a), footprint(b))) * dz;
  const double uni = double(a[3]) * a[4] * a[5] + double(b[3]) * b[4] * b[5] - inter;
  return uni > 0 ? inter / uni : 0.0;
}

}  // namespace pointrt::detect
