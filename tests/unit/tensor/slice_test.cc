// Slice: fast vs reference with negative steps and clamping, known results, errors.
#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <string>
#include <vector>

#include "ops/onnx/tensor/slice.h"
#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;

TEST(TensorSlice, FastMatchesReferenceWithNegativeStepsAndClamping) {
  std::mt19937 rng(4);
  const int64_t specials[] = {INT64_MIN, INT64_MAX, -100, -3, -1, 0, 1, 2, 4, 100};
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = 1 + iter % 6;
    Shape s = random_shape(rng, rank);
    std::vector<int64_t> starts, ends, axes, steps;
    for (int d = 0; d < rank; ++d) {
      if (rng() % 3 == 0) continue;
      axes.push_back(rng() % 2 ? d : d - rank);
      starts.push_back(specials[rng() % 10]);
      ends.push_back(specials[rng() % 10]);
      int64_t st = static_cast<int64_t>(rng() % 7) - 3;
      steps.push_back(st == 0 ? 1 : st);
    }
    SlicePlan p = slice_plan(s, starts, ends, axes, steps, "test");
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Tensor a = Tensor::zeros(dt, p.out_shape), b = Tensor::zeros(dt, p.out_shape);
      slice_cpu(x, p, a);
      slice_ref(x, p, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s) << " -> " << shape_to_string(p.out_shape);
    }
  }
}

TEST(TensorSlice, KnownResults) {
  // numpy: x[::-1], x[-2:0:-1], x[7:], x[1:100:3]
  Tensor x = i64({6}, {0, 1, 2, 3, 4, 5});
  auto run = [&](int64_t s, int64_t e, int64_t st) {
    auto y = run_op("Slice", 13, {x, i64({1}, {s}), i64({1}, {e}), i64({1}, {0}), i64({1}, {st})});
    return std::vector<int64_t>(y[0].data_as<int64_t>(), y[0].data_as<int64_t>() + y[0].numel());
  };
  EXPECT_EQ(run(-1, INT64_MIN, -1), (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(run(-2, 0, -1), (std::vector<int64_t>{4, 3, 2, 1}));
  EXPECT_EQ(run(7, 10, 1), (std::vector<int64_t>{}));
  EXPECT_EQ(run(1, 100, 3), (std::vector<int64_t>{1, 4}));
  // opset 1-9: attributes.
  auto y = run_op("Slice", 9, {x}, {{"starts", attr_ints({-3})}, {"ends", attr_ints({INT64_MAX})}});
  EXPECT_EQ(y[0].numel(), 3);
  EXPECT_EQ(y[0].data_as<int64_t>()[0], 3);
}

TEST(TensorSlice, Errors) {
  Tensor x = i64({2, 3}, {0, 1, 2, 3, 4, 5});
  std::string msg = error_of([&] {
    run_op("Slice", 13, {x, i64({1}, {0}), i64({1}, {2}), i64({1}, {1}), i64({1}, {0})});
  });
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("steps"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Slice", 13, {x, i64({2}, {0, 0}), i64({2}, {1, 1}), i64({2}, {1, -1})}); });
  EXPECT_NE(msg.find("twice"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Slice", 13, {x, i64({1}, {0}), i64({1}, {1}), i64({1}, {2})}); });
  EXPECT_NE(msg.find("axis 2"), std::string::npos) << msg;
}

}  // namespace
}  // namespace pointrt::tensor
