// Resize (and Upsample): the optimised kernel against the reference in every mode, aspect-ratio
// policies, element types, known values, prepared plans, crops, optional inputs, old opsets, errors.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/onnx/image/resize.h"
#include "unit/image/image_test_util.h"

using namespace pointrt;
using namespace pointrt::image;
using namespace pointrt::image::test_helpers;

namespace {

// Resize: optimised vs reference

struct ResizeCase {
  Shape in;
  std::vector<float> scales;  // empty -> use sizes
  std::vector<int64_t> sizes;
  std::vector<int64_t> axes;
};

void check_resize(const ResizeAttrs& a, const ResizeCase& rc, DType dtype, uint32_t seed, const std::string& label) {
  Tensor x = random_values(dtype, rc.in, seed);
  std::optional<Tensor> scales, sizes, roi;
  if (!rc.scales.empty())
    scales = floats({static_cast<int64_t>(rc.scales.size())}, rc.scales);
  else
    sizes = int64s({static_cast<int64_t>(rc.sizes.size())}, rc.sizes);
  ResizeAttrs at = a;
  at.axes = rc.axes;
  const size_t naxes = rc.axes.empty() ? rc.in.size() : rc.axes.size();
  if (at.coord == ResizeAttrs::Coord::kTfCropAndResize) {
    std::vector<float> r;
    for (size_t i = 0; i < naxes; ++i) r.push_back(i % 2 ? 0.1f : -0.2f);  // starts, partly outside
    for (size_t i = 0; i < naxes; ++i) r.push_back(i % 2 ? 0.8f : 1.15f);  // ends
    roi = floats({static_cast<int64_t>(2 * naxes)}, r);
  }
  ResizeGeometry g = resolve_resize_geometry(at, x.shape(), roi ? &*roi : nullptr, scales ? &*scales : nullptr,
                                             sizes ? &*sizes : nullptr, "test");
  ResizePlan plan = make_resize_plan(at, g);
  Tensor yr = Tensor::allocate(dtype, g.out);
  resize_reference(at, g, x, yr, "test");
  const double rtol = dtype == DType::kFloat16 ? 2e-3 : dtype == DType::kFloat64 ? 1e-12 : 2e-5;
  for (ResizePath path : {ResizePath::kAuto, ResizePath::kSeparablePasses, ResizePath::kPlanes2D}) {
    Tensor y = Tensor::allocate(dtype, g.out);
    resize_run(at, plan, x, y, "test", path);
    // Integer outputs may differ by one where the float result sits on an integer boundary
    // (truncation of x.9999 vs x.0).
    test::expect_close(y, yr, test::Tol{1e-5, rtol}.with_int_atol(1),
                       label + " path " + std::to_string(int(path)) + " in " + shape_to_string(rc.in) + " out " +
                           shape_to_string(g.out) + " dtype " + dtype_name(dtype));
  }
}

std::vector<ResizeCase> resize_cases() {
  return {
      {{1, 1, 1, 1}, {1, 1, 3, 2}, {}, {}},              // single pixel up
      {{2, 3, 5, 7}, {1, 1, 2, 2}, {}, {}},              // 2x up, odd sizes
      {{1, 2, 9, 8}, {1, 1, 0.5f, 0.6f}, {}, {}},        // down, non-integer
      {{1, 1, 4, 6}, {1, 1, 1.7f, 0.35f}, {}, {}},       // mixed up/down
      {{1, 1, 3, 5}, {}, {1, 1, 7, 2}, {}},              // sizes
      {{1, 1, 6, 5}, {}, {1, 1, 1, 1}, {}},              // to a single pixel
      {{11}, {2.5f}, {}, {}},                            // 1-D
      {{2, 3, 4, 5, 3}, {1, 1.5f, 1, 0.5f, 2}, {}, {}},  // 5-D, a non-spatial axis too
      {{2, 3, 5, 7}, {}, {4, 9}, {3, 1}},                // axes (reordered), sizes
      {{2, 3, 5, 7}, {3.0f, 0.8f}, {}, {-2, 0}},         // negative axes, scales
  };
}

TEST(Resize, OptimisedMatchesReferenceAllModes) {
  using M = ResizeAttrs::Mode;
  using C = ResizeAttrs::Coord;
  using NM = ResizeAttrs::Nearest;
  const std::vector<C> coords = {C::kHalfPixel,  C::kHalfPixelSymmetric, C::kPytorchHalfPixel, C::kAlignCorners,
                                 C::kAsymmetric, C::kTfHalfPixelForNN,   C::kTfCropAndResize};
  uint32_t seed = 1;
  for (M mode : {M::kNearest, M::kLinear, M::kCubic})
    for (C coord : coords)
      for (int exclude = 0; exclude < 2; ++exclude)
        for (int antialias = 0; antialias < 2; ++antialias) {
          if (mode == M::kNearest && antialias) continue;
          std::vector<NM> nms = {NM::kRoundPreferFloor};
          if (mode == M::kNearest)
            nms = {NM::kRoundPreferFloor, NM::kRoundPreferCeil, NM::kFloor, NM::kCeil, NM::kSimple};
          for (NM nm : nms) {
            ResizeAttrs a;
            a.mode = mode;
            a.coord = coord;
            a.nearest = nm;
            a.exclude_outside = exclude;
            a.antialias = antialias;
            a.cubic_a = exclude ? -0.5 : -0.75;
            a.extrapolation_value = 7.5;
            for (const ResizeCase& rc : resize_cases())
              check_resize(a, rc, DType::kFloat32, seed++,
                           "mode " + std::to_string(int(mode)) + " coord " + std::to_string(int(coord)) + " nearest " +
                               std::to_string(int(nm)) + " exclude " + std::to_string(exclude) + " antialias " +
                               std::to_string(antialias));
          }
        }
}

TEST(Resize, AspectRatioPolicies) {
  for (auto policy : {ResizeAttrs::AspectPolicy::kNotLarger, ResizeAttrs::AspectPolicy::kNotSmaller})
    for (auto mode : {ResizeAttrs::Mode::kNearest, ResizeAttrs::Mode::kLinear, ResizeAttrs::Mode::kCubic}) {
      ResizeAttrs a;
      a.mode = mode;
      a.policy = policy;
      check_resize(a, {{1, 2, 5, 7}, {}, {1, 2, 9, 4}, {}}, DType::kFloat32, 3, "policy");
      check_resize(a, {{1, 2, 5, 7}, {}, {3, 10}, {2, 3}}, DType::kFloat32, 4, "policy axes");
    }
  ResizeAttrs a;
  a.policy = ResizeAttrs::AspectPolicy::kNotLarger;
  Tensor sizes = int64s({4}, {1, 1, 10, 10});
  // Without axes the policy takes the min over every axis, N and C included (scale 1).
  ResizeGeometry g = resolve_resize_geometry(a, {1, 1, 4, 8}, nullptr, nullptr, &sizes, "t");
  EXPECT_EQ(g.out, (Shape{1, 1, 4, 8}));
  a.axes = {2, 3};
  Tensor sizes2 = int64s({2}, {10, 10});
  g = resolve_resize_geometry(a, {1, 1, 4, 8}, nullptr, nullptr, &sizes2, "t");
  EXPECT_EQ(g.out, (Shape{1, 1, 5, 10}));  // scale min(2.5, 1.25) = 1.25 on both axes
}

TEST(Resize, OtherElementTypes) {
  for (DType dt : {DType::kFloat64, DType::kFloat16, DType::kUInt8, DType::kInt32, DType::kInt64})
    for (auto mode : {ResizeAttrs::Mode::kNearest, ResizeAttrs::Mode::kLinear, ResizeAttrs::Mode::kCubic}) {
      ResizeAttrs a;
      a.mode = mode;
      check_resize(a, {{1, 2, 5, 7}, {1, 1, 1.5f, 0.7f}, {}, {}}, dt, 11, "dtype");
    }
}

TEST(Resize, NearestIntegerScaleIsRepeat) {
  ResizeAttrs a;  // nearest, half_pixel, round_prefer_floor
  Tensor x = random_values(DType::kFloat32, {1, 1, 3, 4}, 5);
  Tensor s = floats({4}, {1, 1, 2, 3});
  ResizePlan plan = make_resize_plan(a, resolve_resize_geometry(a, x.shape(), nullptr, &s, nullptr, "t"));
  Tensor y = Tensor::allocate(DType::kFloat32, plan.geometry.out);
  resize_run(a, plan, x, y, "t");
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 12; ++j) EXPECT_EQ(y.data_as<float>()[i * 12 + j], x.data_as<float>()[(i / 2) * 4 + j / 3]);
}

