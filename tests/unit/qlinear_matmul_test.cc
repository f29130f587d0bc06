// MatMulInteger / QLinearMatMul: the oneDNN int8 path (constant B and scales) against the
// reference (the same values fed) on awkward shapes (1 x 1, odd K and N, batched and 1-D A),
// per-column zero points and scales, int8/uint8 operands; hand-computed per-row zero points;
// and the errors of mistyped or misfitting parameters.
#include <gtest/gtest.h>

#include "ops/onnx/quant/qmatmul.h"
#include "unit/quant_cases.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

struct MatmulCase {
  Shape a, b;
  DType a_type = DType::kUInt8, b_type = DType::kInt8, y_type = DType::kUInt8;
  bool per_column = false;
};

Tensor operand(DType t, Shape s, uint32_t seed) {
  return t == DType::kUInt8 ? random_ints<uint8_t>(s, 9, 247, seed) : random_ints<int8_t>(s, -120, 120, seed);
}
Tensor zp_of(DType t, Shape s, uint32_t seed) {
  return t == DType::kUInt8 ? random_ints<uint8_t>(s, 120, 136, seed) : random_ints<int8_t>(s, -7, 7, seed);
}

std::vector<MixedInput> qlinear_inputs(const MatmulCase& c, uint32_t seed) {
  Shape col = c.per_column ? Shape{c.b.back()} : Shape{};
  return {{"a", operand(c.a_type, c.a, seed)},
          {"a_scale", scalar_of(0.03f), true},
          {"a_zp", zp_of(c.a_type, {}, seed + 1)},
          {"b", operand(c.b_type, c.b, seed + 2), true},
          {"b_scale", random_floats(col, 0.002f, 0.02f, seed + 3), true},
          {"b_zp", zp_of(c.b_type, col, seed + 4), true},
          {"y_scale", scalar_of(0.2f), true},
          {"y_zp", zp_of(c.y_type, {}, seed + 5)}};
}

const std::vector<MatmulCase>& cases() {
  static const std::vector<MatmulCase> c = {
      {{1, 1}, {1, 1}},
      {{5, 37}, {37, 19}, DType::kInt8, DType::kUInt8, DType::kInt8, true},
      {{2, 3, 65}, {65, 17}, DType::kUInt8, DType::kInt8, DType::kUInt8, true},
      {{33}, {33, 64}, DType::kInt8, DType::kInt8, DType::kUInt8},
      {{16, 256}, {256, 1000}, DType::kUInt8, DType::kUInt8, DType::kInt8, true},
  };
  return c;
}

}  // namespace

TEST(QLinearMatMul, OneDnnMatchesReference) {
  uint32_t seed = 1000;
  for (const MatmulCase& c : cases()) {
    auto in = qlinear_inputs(c, seed += 10);
    std::map<std::string, Tensor> feeds;
    Model m = mixed_model("QLinearMatMul", 10, in, {}, 1, feeds);
    EXPECT_NE(quant::qmatmul_impl_name(*only_node_kernel(m), shape_numel(c.a) / c.a.back()), "reference");
    Tensor packed = run_mixed("QLinearMatMul", 10, in)[0];
    Tensor ref = run_mixed("QLinearMatMul", 10, all_fed(in))[0];
    ASSERT_EQ(packed.shape(), ref.shape());
    ASSERT_EQ(packed.dtype(), c.y_type);
    int differ = 0;
    for (int64_t i = 0; i < ref.numel(); ++i)
      differ += static_cast<const uint8_t*>(packed.data())[i] != static_cast<const uint8_t*>(ref.data())[i];
    EXPECT_EQ(differ, 0) << shape_to_string(c.a) << " x " << shape_to_string(c.b);
  }
}

TEST(MatMulInteger, OneDnnMatchesReference) {
  uint32_t seed = 2000;
  for (const MatmulCase& c : cases()) {
    auto q = qlinear_inputs(c, seed += 10);
    std::vector<MixedInput> in = {q[0], q[3], q[2], q[5]};
    Tensor packed = run_mixed("MatMulInteger", 10, in)[0];
    Tensor ref = run_mixed("MatMulInteger", 10, all_fed(in))[0];
    EXPECT_EQ(values_of<int32_t>(packed), values_of<int32_t>(ref)) << shape_to_string(c.a);
  }
}

TEST(MatMulInteger, PerRowAndPerColumnZeroPointsByHand) {
  // A [2, 2] with row zero points {1, 2}, B [2, 2] with column zero points {0, 3}.
  auto y = run_mixed("MatMulInteger", 10,
                     {{"a", tensor_of<uint8_t>({2, 2}, {1, 2, 3, 4})},
                      {"b", tensor_of<uint8_t>({2, 2}, {1, 4, 2, 5})},
                      {"az", tensor_of<uint8_t>({2}, {1, 2})},
                      {"bz", tensor_of<uint8_t>({2}, {0, 3})}})[0];
  // (A - az) = [[0, 1], [1, 2]], (B - bz) = [[1, 1], [2, 2]].
  EXPECT_EQ(values_of<int32_t>(y), (std::vector<int32_t>{2, 2, 5, 5}));
}

TEST(QLinearMatMul, ErrorsNameTheNodeAndTheValue) {
  MatmulCase c{{3, 4}, {4, 5}};
  auto in = qlinear_inputs(c, 3);
  in[5].value = scalar_int<uint8_t>(0);  // b is int8
  std::string e = error_text([&] { run_mixed("QLinearMatMul", 10, in); });
  EXPECT_NE(e.find("node 'node0' (QLinearMatMul): zero point 'b_zp' has element type uint8, but 'b' is int8"),
            std::string::npos)
      << e;
  in = qlinear_inputs(c, 3);
  in[4].value = random_floats({4}, 0.1f, 0.2f, 1);  // four scales for five columns
  e = error_text([&] { run_mixed("QLinearMatMul", 10, all_fed(in)); });
  EXPECT_NE(e.find("'b_scale' has shape [4], which does not fit 'b' [4, 5]"), std::string::npos) << e;
}
