// TopK: optimised against reference with ties and NaN; opset forms and errors.
#include <gtest/gtest.h>
#include <omp.h>

#include "ops/onnx/reduce/topk.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

TEST(TopK, MatchesReferenceWithTiesAndNaN) {
  uint32_t seed = 41;
  for (DType dt : {DType::kFloat32, DType::kInt32, DType::kFloat64})
    for (const Shape& s : awkward_shapes())
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        Tensor x = random_tensor(dt, s, seed++, /*small_ints=*/true);
        if (dt == DType::kFloat32 && x.numel() > 2) x.data_as<float>()[1] = NAN;
        for (int64_t k : {int64_t(0), int64_t(1), s[axis] / 2, s[axis]}) {
          if (k > s[axis]) continue;
          Shape out = s;
          out[axis] = k;
          for (bool largest : {true, false}) {
            Tensor va = Tensor::allocate(dt, out), ia = Tensor::allocate(DType::kInt64, out);
            Tensor vb = Tensor::allocate(dt, out), ib = Tensor::allocate(DType::kInt64, out);
            topk_optimized(x, axis, k, largest, va, ia);
            topk_reference(x, axis, k, largest, vb, ib);
            std::string what = str_cat("topk ", shape_str(s), " axis ", axis, " k ", k, " largest ", largest);
            test::expect_close(va, vb, test::Tol{0, 0}, what);
            test::expect_close(ia, ib, test::Tol{0, 0}, what);
          }
        }
      }
}

TEST(TopK, OneLongLineSplitOverThreadsMatchesReference) {
  // A single line of >= 2^16 elements is split over the threads and the parts' candidates merged:
  // the same values and indices as one pass, ties (small integers) by the lower index, NaN first
  // for largest; 2 and 3 threads (an uneven split), k from 1 to a quarter of a part; the line is
  // axis 0 of [R, 1].
  const int saved = omp_get_max_threads();
  const int64_t R = 70001;
  for (DType dt : {DType::kFloat32, DType::kInt32}) {
    Tensor x = random_tensor(dt, {R, 1}, static_cast<uint32_t>(R), /*small_ints=*/true);
    if (dt == DType::kFloat32) x.data_as<float>()[R - 5] = NAN;
    for (int64_t k : {int64_t(1), int64_t(500), R / 3 / 4})
      for (bool largest : {true, false}) {
        Tensor vb = Tensor::allocate(dt, {k, 1}), ib = Tensor::allocate(DType::kInt64, {k, 1});
        topk_reference(x, 0, k, largest, vb, ib);
        for (int threads : {2, 3}) {
          omp_set_num_threads(threads);
          Tensor va = Tensor::allocate(dt, {k, 1}), ia = Tensor::allocate(DType::kInt64, {k, 1});
          topk_optimized(x, 0, k, largest, va, ia);
          std::string what = str_cat(dtype_name(dt), " threads ", threads, " k ", k, " largest ", largest);
          test::expect_close(va, vb, test::Tol{0, 0}, what);
          test::expect_close(ia, ib, test::Tol{0, 0}, what);
        }
      }
  }
  omp_set_num_threads(saved);
}

TEST(TopK, NodeFormsAndErrors) {
  Tensor x = make_tensor<float>(DType::kFloat32, {2, 4}, {3, 1, 3, 2, 0, 0, 5, 0});
  auto y = run_node({"TopK", 1 + 8, {{"k", int_attr(2)}}, {x}, {}, 2});
  EXPECT_EQ(y[1].data_as<int64_t>()[0], 0);  // tie 3 vs 3: the lower index first
  EXPECT_EQ(y[1].data_as<int64_t>()[1], 2);
  y = run_node({"TopK", 11, {{"largest", int_attr(0)}, {"axis", int_attr(1)}}, {x, int64_tensor({3})}, {}, 2});
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(y[1].data_as<int64_t>()[3], 0);
  EXPECT_EQ(y[1].data_as<int64_t>()[4], 1);
  EXPECT_EQ(y[1].data_as<int64_t>()[5], 3);
  expect_error_with([&] { run_node({"TopK", 10, {}, {x, int64_tensor({5})}, {}, 2}); }, {"n0", "K = 5", "size 4"});
  expect_error_with([&] { run_node({"TopK", 11, {}, {x, int64_tensor({-1})}, {}, 2}); }, {"n0", "K = -1"});
  expect_error_with(
      [&] {
        run_node({"TopK", 11, {{"axis", int_attr(-3)}}, {x, int64_tensor({1})}, {}, 2});
      },
      {"n0", "axis -3"});
}

}  // namespace
