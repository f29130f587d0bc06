// BatchNormalization: the inference formula, and the error for training mode.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/onnx/nn/batchnorm.h"
#include "ops/onnx/nn/nn_kernels.h"
#include "unit/nn/nn_test_util.h"

namespace pointrt::nn {
namespace {

using namespace test_helpers;

TEST(NnBatchNorm, InferenceFormulaAndTrainingModeError) {
  for (int opset : {7, 9, 14, 15}) {
    SCOPED_TRACE(opset);
    ModelBuilder mb(opset);
    mb.input("X", {2, 3, 4, 5});
    Tensor sc = random_floats({3}, 1), bi = random_floats({3}, 2), me = random_floats({3}, 3),
           va = random_floats({3}, 4, 0.5f, 2.f);
    mb.initializer("s", sc);
    mb.initializer("b", bi);
    mb.initializer("m", me);
    mb.input("v", {3});  // one non-constant parameter: coefficients at run time
    auto* n = mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y"}, "bn");
    ModelBuilder::float1(n, "epsilon", 1e-3f);
    mb.output("Y");
    Session s(mb.build());
    Tensor x = random_floats({2, 3, 4, 5}, 5);
    Tensor y = s.run({{"X", x}, {"v", va}})[0];
    Tensor ref = Tensor::allocate(DType::kFloat32, x.shape());
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t c = (i / 20) % 3;
      ref.data_as<float>()[i] = (x.data_as<float>()[i] - me.data_as<float>()[c]) /
                                    std::sqrt(va.data_as<float>()[c] + 1e-3f) * sc.data_as<float>()[c] +
                                bi.data_as<float>()[c];
    }
    expect_close(y, ref, Tol{1e-5f, 1e-5f}.finite_only());
  }
  ModelBuilder mb(15);
  mb.input("X", {2, 3});
  for (const char* p : {"s", "b", "m", "v"}) mb.initializer(p, random_floats({3}, 1, 0.5f, 1.f));
  auto* n = mb.node("BatchNormalization", {"X", "s", "b", "m", "v"}, {"Y"}, "bn_train");
  ModelBuilder::int1(n, "training_mode", 1);
  mb.output("Y");
  // Training mode normalises with the batch's statistics (population variance), per the spec.
  Session s(mb.build());
  Tensor x = random_floats({2, 3}, 1);
  Tensor y = s.run({{"X", x}})[0];
  Model m2 = mb.build();
  const float* xd = x.data_as<float>();
  for (int c = 0; c < 3; ++c) {
    float mean = 0.5f * (xd[c] + xd[3 + c]);
    float var = 0.5f * ((xd[c] - mean) * (xd[c] - mean) + (xd[3 + c] - mean) * (xd[3 + c] - mean));
    const Tensor& sc = *m2.impl()->graph.values[m2.impl()->graph.find_value("s")].constant;
    const Tensor& bi = *m2.impl()->graph.values[m2.impl()->graph.find_value("b")].constant;
    for (int n = 0; n < 2; ++n)
      EXPECT_NEAR(y.data_as<float>()[n * 3 + c],
                  (xd[n * 3 + c] - mean) / std::sqrt(var + 1e-5f) * sc.data_as<float>()[c] + bi.data_as<float>()[c],
                  1e-4f);
  }
}

}  // namespace
}  // namespace pointrt::nn