TEST(Resize, BilinearHalfPixelKnownValues) {
  // 1x1x2x2 -> 4x4 bilinear half_pixel (the ONNX example, test_resize_upsample_scales_linear).
  NodeHarness h("Resize", 13, {{"mode", string_attr("linear")}},
                {floats({1, 1, 2, 2}, {1, 2, 3, 4}), std::nullopt, floats({4}, {1, 1, 2, 2})});
  Tensor y = h.run({floats({1, 1, 2, 2}, {1, 2, 3, 4}), std::nullopt, floats({4}, {1, 1, 2, 2})});
  const float expect[16] = {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4};
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(y.data_as<float>()[i], expect[i]) << i;
}

TEST(Resize, PreparedPlanAndShapeChange) {
  // Scales constant and the input shape declared: the plan is built at prepare; a run with a
  // different shape must still be right (plan rebuilt).
  Tensor s = floats({4}, {1, 1, 2, 0.5f});
  Tensor x0 = random_values(DType::kFloat32, {1, 2, 4, 6}, 9);
  NodeHarness h("Resize", 13, {{"mode", string_attr("linear")}}, {x0, std::nullopt, s}, {false, false, true},
                Shape{1, 2, 4, 6});
  for (const Shape& shape : {Shape{1, 2, 4, 6}, Shape{2, 1, 3, 9}}) {
    Tensor x = random_values(DType::kFloat32, shape, 10);
    Tensor y = h.run({x, std::nullopt, s});
    ResizeAttrs a;
    a.mode = ResizeAttrs::Mode::kLinear;
    ResizeGeometry g = resolve_resize_geometry(a, shape, nullptr, &s, nullptr, "t");
    Tensor yr = Tensor::allocate(DType::kFloat32, g.out);
    resize_reference(a, g, x, yr, "t");
    test::expect_close(y, yr, test::Tol{1e-6, 1e-5}, "shape change");
  }
}

