// DFT, STFT, the window generators and MelWeightMatrix: transforms of known signals, the
// inverse round trip, onesided and dft_length, STFT frames against DFTs of slices, window
// values at their known points, and the filter bank's shape and peaks.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(Dft, ImpulseConstantAndRoundTrip) {
  // [1, n = 4, 1] real impulse: every bin is 1 + 0i.
  NodeCase c{"DFT", 17, "", {{"x", tensor_of<float>({1, 4, 1}, {1, 0, 0, 0})}}};
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 0, 1, 0, 1, 0, 1, 0}));
  c.inputs[0].second = tensor_of<float>({1, 4, 1}, {2, 2, 2, 2});  // constant: 8 in bin 0 only
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "onesided", 1); };
  const auto y = values_of<float>(run_node(c)[0]);
  ASSERT_EQ(y.size(), 6u);  // bins 0..2
  EXPECT_NEAR(y[0], 8, 1e-6);
  for (size_t i = 1; i < y.size(); ++i) EXPECT_NEAR(y[i], 0, 1e-6);
  // Complex random signal: the inverse of the forward transform is the signal (opset 20, axis input).
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor x = Tensor::allocate(DType::kFloat32, {2, 7, 2});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = u(rng);
  NodeCase fwd{"DFT", 20, "", {{"x", x}, {"", Tensor()}, {"axis", tensor_of<int64_t>({}, {1})}}};
  NodeCase inv{"DFT", 20, "", {{"y", run_node(fwd)[0]}, {"", Tensor()}, {"axis", tensor_of<int64_t>({}, {1})}}};
  inv.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "inverse", 1); };
  const auto back = values_of<float>(run_node(inv)[0]);
  for (int64_t i = 0; i < x.numel(); ++i) EXPECT_NEAR(back[i], x.data_as<float>()[i], 1e-5);
}

TEST(Dft, LengthPadsOrCutsAndErrors) {
  NodeCase c{"DFT", 17, "", {{"x", tensor_of<float>({1, 2, 1}, {1, 1})}, {"n", tensor_of<int64_t>({}, {4})}}};
  const auto y = values_of<float>(run_node(c)[0]);  // [1, 1, 0, 0]: bins 2, 1-i, 0, 1+i
  EXPECT_NEAR(y[0], 2, 1e-6);
  EXPECT_NEAR(y[2], 1, 1e-6);
  EXPECT_NEAR(y[3], -1, 1e-6);
  EXPECT_NEAR(y[4], 0, 1e-6);
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "axis", 2); };
  EXPECT_NE(node_error(c).find("is not a signal axis"), std::string::npos) << node_error(c);
}

TEST(Stft, FramesAreDftsOfWindowedSlices) {
  const Tensor sig = iota_tensor({1, 10, 1});
  NodeCase c{
      "STFT", 17, "", {{"s", sig}, {"step", tensor_of<int64_t>({}, {3})}, {"w", tensor_of<float>({4}, {1, 2, 2, 1})}}};
  const Tensor y = run_node(c)[0];
  ASSERT_EQ(y.shape(), (Shape{1, 3, 3, 2}));  // 1 + (10 - 4) / 3 frames, onesided 4 / 2 + 1 bins
  for (int f = 0; f < 3; ++f) {
    double dc = 0;  // bin 0 = sum of the windowed frame
    const float w[4] = {1, 2, 2, 1};
    for (int s = 0; s < 4; ++s) dc += w[s] * (f * 3 + s);
    EXPECT_NEAR(y.data_as<float>()[(f * 3) * 2], dc, 1e-4);
  }
}

TEST(Windows, KnownValues) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) {
    NodeCase c{op, 17, "", {{"n", tensor_of<int64_t>({}, {5})}}};
    c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "periodic", 0); };
    const auto w = values_of<float>(run_node(c)[0]);
    ASSERT_EQ(w.size(), 5u);
    EXPECT_NEAR(w[2], 1.0, 1e-6) << op;  // symmetric windows peak at 1 in the middle
    EXPECT_NEAR(w[0], w[4], 1e-6) << op;
    const double edge = op[0] == 'H' && op[2] == 'n' ? 0 : (op[0] == 'H' ? 4.0 / 46 : 0);
    EXPECT_NEAR(w[0], edge, 1e-6) << op;
  }
  NodeCase d{"HannWindow", 17, "", {{"n", tensor_of<int64_t>({}, {4})}}};  // periodic: sin^2(pi n / 4)
  d.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "output_datatype", static_cast<int>(DType::kFloat64)); };
  const Tensor h = run_node(d)[0];
  ASSERT_EQ(h.dtype(), DType::kFloat64);
  EXPECT_NEAR(h.data_as<double>()[1], 0.5, 1e-15);
}

TEST(MelWeightMatrix, ShapeAndPeaks) {
  NodeCase c{"MelWeightMatrix",
             17,
             "",
             {{"bins", tensor_of<int64_t>({}, {8})},
              {"len", tensor_of<int64_t>({}, {64})},
              {"rate", tensor_of<int64_t>({}, {16000})},
              {"lo", tensor_of<float>({}, {0})},
              {"hi", tensor_of<float>({}, {8000})}}};
  const Tensor m = run_node(c)[0];
  ASSERT_EQ(m.shape(), (Shape{33, 8}));
  for (int64_t b = 0; b < 8; ++b) {
    float peak = 0;
    for (int64_t r = 0; r < 33; ++r) peak = std::max(peak, m.data_as<float>()[r * 8 + b]);
    EXPECT_EQ(peak, 1.f) << b;
  }
}
