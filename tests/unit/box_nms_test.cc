// pointrt::BoxNMS and the rotated BEV IoU: the IoU against exact polygon clipping, optimised vs
// reference NMS on clustered boxes (fixed seeds), hand examples, errors through a Session.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ops/detect/box_iou.h"
#include "ops/detect/box_nms.h"
#include "ops/detect/exact_box_iou.h"
#include "support/single_node.h"

using namespace pointrt;
using namespace pointrt::detect;
using namespace pointrt::test;

namespace {

// Boxes in a few clusters so that many pairs overlap; scores with ties.
std::vector<float> clustered_boxes(int64_t k, int64_t dim, uint32_t seed, std::vector<float>& scores,
                                   std::vector<int32_t>& labels) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> boxes(static_cast<size_t>(k * dim));
  scores.resize(static_cast<size_t>(k));
  labels.resize(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) {
    float* b = &boxes[i * dim];
    const int cluster = static_cast<int>(rng() % 6);
    b[0] = 10.f * cluster + u(rng) * 2;
    b[1] = 3.f * (cluster % 2) + u(rng) * 2;
    b[2] = u(rng);
    b[3] = 1.f + 3.f * u(rng);
    b[4] = 0.5f + 2.f * u(rng);
    b[5] = 1.5f;
    b[6] = (u(rng) - 0.5f) * 6.3f;
    for (int64_t d = 7; d < dim; ++d) b[d] = u(rng);
    scores[i] = std::round(u(rng) * 20.f) / 20.f;  // ties
    labels[i] = static_cast<int32_t>(rng() % 3);
  }
  return boxes;
}

}  // namespace

TEST(BevIou, MatchesExactClipping) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  int compared = 0;
  for (int rep = 0; rep < 3000; ++rep) {
    const float a[7] = {u(rng) * 3, u(rng) * 3, 0, 0.5f + 3 * u(rng), 0.5f + 2 * u(rng), 1, (u(rng) - 0.5f) * 6.3f};
    const float b[7] = {u(rng) * 3, u(rng) * 3, 0, 0.5f + 3 * u(rng), 0.5f + 2 * u(rng), 1, (u(rng) - 0.5f) * 6.3f};
    const double want = exact_bev_iou(a, b);
    const float got = bev_iou(a, b);
    ASSERT_TRUE(std::isfinite(got));
    // The 1e-2 inside margin counts corners just outside the other box; away from that
    // (corner clearances > 2 cm) the polygon is the exact intersection.
    EXPECT_NEAR(got, want, 0.02) << rep;
    ++compared;
  }
  EXPECT_EQ(compared, 3000);
  const float box[7] = {1, 2, 0, 4, 2, 1, 0.3f};
  EXPECT_NEAR(bev_iou(box, box), 1.0, 1e-5);
  const float square[7] = {0, 0, 0, 2, 2, 1, 0}, turned[7] = {0, 0, 0, 2, 2, 1, 1.5707963f};
  EXPECT_NEAR(bev_iou(square, turned), 1.0, 1e-4);
  const float far[7] = {50, 0, 0, 2, 2, 1, 0};
  EXPECT_EQ(bev_iou(square, far), 0.f);
  const float half[7] = {1, 0, 0, 2, 2, 1, 0};  // overlap 2 of union 6
  EXPECT_NEAR(bev_iou(square, half), 1.0 / 3.0, 1e-5);
}

TEST(BoxNMS, OptimisedMatchesReference) {
  for (int64_t k : {0, 1, 2, 63, 64, 65, 500}) {
    for (int mode = 0; mode < 4; ++mode) {
      std::vector<float> scores;
      std::vector<int32_t> labels;
      const int64_t dim = 9;
      auto boxes = clustered_boxes(k, dim, static_cast<uint32_t>(k * 4 + mode), scores, labels);
      if (k > 3) scores[3] = NAN;
      NmsAttrs a;
      a.circle = mode == 1;
      a.min_radius = 1.5f;
      a.per_class = mode == 2;
      a.iou_threshold = mode == 3 ? 0.f : 0.2f;  // threshold 0: every pair suppresses (no bound)
      a.max_output = 40;
      std::vector<int32_t> want(40, -7), got(40, -9);
      const int64_t nw = box_nms_ref(boxes.data(), scores.data(), labels.data(), k, dim, a, want.data());
      const int64_t ng = box_nms(boxes.data(), scores.data(), labels.data(), k, dim, a, got.data());
      ASSERT_EQ(nw, ng) << k << " " << mode;
      for (int64_t i = 0; i < nw; ++i) EXPECT_EQ(want[i], got[i]);
      for (int64_t i = 0; i < nw; ++i) EXPECT_NE(want[i], 3);  // the NaN score
    }
  }
}

