// ArgMax / ArgMin: optimised against reference with ties and NaN on awkward shapes; node forms, errors.
#include <gtest/gtest.h>

#include "ops/onnx/reduce/argminmax.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

TEST(ArgReduce, MatchesReferenceWithTies) {
  uint32_t seed = 11;
  for (DType dt : {DType::kFloat32, DType::kInt32, DType::kUInt8, DType::kFloat64})
    for (const Shape& s : awkward_shapes())
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        if (s[axis] == 0) continue;
        Tensor x = random_tensor(dt, s, seed++, /*small_ints=*/true);
        if (dt == DType::kFloat32 && x.numel() > 3) x.data_as<float>()[seed % 3] = NAN;
        Shape out = s;
        out[axis] = 1;
        for (bool is_max : {true, false})
          for (bool last : {true, false}) {
            Tensor a = Tensor::allocate(DType::kInt64, out), b = Tensor::allocate(DType::kInt64, out);
            arg_reduce_optimized(x, axis, is_max, last, a);
            arg_reduce_reference(x, axis, is_max, last, b);
            test::expect_close(a, b, test::Tol{0, 0},
                               str_cat("arg ", shape_str(s), " axis ", axis, " max ", is_max, " last ", last));
          }
      }
}

TEST(ArgReduce, NodeAndErrors) {
  Tensor x = make_tensor<float>(DType::kFloat32, {2, 3}, {1, 5, 5, 7, 7, 0});
  auto y = run_node(
      {"ArgMax", 12, {{"axis", int_attr(-1)}, {"select_last_index", int_attr(1)}, {"keepdims", int_attr(0)}}, {x}});
  ASSERT_EQ(y[0].shape(), (Shape{2}));
  EXPECT_EQ(y[0].data_as<int64_t>()[0], 2);
  EXPECT_EQ(y[0].data_as<int64_t>()[1], 1);
  y = run_node({"ArgMin", 13, {{"axis", int_attr(1)}}, {x}});
  EXPECT_EQ(y[0].shape(), (Shape{2, 1}));
  EXPECT_EQ(y[0].data_as<int64_t>()[1], 2);
  expect_error_with([&] { run_node({"ArgMax", 13, {{"axis", int_attr(2)}}, {x}}); }, {"n0", "axis 2", "rank 2"});
  Tensor e = Tensor::allocate(DType::kFloat32, {2, 0});
  expect_error_with([&] { run_node({"ArgMax", 13, {{"axis", int_attr(1)}}, {e}}); }, {"n0", "size 0"});
}

}  // namespace
