// LayerNormalization and InstanceNormalization against their references; errors.
#include <gtest/gtest.h>

#include "ops/onnx/reduce/normalization.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

TEST(Normalization, LayerNormMatchesReference) {
  uint32_t seed = 51;
  for (const Shape& s : awkward_shapes()) {
    if (s.empty()) continue;
    for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
      Shape norm(s.begin() + axis, s.end()), stat = s;
      for (size_t i = axis; i < s.size(); ++i) stat[i] = 1;
      Tensor x = random_tensor(DType::kFloat32, s, seed++);
      Tensor scale = random_tensor(DType::kFloat32, norm, seed++), bias = random_tensor(DType::kFloat32, norm, seed++);
      auto y = run_node({"LayerNormalization",
                         17,
                         {{"axis", int_attr(axis)}, {"epsilon", float_attr(1e-3f)}},
                         {x, scale, bias},
                         {},
                         3});
      const int64_t D = shape_numel(norm), N = shape_numel(s) / std::max<int64_t>(D, 1);
      Tensor ry = Tensor::allocate(DType::kFloat32, s), rm = Tensor::allocate(DType::kFloat32, stat),
             ri = Tensor::allocate(DType::kFloat32, stat);
      if (D > 0)
        layer_norm_reference<float>(x.data_as<float>(), scale.data_as<float>(), bias.data_as<float>(), N, D, 1e-3f,
                                    ry.data_as<float>(), rm.data_as<float>(), ri.data_as<float>());
      std::string what = str_cat("layernorm ", shape_str(s), " axis ", axis);
      test::expect_close(y[0], ry, test::Tol{1e-5, 1e-4}, what);
      if (D > 0) {
        test::expect_close(y[1], rm, test::Tol{1e-6, 1e-5}, what + " mean");
        test::expect_close(y[2], ri, test::Tol{1e-5, 1e-5}, what + " invstd");
      }
    }
  }
  // Broadcast scale ([1, D]) and no bias.
  Tensor x = random_tensor(DType::kFloat32, {3, 5}, 1), scale = random_tensor(DType::kFloat32, {1, 5}, 2);
  auto y = run_node({"LayerNormalization", 17, {{"axis", int_attr(0)}}, {x, scale}});
  EXPECT_EQ(y[0].shape(), (Shape{3, 5}));
  expect_error_with(
      [&] {
        run_node({"LayerNormalization", 17, {}, {x, random_tensor(DType::kFloat32, {4}, 3)}});
      },
      {"n0", "Scale", "[4]"});
}

// Float rows of 32-4096 take 32 float lanes; offset rows (mean 1000, spread 1) check that the
// variance stays centred (an uncentred float sum of squares would lose it).
TEST(Normalization, LayerNormFloatLanesOnOffsetRows) {
  for (int64_t D : {31, 32, 33, 64, 255, 256, 1000, 4096, 4097})
    for (int64_t N : {1, 3}) {
      Tensor x = random_tensor(DType::kFloat32, {N, D}, static_cast<uint32_t>(D + N));
      for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] += 1000.f;
      Tensor scale = random_tensor(DType::kFloat32, {D}, 5), bias = random_tensor(DType::kFloat32, {D}, 6);
      auto y = run_node({"LayerNormalization", 17, {{"axis", int_attr(1)}}, {x, scale, bias}, {}, 3});
      Tensor ry = Tensor::allocate(DType::kFloat32, {N, D}), rm = Tensor::allocate(DType::kFloat32, {N, 1}),
             ri = Tensor::allocate(DType::kFloat32, {N, 1});
      layer_norm_reference<float>(x.data_as<float>(), scale.data_as<float>(), bias.data_as<float>(), N, D, 1e-5f,
                                  ry.data_as<float>(), rm.data_as<float>(), ri.data_as<float>());
      const std::string what = str_cat("offset rows ", N, "x", D);
      // x - mean is exact to float's spacing at 1000 (6e-5) relative to a spread of ~1.
      test::expect_close(y[0], ry, test::Tol{2e-3, 1e-3}, what);
      test::expect_close(y[1], rm, test::Tol{1e-6, 1e-6}, what + " mean");
      test::expect_close(y[2], ri, test::Tol{1e-4, 1e-3}, what + " invstd");
      // InstanceNormalization over the same rows as planes of [1, N, D].
      Tensor xi = x.reshaped({1, N, D});
      Tensor s1 = random_tensor(DType::kFloat32, {N}, 7), b1 = random_tensor(DType::kFloat32, {N}, 8);
      auto yi = run_node({"InstanceNormalization", 6, {}, {xi, s1, b1}});
      Tensor ri2 = Tensor::allocate(DType::kFloat32, {1, N, D});
      instance_norm_reference<float>(xi.data_as<float>(), s1.data_as<float>(), b1.data_as<float>(), 1, N, D, 1e-5f,
                                     ri2.data_as<float>());
      test::expect_close(yi[0], ri2, test::Tol{2e-3, 1e-3}, what + " instancenorm");
    }
}

TEST(Normalization, InstanceNormMatchesReference) {
  uint32_t seed = 61;
  for (const Shape& s : std::vector<Shape>{{1, 1, 1}, {2, 3, 17}, {2, 16, 4, 5}, {1, 3, 0}, {3, 2}, {2, 4, 3, 3, 2}}) {
    Tensor x = random_tensor(DType::kFloat32, s, seed++);
    Tensor scale = random_tensor(DType::kFloat32, {s[1]}, seed++),
           bias = random_tensor(DType::kFloat32, {s[1]}, seed++);
    auto y = run_node({"InstanceNormalization", 6, {{"epsilon", float_attr(1e-2f)}}, {x, scale, bias}});
    Tensor r = Tensor::allocate(DType::kFloat32, s);
    const int64_t S = x.numel() / std::max<int64_t>(1, s[0] * s[1]);
    instance_norm_reference<float>(x.data_as<float>(), scale.data_as<float>(), bias.data_as<float>(), s[0], s[1], S,
                                   1e-2f, r.data_as<float>());
    test::expect_close(y[0], r, test::Tol{1e-5, 1e-4}, "instancenorm " + shape_str(s));
  }
  Tensor x = random_tensor(DType::kFloat32, {2, 3, 4}, 1);
  expect_error_with(
      [&] {
        run_node({"InstanceNormalization",
                  6,
                  {},
                  {x, random_tensor(DType::kFloat32, {2}, 1), random_tensor(DType::kFloat32, {3}, 1)}});
      },
      {"n0", "scale", "[3]"});
}

}  // namespace