TEST(BoxNMS, HandExampleThroughASession) {
  // Box 1 overlaps box 0 (IoU 1/3 >= 0.2) and has the lower score; box 2 is apart.
  const std::vector<float> boxes = {0, 0, 0, 2, 2, 1, 0, 1, 0, 0, 2, 2, 1, 0, 10, 0, 0, 2, 2, 1, 0};
  auto out = run_pointrt_node("BoxNMS",
                              {{"boxes", make_tensor<float>({1, 3, 7}, boxes)},
                               {"scores", make_tensor<float>({1, 3}, {0.9f, 0.8f, 0.5f})},
                               {"labels", make_tensor<int64_t>({1, 3}, {4, 4, 5})}},
                              {"num", "boxes_out", "scores_out", "labels_out", "indices"},
                              [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "max_output", 4); });
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].data_as<int32_t>()[0], 2);
  EXPECT_EQ(out[1].shape(), (Shape{1, 4, 7}));
  EXPECT_EQ(std::vector<int32_t>(out[4].data_as<int32_t>(), out[4].data_as<int32_t>() + 4),
            (std::vector<int32_t>{0, 2, -1, -1}));
  EXPECT_EQ(std::vector<int32_t>(out[3].data_as<int32_t>(), out[3].data_as<int32_t>() + 4),
            (std::vector<int32_t>{4, 5, -1, -1}));
  EXPECT_EQ(out[1].data_as<float>()[7], 10.f);
  EXPECT_EQ(out[2].data_as<float>()[2], 0.f);
  // Circle NMS: squared distance 1 <= 1.0 suppresses box 1; a count of 2 leaves box 2 out.
  out = run_pointrt_node("BoxNMS",
                         {{"boxes", make_tensor<float>({1, 3, 7}, boxes)},
                          {"scores", make_tensor<float>({1, 3}, {0.9f, 0.8f, 0.5f})},
                          {"labels", Tensor()},
                          {"count", make_tensor<int32_t>({1}, {2})}},
                         {"num", "boxes_out", "scores_out", "labels_out"}, [](onnx::NodeProto& n) {
                           ModelBuilder::attr_string(n, "mode", "circle");
                           ModelBuilder::attr_float(n, "min_radius", 1.f);
                         });
  EXPECT_EQ(out[0].data_as<int32_t>()[0], 1);
  EXPECT_EQ(out[3].data_as<int32_t>()[0], 0);
}

TEST(BoxNMS, Errors) {
  auto scores = make_tensor<float>({1, 2}, {1, 1});
  expect_error_with(
      [&] {
        run_pointrt_node("BoxNMS",
                         {{"boxes", make_tensor<float>({1, 2, 6}, std::vector<float>(12))}, {"scores", scores}},
                         {"num", "b", "s", "l"}, nullptr);
      },
      {"node0", "'boxes'", "D >= 7"});
  expect_error_with(
      [&] {
        run_pointrt_node("BoxNMS",
                         {{"boxes", make_tensor<float>({1, 2, 7}, std::vector<float>(14))},
                          {"scores", scores},
                          {"labels", Tensor()},
                          {"count", make_tensor<int32_t>({1}, {3})}},
                         {"num", "b", "s", "l"}, nullptr);
      },
      {"node0", "'count'", "count 3", "K = 2"});
  expect_error_with(
      [&] {
        run_pointrt_node(
            "BoxNMS", {{"boxes", make_tensor<float>({1, 2, 7}, std::vector<float>(14))}, {"scores", scores}},
            {"num", "b", "s", "l"}, [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "mode", "circle"); });
      },
      {"node0", "min_radius"});
  expect_error_with(
      [&] {
        run_pointrt_node("BoxNMS",
                         {{"boxes", make_tensor<float>({1, 2, 7}, std::vector<float>(14))},
                          {"scores", make_tensor<float>({1, 3}, {1, 1, 1})}},
                         {"num", "b", "s", "l"}, nullptr);
      },
      {"node0", "'scores'", "[1, 2]"});
}
