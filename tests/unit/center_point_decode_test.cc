// pointrt::CenterPointDecode: a hand-computed box, optimised vs reference on random maps in both
// candidate modes with and without peaks (fixed seeds), padding, and errors through a Session.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/detect/center_point_decode.h"
#include "support/single_node.h"

using namespace pointrt;
using namespace pointrt::detect;
using namespace pointrt::test;

namespace {

struct Maps {
  std::vector<float> heat, offset, height, size, rot, vel;
  int64_t c, h, w;
  HeadMaps view(bool velocity) const {
    return {
        heat.data(), offset.data(), height.data(), size.data(), rot.data(), velocity ? vel.data() : nullptr, c, h, w};
  }
};

Maps random_maps(int64_t c, int64_t h, int64_t w, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g(0.f, 1.f);
  Maps m{{}, {}, {}, {}, {}, {}, c, h, w};
  auto fill = [&](std::vector<float>& v, int64_t ch, float mean, float sd) {
    v.resize(static_cast<size_t>(ch * h * w));
    for (auto& x : v) x = mean + sd * g(rng);
  };
  fill(m.heat, c, -4.f, 2.f);
  for (size_t i = 0; i < m.heat.size(); i += 7) m.heat[i] = std::round(m.heat[i]);  // equal scores
  fill(m.offset, 2, 0.5f, 0.3f);
  fill(m.height, 1, 0.f, 1.f);
  fill(m.size, 3, 0.5f, 0.4f);
  fill(m.rot, 2, 0.f, 1.f);
  fill(m.vel, 2, 0.f, 1.f);
  return m;
}

DecodeAttrs base_attrs() {
  DecodeAttrs a;
  a.voxel_x = a.voxel_y = 0.1f;
  a.range_x = -10.f;
  a.range_y = -5.f;
  a.out_size_factor = 4.f;
  return a;
}

}  // namespace

TEST(CenterPointDecode, HandExample) {
  Maps m = random_maps(2, 3, 4, 1);
  std::fill(m.heat.begin(), m.heat.end(), -10.f);
  m.heat[1 * 12 + 1 * 4 + 2] = 2.f;  // class 1 at (y 1, x 2)
  m.heat[0 * 12 + 1 * 4 + 2] = 1.f;  // class 0 weaker at the same pixel
  m.offset[1 * 4 + 2] = 0.25f;
  m.offset[12 + 1 * 4 + 2] = 0.5f;
  m.height[1 * 4 + 2] = -1.5f;
  for (int d = 0; d < 3; ++d) m.size[d * 12 + 1 * 4 + 2] = std::log(static_cast<float>(d + 1));
  m.rot[1 * 4 + 2] = 1.f;       // sin
  m.rot[12 + 1 * 4 + 2] = 0.f;  // cos -> yaw pi/2
  DecodeAttrs a = base_attrs();
  a.max_detections = 3;
  for (auto fn : {decode_ref, decode}) {
    std::vector<float> boxes(3 * 9, -7.f), scores(3, -7.f);
    std::vector<int32_t> labels(3, -7);
    ASSERT_EQ(fn(m.view(true), a, boxes.data(), scores.data(), labels.data()), 1);
    EXPECT_EQ(labels[0], 1);
    EXPECT_FLOAT_EQ(scores[0], 1.f / (1.f + std::exp(-2.f)));
    EXPECT_FLOAT_EQ(boxes[0], (0.25f + 2) * 4 * 0.1f - 10);
    EXPECT_FLOAT_EQ(boxes[1], (0.5f + 1) * 4 * 0.1f - 5);
    EXPECT_FLOAT_EQ(boxes[2], -1.5f);
    EXPECT_NEAR(boxes[4], 2.f, 1e-6);
    EXPECT_NEAR(boxes[6], 1.5707963f, 1e-6);
    EXPECT_EQ(labels[1], -1);
    EXPECT_EQ(scores[2], 0.f);
    EXPECT_EQ(boxes[9], 0.f);
  }
}

