// GridSample: optimised against reference, the identity grid, errors (opset 16 and 20 names).
#include <gtest/gtest.h>

#include <cmath>

#include "ops/onnx/image/grid_sample.h"
#include "unit/image/image_test_util.h"

using namespace pointrt;
using namespace pointrt::image;
using namespace pointrt::image::test_helpers;

namespace {

// GridSample

Tensor random_grid(const Shape& shape, uint32_t seed) {
  Tensor g = random_values(DType::kFloat32, shape, seed, -1.3, 1.3);
  // Sprinkle exact borders, centres and half-pixel positions.
  const float special[] = {-1.f, 1.f, 0.f, -1.25f, 1.25f, 0.5f, -3.7f, 2.9f};
  for (int64_t i = 0; i < g.numel(); i += 7) g.data_as<float>()[i] = special[(i / 7) % 8];
  return g;
}

TEST(GridSample, OptimisedMatchesReference) {
  using M = GridSampleAttrs::Mode;
  using P = GridSampleAttrs::Padding;
  struct Case {
    Shape x, grid;
  };
  const std::vector<Case> cases = {
      {{1, 1, 1, 1}, {1, 2, 3, 2}},        // 1x1 input
      {{2, 3, 5, 7}, {2, 4, 9, 2}},        // odd sizes
      {{1, 2, 4, 4}, {1, 1, 1, 2}},        // one output point
      {{1, 2, 3, 4, 5}, {1, 2, 3, 4, 3}},  // 3-D (opset 20)
      {{2, 1, 9}, {2, 5, 1}},              // 1-D (opset 20)
      {{1, 1, 1, 6}, {1, 3, 3, 2}},        // 1-high, reflection with a single row
  };
  uint32_t seed = 100;
  for (M mode : {M::kNearest, M::kLinear, M::kCubic})
    for (P pad : {P::kZeros, P::kBorder, P::kReflection})
      for (int ac = 0; ac < 2; ++ac)
        for (const Case& c : cases) {
          GridSampleAttrs a;
          a.mode = mode;
          a.padding = pad;
          a.align_corners = ac;
          Tensor x = random_values(DType::kFloat32, c.x, seed++);
          Tensor g = random_grid(c.grid, seed++);
          Shape out = grid_sample_output_shape(c.x, c.grid, 20, "t");
          Tensor y = Tensor::allocate(DType::kFloat32, out), yr = Tensor::allocate(DType::kFloat32, out);
          grid_sample_run(a, x, g, y);
          grid_sample_reference(a, x, g, yr);
          test::expect_close(y, yr, test::Tol{1e-5, 1e-5},
                             "gridsample mode " + std::to_string(int(mode)) + " pad " + std::to_string(int(pad)) +
                                 " ac " + std::to_string(ac) + " x " + shape_to_string(c.x));
        }
}

TEST(GridSample, IdentityGridReproducesInput) {
  // align_corners=1 with a grid at the pixel centres returns the input exactly (linear).
  Tensor x = random_values(DType::kFloat32, {1, 2, 3, 5}, 7);
  Tensor g = Tensor::allocate(DType::kFloat32, {1, 3, 5, 2});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      g.data_as<float>()[(i * 5 + j) * 2 + 0] = -1.f + 2.f * j / 4;
      g.data_as<float>()[(i * 5 + j) * 2 + 1] = -1.f + 2.f * i / 2;
    }
  NodeHarness h("GridSample", 16, {{"align_corners", int_attr(1)}}, {x, g});
  Tensor y = h.run({x, g});
  test::expect_close(y, x, test::Tol{1e-6, 1e-6}, "identity grid");
}

TEST(GridSample, ErrorPaths) {
  Tensor x = random_values(DType::kFloat32, {1, 1, 2, 3, 4}, 1);
  Tensor g3 = random_grid({1, 2, 2, 2, 3}, 2);
  NodeHarness h16("GridSample", 16, {}, {x, g3});
  EXPECT_THROW(h16.run({x, g3}), Error);  // 5-D needs opset 20
  NodeHarness h20("GridSample", 20, {}, {x, g3});
  EXPECT_EQ(h20.run({x, g3}).shape(), (Shape{1, 1, 2, 2, 2}));
  Tensor bad = random_grid({1, 2, 2, 2, 2}, 3);  // last dim must be 3
  EXPECT_THROW(h20.run({x, bad}), Error);
  EXPECT_THROW(NodeHarness("GridSample", 16, {{"mode", string_attr("linear")}}, {x, g3}), Error);    // 20's name
  EXPECT_THROW(NodeHarness("GridSample", 20, {{"mode", string_attr("bilinear")}}, {x, g3}), Error);  // 16's name
  EXPECT_THROW(NodeHarness("GridSample", 20, {{"padding_mode", string_attr("wrap")}}, {x, g3}), Error);
}

}  // namespace
