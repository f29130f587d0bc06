// Pad: fast vs reference in every mode, known numpy results, errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ops/onnx/tensor/pad.h"
#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;

TEST(TensorPad, FastMatchesReferenceAllModes) {
  std::mt19937 rng(9);
  const PadMode modes[] = {PadMode::kConstant, PadMode::kReflect, PadMode::kEdge, PadMode::kWrap};
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = iter % 6;
    const PadMode mode = modes[rng() % 4];
    Shape s = random_shape(rng, rank, mode == PadMode::kConstant);
    std::vector<int64_t> pads(2 * rank);
    for (int d = 0; d < rank; ++d) {
      int64_t lo = static_cast<int64_t>(rng() % 8) - 2, hi = static_cast<int64_t>(rng() % 8) - 2;
      // Crop at most the size, and keep one element for non-constant modes.
      const int64_t keep = mode == PadMode::kConstant ? 0 : 1;
      while (std::max<int64_t>(0, -lo) + std::max<int64_t>(0, -hi) > s[d] - keep) {
        if (lo < 0)
          ++lo;
        else
          ++hi;
      }
      pads[d] = lo;
      pads[d + rank] = hi;
    }
    PadPlan p = pad_plan(s, pads, {}, mode, "test");
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      uint64_t value = 0x0123456789abcdefull;
      Tensor a = Tensor::zeros(dt, p.out_shape), b = Tensor::zeros(dt, p.out_shape);
      pad_cpu(x, p, &value, a);
      pad_ref(x, p, &value, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s) << " mode " << static_cast<int>(mode);
    }
  }
}

TEST(TensorPad, KnownNumpyResultsAndErrors) {
  Tensor x = i64({3}, {1, 2, 3});
  auto pad1 = [&](const char* mode, int64_t lo, int64_t hi, int opset = 19) {
    auto y = run_op("Pad", opset, {x, i64({2}, {lo, hi})}, {{"mode", attr_str(mode)}});
    return std::vector<int64_t>(y[0].data_as<int64_t>(), y[0].data_as<int64_t>() + y[0].numel());
  };
  // np.pad([1,2,3], (5,2), 'reflect') / 'edge'; wrap is periodic (numpy 1.24 gives [2, 1, 2, ...] for
  // (4, 2) because it pads both sides in rounds; ONNX Runtime takes x mod n, as we do).
  EXPECT_EQ(pad1("reflect", 5, 2), (std::vector<int64_t>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1}));
  EXPECT_EQ(pad1("edge", 2, 1), (std::vector<int64_t>{1, 1, 1, 2, 3, 3}));
  EXPECT_EQ(pad1("wrap", 4, 2), (std::vector<int64_t>{3, 1, 2, 3, 1, 2, 3, 1, 2}));
  EXPECT_EQ(pad1("constant", -1, 2), (std::vector<int64_t>{2, 3, 0, 0}));
  // opset 2-10: attributes, float value cast to the element type.
  auto y = run_op("Pad", 10, {f32({2}, {1, 2})}, {{"pads", attr_ints({1, 0})}, {"value", attr_float(7.5f)}});
  EXPECT_EQ(y[0].data_as<float>()[0], 7.5f);
  // opset 18: axes.
  y = run_op("Pad", 18, {f32({2, 2}, {1, 2, 3, 4}), i64({2}, {1, 0}), f32({}, {9}), i64({1}, {-1})});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(y[0].data_as<float>()[3], 9.f);
  std::string msg = error_of([&] { pad1("wrap", 1, 1, 18); });
  EXPECT_NE(msg.find("opset 19"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Pad", 13, {x, i64({3}, {1, 1, 1})}); });
  EXPECT_NE(msg.find("pads"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Pad", 13, {i64({0}, {}), i64({2}, {1, 1})}, {{"mode", attr_str("edge")}}); });
  EXPECT_NE(msg.find("size 0"), std::string::npos) << msg;
}

}  // namespace
}  // namespace pointrt::tensor
