// CumSum: optimised against reference (exclusive, reverse, every axis); node form and errors.
#include <gtest/gtest.h>

#include "ops/onnx/reduce/cumsum.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

TEST(CumSum, MatchesReference) {
  uint32_t seed = 31;
  for (DType dt : {DType::kFloat32, DType::kInt64, DType::kInt32, DType::kFloat64})
    for (const Shape& s : awkward_shapes())
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        Tensor x = random_tensor(dt, s, seed++);
        for (bool excl : {false, true})
          for (bool rev : {false, true}) {
            Tensor a = Tensor::allocate(dt, s), b = Tensor::allocate(dt, s);
            cumsum_optimized(x, axis, excl, rev, a);
            cumsum_reference(x, axis, excl, rev, b);
            test::expect_close(a, b, test::Tol{1e-5, 1e-5},
                               str_cat("cumsum ", shape_str(s), " axis ", axis, " excl ", excl, " rev ", rev));
          }
      }
}

TEST(CumSum, NodeAndErrors) {
  Tensor x = make_tensor<double>(DType::kFloat64, {5}, {1, 2, 3, 4, 5});
  Tensor axis = make_tensor<int32_t>(DType::kInt32, {}, {0});
  auto y = run_node({"CumSum", 14, {{"exclusive", int_attr(1)}, {"reverse", int_attr(1)}}, {x, axis}});
  const double want[] = {14, 12, 9, 5, 0};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(y[0].data_as<double>()[i], want[i]);
  expect_error_with([&] { run_node({"CumSum", 14, {}, {x, int64_tensor({1}, true)}}); }, {"n0", "axis 1", "rank 1"});
}

}  // namespace
