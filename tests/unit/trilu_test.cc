// Trilu: the row-run kernel against the per-element reference on awkward shapes (0, 1, odd,
// wide and tall), every k from far below to far above the matrix, both triangles, 1/2/4/8-byte
// types; and through a session (optional k input, errors).
#include <gtest/gtest.h>

#include <random>

#include "ops/onnx/tensor/trilu.h"
#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

Tensor random_bytes(DType dtype, const Shape& shape, uint32_t seed) {
  Tensor t = Tensor::allocate(dtype, shape);
  std::mt19937 rng(seed);
  auto* p = static_cast<uint8_t*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng() % 255 + 1);  // no zero bytes
  return t;
}

}  // namespace

TEST(Trilu, RowRunsMatchReference) {
  const std::vector<Shape> shapes = {{0, 3}, {3, 0}, {1, 1}, {1, 7}, {7, 1}, {5, 5}, {3, 17}, {17, 3}, {2, 2, 33, 31}};
  for (DType dtype : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kInt64})
    for (const Shape& s : shapes)
      for (bool upper : {true, false})
        for (int64_t k : {-100, -17, -3, -1, 0, 1, 2, 16, 64, 100}) {
          const Tensor x = random_bytes(dtype, s, static_cast<uint32_t>(s.size() + k + 1000));
          Tensor fast = Tensor::allocate(dtype, s), ref = Tensor::allocate(dtype, s);
          tensor::trilu_cpu(x, k, upper, fast);
          tensor::trilu_ref(x, k, upper, ref);
          ASSERT_EQ(0, std::memcmp(fast.data(), ref.data(), fast.nbytes()))
              << shape_to_string(s) << " k=" << k << " upper=" << upper << " " << dtype_name(dtype);
        }
}

TEST(Trilu, SessionWithAndWithoutK) {
  NodeCase c{"Trilu", 14, "", {{"x", iota_tensor({3, 3}, 1)}}};
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{1, 2, 3, 0, 5, 6, 0, 0, 9}));
  c.inputs.push_back({"k", tensor_of<int64_t>({}, {-1})});
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "upper", 0); };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
  NodeCase vec{"Trilu", 14, "", {{"x", iota_tensor({3})}}};
  EXPECT_NE(node_error(vec).find("must have rank >= 2"), std::string::npos) << node_error(vec);
}
