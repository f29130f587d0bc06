// The gathers' fast paths against their references: GatherElements on an expanded index (every
// row one index: a row copy), int32 and negative indices, and the error for the first
// out-of-range index found by the parallel loop.
#include <gtest/gtest.h>

#include <random>

#include "ops/onnx/tensor/gather.h"
#include "support/node_runner.h"

namespace pointrt {
namespace {

template <typename I>
Tensor expanded_index(const Shape& s, int64_t axis, int64_t n, uint32_t seed, bool uniform_rows) {
  Tensor t = Tensor::allocate(DTypeOf<I>::value, s);
  std::mt19937 rng(seed);
  const int64_t inner = s.back();
  for (int64_t r = 0; r < t.numel() / inner; ++r) {
    const I v = static_cast<I>(static_cast<int64_t>(rng() % (2 * n)) - n);  // negatives too
    for (int64_t j = 0; j < inner; ++j)
      t.data_as<I>()[r * inner + j] = uniform_rows ? v : static_cast<I>(static_cast<int64_t>(rng() % (2 * n)) - n);
  }
  (void)axis;
  return t;
}

template <typename I>
void check(const Shape& data_shape, const Shape& idx_shape, int64_t axis, bool uniform, uint32_t seed) {
  Tensor x = Tensor::allocate(DType::kFloat32, data_shape);
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(i);
  Tensor idx = expanded_index<I>(idx_shape, axis, data_shape[axis], seed, uniform);
  Tensor a = Tensor::allocate(DType::kFloat32, idx_shape), b = Tensor::allocate(DType::kFloat32, idx_shape);
  tensor::gather_elements_cpu(x, idx, idx.shape(), axis, a, "test", "indices");
  tensor::gather_elements_ref(x, idx, axis, b);
  ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.nbytes())) << shape_to_string(idx_shape) << " axis " << axis;
}

TEST(GatherFast, GatherElementsUniformAndMixedRows) {
  uint32_t seed = 1;
  for (bool uniform : {true, false}) {
    check<int64_t>({1, 50, 16}, {1, 200, 16}, 1, uniform, seed++);  // kNN grouping: torch.gather on axis 1
    check<int32_t>({1, 50, 16}, {1, 200, 16}, 1, uniform, seed++);
    check<int64_t>({3, 7, 5}, {2, 9, 5}, 1, uniform, seed++);
    check<int64_t>({6, 5}, {9, 3}, 0, uniform, seed++);
    check<int64_t>({4, 9}, {4, 20}, 1, uniform, seed++);  // last axis: never a row copy
    check<int32_t>({2, 3, 4, 33}, {2, 3, 5, 33}, 2, uniform, seed++);
    check<int64_t>({1, 4000, 40}, {1, 8000, 40}, 1, uniform, seed++);  // threads
  }
}

TEST(GatherFast, GatherElementsReportsTheFirstBadIndex) {
  Tensor x = test::tensor_of<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor idx = test::tensor_of<int64_t>({2, 3}, {0, 1, 1, 1, 3, -4});
  test::NodeCase c{"GatherElements", 13};
  c.inputs = {{"data", x}, {"indices", idx}};
  c.attrs = [](onnx::NodeProto& n) {
    auto* a = n.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(0);
  };
  const std::string e = test::node_error(c);
  EXPECT_NE(e.find("holds 3 at position 4"), std::string::npos) << e;
  EXPECT_NE(e.find("[-2, 1]"), std::string::npos) << e;
}

}  // namespace
}  // namespace pointrt