TEST(CenterPointDecode, OptimisedMatchesReference) {
  int cases = 0;
  for (auto [h, w] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {17, 31}, {64, 64}, {180, 180}})
    for (int variant = 0; variant < 6; ++variant) {
      const int64_t c = variant % 2 ? 1 : 3;
      Maps m = random_maps(c, h, w, static_cast<uint32_t>(h * 100 + variant));
      DecodeAttrs a = base_attrs();
      a.per_class = variant >= 3;
      a.peak_kernel = variant % 3 == 2 ? 1 : 3;
      a.max_detections = variant == 4 ? 5 : 200;
      a.score_threshold = variant == 5 ? 0.f : 0.1f;
      a.sigmoid = variant != 1;
      a.exp_size = variant != 0;
      if (variant == 3) {
        a.has_center_range = true;
        a.center_range = {-9, -4, -1, 0, 0, 1};
      }
      const bool vel = variant % 2 == 0;
      const int64_t dim = vel ? 9 : 7, k = a.max_detections;
      std::vector<float> b1(static_cast<size_t>(k * dim)), b2(b1.size(), -7.f), s1(k), s2(k, -7.f);
      std::vector<int32_t> l1(k), l2(k, -7);
      const int64_t n1 = decode_ref(m.view(vel), a, b1.data(), s1.data(), l1.data());
      const int64_t n2 = decode(m.view(vel), a, b2.data(), s2.data(), l2.data());
      SCOPED_TRACE(std::to_string(h) + "x" + std::to_string(w) + " variant " + std::to_string(variant));
      ASSERT_EQ(n1, n2);
      EXPECT_EQ(b1, b2);
      EXPECT_EQ(s1, s2);
      EXPECT_EQ(l1, l2);
      cases += n1 > 0;
    }
  EXPECT_GT(cases, 20);  // most cases decode something
}

TEST(CenterPointDecode, PeaksKeepOnlyLocalMaxima) {
  Maps m = random_maps(1, 1, 5, 2);
  m.heat = {0.f, 3.f, 2.f, 2.f, 1.f};
  DecodeAttrs a = base_attrs();
  a.peak_kernel = 3;
  a.sigmoid = false;
  a.score_threshold = 0.5f;
  std::vector<float> boxes(a.max_detections * 7), scores(a.max_detections);
  std::vector<int32_t> labels(a.max_detections);
  // x = 1 (3 is the maximum of 0, 3, 2); x = 3 (2 equals the maximum of 2, 2, 1): ties are peaks.
  EXPECT_EQ(decode(m.view(false), a, boxes.data(), scores.data(), labels.data()), 2);
  EXPECT_EQ(scores[0], 3.f);
  EXPECT_EQ(scores[1], 2.f);
  EXPECT_NEAR(boxes[7], (m.offset[3] + 3) * 4 * 0.1f - 10, 1e-6);
}

TEST(CenterPointDecode, SessionAndErrors) {
  Maps m = random_maps(2, 8, 8, 3);
  auto attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_floats(n, "voxel_size", {0.1f, 0.1f, 0.2f});
    ModelBuilder::attr_floats(n, "point_cloud_range", {-10, -5, -3, 10, 5, 1});
    ModelBuilder::attr_float(n, "out_size_factor", 4.f);
    ModelBuilder::attr_int(n, "max_detections", 16);
  };
  auto in = [&](const char* name, int64_t ch, const std::vector<float>& v) {
    return NamedInput{name, make_tensor<float>({1, ch, 8, 8}, v)};
  };
  auto out = run_pointrt_node("CenterPointDecode",
                              {in("heatmap", 2, m.heat), in("offset", 2, m.offset), in("height", 1, m.height),
                               in("size", 3, m.size), in("rotation", 2, m.rot)},
                              {"boxes", "scores", "labels", "count"}, attrs);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 16, 7}));
  EXPECT_EQ(out[3].shape(), (Shape{1}));
  DecodeAttrs a = base_attrs();
  a.max_detections = 16;
  std::vector<float> b(16 * 7), s(16);
  std::vector<int32_t> l(16);
  EXPECT_EQ(out[3].data_as<int32_t>()[0], decode_ref(m.view(false), a, b.data(), s.data(), l.data()));
  EXPECT_EQ(std::vector<float>(out[0].data_as<float>(), out[0].data_as<float>() + 16 * 7), b);

  expect_error_with(
      [&] {
        run_pointrt_node("CenterPointDecode",
                         {in("heatmap", 2, m.heat),
                          in("offset", 2, m.offset),
                          in("height", 1, m.height),
                          {"size", make_tensor<float>({1, 2, 8, 8}, std::vector<float>(128))},
                          in("rotation", 2, m.rot)},
                         {"boxes", "scores", "labels", "count"}, attrs);
      },
      {"node0", "'size'", "[1, 3, 8, 8]", "[1, 2, 8, 8]"});
  expect_error_with(
      [&] {
        run_pointrt_node("CenterPointDecode",
                         {in("heatmap", 2, m.heat), in("offset", 2, m.offset), in("height", 1, m.height),
                          in("size", 3, m.size), in("rotation", 2, m.rot)},
                         {"boxes", "scores", "labels", "count"}, [&](onnx::NodeProto& n) {
                           attrs(n);
                           ModelBuilder::attr_int(n, "peak_kernel", 2);
                         });
      },
      {"node0", "peak_kernel", "odd"});
}