TEST(Resize, CropOutsideGivesExtrapolationValue) {
  Tensor x = random_values(DType::kFloat32, {1, 1, 3, 3}, 14);
  Tensor roi = floats({8}, {0, 0, 1.5f, 0, 1, 1, 2.5f, 1});  // H crop entirely below the input
  NodeHarness h("Resize", 13,
                {{"coordinate_transformation_mode", string_attr("tf_crop_and_resize")},
                 {"mode", string_attr("linear")},
                 {"extrapolation_value", float_attr(-3.25f)}},
                {x, roi, floats({4}, {1, 1, 2, 1})});
  Tensor y = h.run({x, roi, floats({4}, {1, 1, 2, 1})});
  ASSERT_EQ(y.shape(), (Shape{1, 1, 6, 3}));
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.data_as<float>()[i], -3.25f);
}

TEST(Resize, OptionalInputsEmptyTensors) {
  // Opset 11 style: roi and scales present but empty, sizes given.
  Tensor x = random_values(DType::kFloat32, {1, 1, 3, 3}, 12);
  Tensor empty = Tensor::allocate(DType::kFloat32, {0});
  NodeHarness h("Resize", 11, {{"mode", string_attr("nearest")}}, {x, empty, empty, int64s({4}, {1, 1, 6, 2})});
  Tensor y = h.run({x, empty, empty, int64s({4}, {1, 1, 6, 2})});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 6, 2}));
}

TEST(Resize, Opset10AndUpsample) {
  Tensor x = floats({1, 1, 2, 2}, {1, 2, 3, 4});
  NodeHarness r10("Resize", 10, {{"mode", string_attr("nearest")}}, {x, floats({4}, {1, 1, 2, 3})});
  Tensor y = r10.run({x, floats({4}, {1, 1, 2, 3})});
  ASSERT_EQ(y.shape(), (Shape{1, 1, 4, 6}));
  const float e[24] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
  for (int i = 0; i < 24; ++i) EXPECT_EQ(y.data_as<float>()[i], e[i]);
  NodeHarness u7("Upsample", 7, {{"mode", string_attr("nearest")}, {"scales", floats_attr({1, 1, 2, 3})}}, {x});
  Tensor y7 = u7.run({x});
  for (int i = 0; i < 24; ++i) EXPECT_EQ(y7.data_as<float>()[i], e[i]);
  NodeHarness u9("Upsample", 9, {{"mode", string_attr("linear")}}, {x, floats({4}, {1, 1, 2, 2})});
  Tensor y9 = u9.run({x, floats({4}, {1, 1, 2, 2})});
  // asymmetric linear: row 0 = 1, 1.5, 2, 2 (edge clamped)
  EXPECT_FLOAT_EQ(y9.data_as<float>()[1], 1.5f);
  EXPECT_FLOAT_EQ(y9.data_as<float>()[3], 2.0f);
  // Upsample only enlarges.
  EXPECT_THROW(u9.run({x, floats({4}, {1, 1, 0.5f, 2})}), Error);
}

