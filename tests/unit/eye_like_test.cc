// EyeLike: the oracle on awkward shapes (0 rows or columns, 1x1, odd, wide, tall) and diagonals
// from far below to far above the matrix, for 1/2/4/8-byte types; through a session (dtype and k
// attributes) and its errors.
#include <gtest/gtest.h>

#include "core/half.h"
#include "ops/onnx/tensor/eye_like.h"
#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(EyeLike, OnesExactlyOnTheKthDiagonal) {
  const std::vector<Shape> shapes = {{0, 3}, {3, 0}, {1, 1}, {1, 7}, {7, 1}, {5, 5}, {3, 17}, {17, 3}};
  for (DType dtype : {DType::kBool, DType::kFloat16, DType::kFloat32, DType::kInt64, DType::kFloat64})
    for (const Shape& s : shapes)
      for (int64_t k : {-100, -17, -3, -1, 0, 1, 2, 16, 100}) {
        Tensor y = Tensor::allocate(dtype, s);
        std::memset(y.data(), 0x5A, y.nbytes());  // every byte must be written
        tensor::eye_like_ref(k, y);
        for (int64_t i = 0; i < s[0]; ++i)
          for (int64_t j = 0; j < s[1]; ++j) {
            const int64_t e = i * s[1] + j;
            double v = 0;
            switch (dtype) {
              case DType::kBool: v = static_cast<const uint8_t*>(y.data())[e]; break;
              case DType::kFloat16: v = half_to_float(y.data_as<uint16_t>()[e]); break;
              case DType::kFloat32: v = y.data_as<float>()[e]; break;
              case DType::kInt64: v = static_cast<double>(y.data_as<int64_t>()[e]); break;
              default: v = y.data_as<double>()[e];
            }
            ASSERT_EQ(v, j - i == k ? 1.0 : 0.0)
                << dtype_name(dtype) << " " << shape_to_string(s) << " k=" << k << " at " << i << "," << j;
          }
      }
}

TEST(EyeLike, SessionTypeFromInputOrDtype) {
  NodeCase c{"EyeLike", 9, "", {{"x", iota_tensor({2, 3})}}};
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 0, 0, 0, 1, 0}));
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "dtype", 7);  // INT64
    ModelBuilder::attr_int(n, "k", 1);
  };
  std::vector<Tensor> out = run_node(c);
  ASSERT_EQ(out[0].dtype(), DType::kInt64);
  EXPECT_EQ(values_of<int64_t>(out[0]), (std::vector<int64_t>{0, 1, 0, 0, 0, 1}));
}

TEST(EyeLike, Errors) {
  NodeCase vec{"EyeLike", 9, "", {{"x", iota_tensor({3})}}};
  EXPECT_NE(node_error(vec).find("must be 2-D, got shape [3]"), std::string::npos) << node_error(vec);
  NodeCase str{"EyeLike", 9, "", {{"x", iota_tensor({2, 2})}}};
  str.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "dtype", 8); };  // STRING
  EXPECT_NE(node_error(str).find("attribute 'dtype' = 8 is not a type EyeLike makes"), std::string::npos)
      << node_error(str);
}
