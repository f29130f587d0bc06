// Bird's-eye-view IoU of two rotated boxes with NVIDIA CUDA-CenterPoint's semantics (its devIoU:
// the intersection polygon from proper edge crossings and the corners of each box that lie in the
// other within a 1e-2 margin, ordered by angle around their mean, shoelace area; float32).
//
// Box layout (the first 7 values of a box row): x, y, z, dx, dy, dz, yaw; dx along the heading,
// yaw counter-clockwise from +x. Only x, y, dx, dy and yaw enter the IoU.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define DETECT_HD __host__ __device__
#else
#define DETECT_HD
#endif

namespace pointrt::detect {

struct Vec2 {
  float x, y;
};

/// (p1 - p0) x (p2 - p0).
DETECT_HD inline float cross_at(Vec2 p1, Vec2 p2, Vec2 p0) {
  return (p1.x - p0.x) * (p2.y - p0.y) - (p2.x - p0.x) * (p1.y - p0.y);
}

/// Whether p lies inside `box`, grown by 1e-2 on each side.
DETECT_HD inline bool inside_box(const float* box, Vec2 p) {
  const float margin = 1e-2f;
  const float c = std::cos(-box[6]), s = std::sin(-box[6]);
  const float rx = (p.x - box[0]) * c + (p.y - box[1]) * (-s);
  const float ry = (p.x - box[0]) * s + (p.y - box[1]) * c;
  return std::fabs(rx) < box[3] / 2 + margin && std::fabs(ry) < box[4] / 2 + margin;
}

/// The crossing of segments p0-p1 and q0-q1 when they cross properly (not at an end point, not
/// collinear).
DETECT_HD inline bool segments_cross(Vec2 p1, Vec2 p0, Vec2 q1, Vec2 q0, Vec2& at) {
  if (!(std::fmin(p0.x, p1.x) <= std::fmax(q0.x, q1.x) && std::fmin(q0.x, q1.x) <= std::fmax(p0.x, p1.x) &&
        std::fmin(p0.y, p1.y) <= std::fmax(q0.y, q1.y) && std::fmin(q0.y, q1.y) <= std::fmax(p0.y, p1.y)))
    return false;
  const float s1 = cross_at(q0, p1, p0), s2 = cross_at(p1, q1, p0);
  const float s3 = cross_at(p0, q1, q0), s4 = cross_at(q1, p1, q0);
  if (!(s1 * s2 > 0 && s3 * s4 > 0)) return false;
  const float s5 = cross_at(q1, p1, p0);
  if (std::fabs(s5 - s1) > 1e-8) {
    at.x = (s5 * q0.x - s1 * q1.x) / (s5 - s1);
    at.y = (s5 * q0.y - s1 * q1.y) / (s5 - s1);
  } else {
    const float a0 = p0.y - p1.y, b0 = p1.x - p0.x, c0 = p0.x * p1.y - p1.x * p0.y;
    const float a1 = q0.y - q1.y, b1 = q1.x - q0.x, c1 = q0.x * q1.y - q1.x * q0.y;
    const float d = a0 * b1 - a1 * b0;
    at.x = (b0 * c1 - b1 * c0) / d;
    at.y = (a1 * c0 - a0 * c1) / d;
  }
  return true;
}

/// The four corners (and the first again) of a box, counter-clockwise before the rotation.
DETECT_HD inline void box_corners(const float* box, Vec2* corners) {
  const float hx = box[3] / 2, hy = box[4] / 2;
  const float x1 = box[0] - hx, y1 = box[1] - hy, x2 = box[0] + hx, y2 = box[1] + hy;
  const Vec2 raw[4] = {{x1, y1}, {x2, y1}, {x2, y2}, {x1, y2}};
  const float c = std::cos(box[6]), s = std::sin(box[6]);
  for (int k = 0; k < 4; ++k) {
    const float dx = raw[k].x - box[0], dy = raw[k].y - box[1];
    corners[k] = {dx * c + dy * (-s) + box[0], dx * s + dy * c + box[1]};
  }
  corners[4] = corners[0];
}

/// Rotated BEV IoU of boxes a and b (a is the higher-scored box in NMS).
DETECT_HD inline float bev_iou(const float* a, const float* b) {
  Vec2 ca[5], cb[5], pts[24];
  box_corners(a, ca);
  box_corners(b, cb);
  int count = 0;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      if (segments_cross(ca[i + 1], ca[i], cb[j + 1], cb[j], pts[count])) ++count;
  for (int k = 0; k < 4; ++k) {
    if (inside_box(a, cb[k])) pts[count++] = cb[k];
    if (inside_box(b, ca[k])) pts[count++] = ca[k];
  }
  if (count == 0) return 0.f;
  Vec2 centre = {0, 0};
  for (int k = 0; k < count; ++k) {
    centre.x += pts[k].x;
    centre.y += pts[k].y;
  }
  centre.x /= count;
  centre.y /= count;
  float angle[24];
  for (int k = 0; k < count; ++k) angle[k] = std::atan2(pts[k].y - centre.y, pts[k].x - centre.x);
  for (int j = 0; j < count - 1; ++j)  // bubble sort by angle (stable)
    for (int i = 0; i < count - j - 1; ++i)
      if (angle[i] > angle[i + 1]) {
        const float ta = angle[i];
        angle[i] = angle[i + 1];
        angle[i + 1] = ta;
        const Vec2 tp = pts[i];
        pts[i] = pts[i + 1];
        pts[i + 1] = tp;
      }
  float area = 0;
  for (int k = 0; k < count - 1; ++k) {
    const float ux = pts[k].x - pts[0].x, uy = pts[k].y - pts[0].y;
    const float vx = pts[k + 1].x - pts[0].x, vy = pts[k + 1].y - pts[0].y;
    area += ux * vy - uy * vx;
  }
  const float overlap = std::fabs(area) / 2.0f;
  const float union_area = a[3] * a[4] + b[3] * b[4] - overlap;
  return overlap / std::fmax(union_area, 1e-8f);
}

}  // namespace pointrt::detect
