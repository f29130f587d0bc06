// NonMaxSuppression: the spec example and options, centre-point boxes, errors.
#include <gtest/gtest.h>

#include "ops/onnx/image/non_max_suppression.h"
#include "unit/image/image_test_util.h"

using namespace pointrt;
using namespace pointrt::image;
using namespace pointrt::image::test_helpers;

namespace {

// NonMaxSuppression

TEST(NonMaxSuppression, SpecExampleAndOptions) {
  // The ONNX example: 6 boxes, one class.
  Tensor boxes = floats(
      {1, 6, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, -0.1f, 1, 0.9f, 0, 10, 1, 11, 0, 10.1f, 1, 11.1f, 0, 100, 1, 101});
  Tensor scores = floats({1, 1, 6}, {0.9f, 0.75f, 0.6f, 0.95f, 0.5f, 0.3f});
  Tensor max_out = int64s({1}, {3});
  Tensor iou = floats({1}, {0.5f});
  Tensor score_th = floats({1}, {0.0f});
  NodeHarness h("NonMaxSuppression", 11, {}, {boxes, scores, max_out, iou, score_th});
  Tensor y = h.run({boxes, scores, max_out, iou, score_th});
  ASSERT_EQ(y.shape(), (Shape{3, 3}));
  const int64_t e[9] = {0, 0, 3, 0, 0, 0, 0, 0, 5};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(y.data_as<int64_t>()[i], e[i]);
  // No max_output_boxes_per_class: nothing selected (default 0).
  EXPECT_EQ(h.run({boxes, scores, std::nullopt, iou, score_th}).shape(), (Shape{0, 3}));
  // Score threshold 0.55 drops boxes 4 and 5; iou 0 absent -> any overlap suppresses.
  Tensor y2 = h.run({boxes, scores, int64s({1}, {10}), std::nullopt, floats({1}, {0.55f})});
  ASSERT_EQ(y2.shape(), (Shape{2, 3}));
  EXPECT_EQ(y2.data_as<int64_t>()[2], 3);
  EXPECT_EQ(y2.data_as<int64_t>()[5], 0);
  // Equal scores: lower index first.
  Tensor tie = floats({1, 1, 6}, {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f});
  Tensor y3 = h.run({boxes, tie, int64s({1}, {10}), floats({1}, {0.5f}), std::nullopt});
  ASSERT_EQ(y3.shape(), (Shape{3, 3}));
  EXPECT_EQ(y3.data_as<int64_t>()[2], 0);
  EXPECT_EQ(y3.data_as<int64_t>()[5], 3);
  EXPECT_EQ(y3.data_as<int64_t>()[8], 5);
}

TEST(NonMaxSuppression, CenterPointBoxMatchesCorners) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, 10), w(0.5f, 3);
  const int B = 2, N = 40, C = 3;
  Tensor corners = Tensor::allocate(DType::kFloat32, {B, N, 4}), centers = Tensor::allocate(DType::kFloat32, {B, N, 4});
  for (int i = 0; i < B * N; ++i) {
    // Power-of-two-friendly values so that both encodings give bit-identical corners.
    float x = std::round(u(rng) * 4) / 4, y = std::round(u(rng) * 4) / 4;
    float bw = std::round(w(rng) * 4) / 2, bh = std::round(w(rng) * 4) / 2;
    float* c = corners.data_as<float>() + 4 * i;
    float* m = centers.data_as<float>() + 4 * i;
    c[0] = y - bh / 2;
    c[1] = x - bw / 2;
    c[2] = y + bh / 2;
    c[3] = x + bw / 2;
    m[0] = x;
    m[1] = y;
    m[2] = bw;
    m[3] = bh;
  }
  Tensor scores = random_values(DType::kFloat32, {B, C, N}, 6, 0, 1);
  auto a = non_max_suppression(corners.data_as<float>(), scores.data_as<float>(), B, C, N, false, 7, 0.3f, true, 0.2f);
  auto b = non_max_suppression(centers.data_as<float>(), scores.data_as<float>(), B, C, N, true, 7, 0.3f, true, 0.2f);
  EXPECT_EQ(a, b);
  EXPECT_FALSE(a.empty());
}

TEST(NonMaxSuppression, ErrorPaths) {
  Tensor boxes = floats({1, 2, 4}, {0, 0, 1, 1, 0, 0, 2, 2});
  Tensor scores = floats({1, 1, 2}, {0.5f, 0.6f});
  NodeHarness h("NonMaxSuppression", 10, {}, {boxes, scores});
  EXPECT_THROW(h.run({floats({1, 2, 3}, {0, 0, 1, 0, 0, 2}), scores}), Error);         // last dim 3
  EXPECT_THROW(h.run({boxes, floats({1, 1, 3}, {0.1f, 0.2f, 0.3f})}), Error);          // box count mismatch
  EXPECT_THROW(h.run({boxes, scores, int64s({1}, {2}), floats({1}, {1.5f})}), Error);  // iou > 1
  EXPECT_THROW(h.run({boxes, scores, floats({1}, {2})}), Error);                       // max_out not int64
  EXPECT_THROW(NodeHarness("NonMaxSuppression", 11, {{"center_point_box", int_attr(2)}}, {boxes, scores}), Error);
  Tensor y = h.run({boxes, scores, int64s({}, {5}), floats({}, {0.1f})});  // scalar inputs
  EXPECT_EQ(y.shape(), (Shape{1, 3}));                                     // the two boxes overlap with IoU 0.25 > 0.1
}

}  // namespace