TEST(Resize, ErrorPaths) {
  Tensor x = random_values(DType::kFloat32, {1, 1, 3, 3}, 13);
  NodeHarness h("Resize", 13, {{"mode", string_attr("linear")}},
                {x, std::nullopt, floats({4}, {1, 1, 2, 2}), std::nullopt});
  // both scales and sizes
  try {
    h.run({x, std::nullopt, floats({4}, {1, 1, 2, 2}), int64s({4}, {1, 1, 6, 6})});
    ADD_FAILURE() << "no error for scales + sizes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("both 'scales'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node 'n0'"), std::string::npos) << e.what();
  }
  // wrong rank of scales
  try {
    h.run({x, std::nullopt, floats({2}, {2, 2}), std::nullopt});
    ADD_FAILURE() << "no error for short scales";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'scales' has shape [2], expected [4]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(h.run({x, std::nullopt, std::nullopt, std::nullopt}), Error);                // neither
  EXPECT_THROW(h.run({x, std::nullopt, floats({4}, {1, 1, 0, 2}), std::nullopt}), Error);   // zero scale
  EXPECT_THROW(h.run({x, std::nullopt, floats({4}, {1, 1, -2, 2}), std::nullopt}), Error);  // negative
  EXPECT_THROW(h.run({x, std::nullopt, std::nullopt, int64s({4}, {1, 1, -1, 2})}), Error);  // negative size
  EXPECT_THROW(h.run({x, std::nullopt, std::nullopt, int64s({3}, {1, 1, 2})}), Error);      // short sizes
  // tf_crop_and_resize without roi
  NodeHarness crop("Resize", 13, {{"coordinate_transformation_mode", string_attr("tf_crop_and_resize")}},
                   {x, std::nullopt, floats({4}, {1, 1, 2, 2})});
  EXPECT_THROW(crop.run({x, std::nullopt, floats({4}, {1, 1, 2, 2})}), Error);
  EXPECT_THROW(crop.run({x, floats({4}, {0, 0, 1, 1}), floats({4}, {1, 1, 2, 2})}), Error);  // roi too short
  // bad attributes are reported at prepare
  EXPECT_THROW(NodeHarness("Resize", 13, {{"mode", string_attr("bilinearx")}}, {x}), Error);
  EXPECT_THROW(NodeHarness("Resize", 13, {{"coordinate_transformation_mode", string_attr("tf")}}, {x}), Error);
  EXPECT_THROW(NodeHarness("Resize", 13, {{"nearest_mode", string_attr("round")}}, {x}), Error);
  EXPECT_THROW(NodeHarness("Resize", 18, {{"antialias", int_attr(1)}}, {x}), Error);  // nearest + antialias
  EXPECT_THROW(NodeHarness("Resize", 18, {{"keep_aspect_ratio_policy", string_attr("fit")}}, {x}), Error);
  EXPECT_THROW(NodeHarness("Resize", 10, {{"mode", string_attr("cubic")}}, {x}), Error);  // cubic needs 11
  // axes out of range / repeated
  NodeHarness ax("Resize", 18, {{"axes", ints_attr({2, 2})}}, {x});
  EXPECT_THROW(ax.run({x, std::nullopt, floats({2}, {2, 2})}), Error);
  NodeHarness ax2("Resize", 18, {{"axes", ints_attr({4})}}, {x});
  EXPECT_THROW(ax2.run({x, std::nullopt, floats({1}, {2})}), Error);
  // a constant bad input fails already at prepare
  EXPECT_THROW(
      NodeHarness("Resize", 13, {}, {x, std::nullopt, floats({3}, {1, 2, 2})}, {false, false, true}, Shape{1, 1, 3, 3}),
      Error);
  // sizes must be int64
  Tensor sz32 = Tensor::allocate(DType::kInt32, {4});
  EXPECT_THROW(h.run({x, std::nullopt, std::nullopt, sz32}), Error);
  // resizing an empty axis to a non-empty one
  Tensor e = Tensor::allocate(DType::kFloat32, {1, 1, 0, 3});
  EXPECT_THROW(h.run({e, std::nullopt, std::nullopt, int64s({4}, {1, 1, 2, 3})}), Error);
  // empty in, empty out is fine
  Tensor y = h.run({e, std::nullopt, floats({4}, {1, 1, 2, 2}), std::nullopt});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 0, 6}));
}

TEST(Resize, Bilinear2xSegmentationHeadCorners) {
  // The segmentation-head case (its time: build/pointrt_bench --benchmark_filter=Resize2x):
  // with half_pixel a 2x upsample's corner pixel equals the input's corner, in both modes.
  ResizeAttrs a;
  a.mode = ResizeAttrs::Mode::kLinear;
  Tensor x = random_values(DType::kFloat32, {1, 64, 128, 128}, 21);
  Tensor s = floats({4}, {1, 1, 2, 2});
  for (auto mode : {ResizeAttrs::Mode::kLinear, ResizeAttrs::Mode::kNearest}) {
    a.mode = mode;
    ResizePlan plan = make_resize_plan(a, resolve_resize_geometry(a, x.shape(), nullptr, &s, nullptr, "t"));
    Tensor y = Tensor::allocate(DType::kFloat32, plan.geometry.out);
    resize_run(a, plan, x, y, "t");
    EXPECT_EQ(y.shape(), (Shape{1, 64, 256, 256}));
    EXPECT_EQ(y.data_as<float>()[0], x.data_as<float>()[0]);
    EXPECT_EQ(y.data_as<float>()[y.numel() - 1], x.data_as<float>()[x.numel() - 1]);
  }
}

}  // namespace
