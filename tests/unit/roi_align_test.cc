// RoiAlign: the shared-sample kernel against the per-element reference (avg and max, both
// coordinate modes, sampling ratios, ROIs partly outside the image, 1x1 and odd outputs), a
// hand-computed bilinear case, and the errors.
#include <gtest/gtest.h>

#include <random>

#include "ops/onnx/image/roi_align.h"
#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::image;
using namespace pointrt::test;

TEST(RoiAlign, KernelMatchesReference) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> v(-1, 1), c(-3, 12);
  Tensor x = Tensor::allocate(DType::kFloat32, {2, 3, 9, 11});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = v(rng);
  Tensor rois = Tensor::allocate(DType::kFloat32, {7, 4});
  for (int64_t i = 0; i < 7; ++i) {
    float x1 = c(rng), y1 = c(rng);
    float* r = rois.data_as<float>() + i * 4;
    r[0] = x1, r[1] = y1, r[2] = x1 + std::abs(c(rng)) / 2, r[3] = y1 + std::abs(c(rng)) / 2;
  }
  const std::vector<int64_t> batch = {0, 1, 1, 0, 1, 0, 0};
  for (bool max_mode : {false, true})
    for (bool half : {false, true})
      for (int64_t ratio : {0, 1, 3})
        for (auto [oh, ow] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {7, 2}}) {
          RoiAlignParams p;
          p.max_mode = max_mode, p.half_pixel = half, p.sampling_ratio = ratio, p.out_h = oh, p.out_w = ow;
          p.spatial_scale = 0.75f;
          Tensor fast = Tensor::allocate(DType::kFloat32, {7, 3, oh, ow}), ref = fast.clone();
          roi_align_cpu(x, rois, batch, p, fast);
          roi_align_ref(x, rois, batch, p, ref);
          for (int64_t i = 0; i < fast.numel(); ++i)
            ASSERT_NEAR(fast.data_as<float>()[i], ref.data_as<float>()[i], 1e-6)
                << "max " << max_mode << " half " << half << " ratio " << ratio << " at " << i;
        }
}

TEST(RoiAlign, OneBilinearSampleByHand) {
  // 2x2 image [[0, 1], [2, 3]], ROI (0, 0)-(1, 1) with output_half_pixel: size 1, one sample at
  // (0.5, 0.5) -> the mean of the four pixels.
  NodeCase c{"RoiAlign",
             10,
             "",
             {{"x", iota_tensor({1, 1, 2, 2})},
              {"rois", tensor_of<float>({1, 4}, {0, 0, 1, 1})},
              {"b", tensor_of<int64_t>({1}, {0})}}};
  EXPECT_FLOAT_EQ(run_node(c)[0].data_as<float>()[0], 1.5f);
  c.inputs[2].second = tensor_of<int64_t>({1}, {1});
  EXPECT_NE(node_error(c).find("batch_indices holds 1 at position 0, outside [0, 0]"), std::string::npos)
      << node_error(c);
  c.inputs[2].second = tensor_of<int64_t>({1}, {0});
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "mode", "min"); };
  EXPECT_NE(node_error(c).find("attribute 'mode' is 'min'"), std::string::npos);
}
