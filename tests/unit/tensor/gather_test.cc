// Gather, GatherElements, GatherND and the Scatter family: fast vs reference, out-of-range
// errors naming the node, input, value and range; Scatter reductions.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/onnx/tensor/gather.h"
#include "ops/onnx/tensor/scatter.h"
#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;

TEST(TensorGather, FastMatchesReference) {
  std::mt19937 rng(6);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = 1 + iter % 5;
    Shape s = random_shape(rng, rank);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    if (s[axis] == 0) s[axis] = 3;
    Shape is = random_shape(rng, static_cast<int>(rng() % 3));
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Tensor idx = index_tensor(rng() % 2 ? DType::kInt64 : DType::kInt32, is, s[axis], rng);
      Shape out = gather_shape(s, is, axis);
      Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
      gather_cpu(x, idx, axis, a, "test", "indices");
      gather_ref(x, idx, axis, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s) << " axis " << axis;
    }
  }
}

TEST(TensorGather, OutOfRangeErrorNamesNodeInputValueAndRange) {
  Tensor x = f32({5, 2}, std::vector<float>(10, 0.f));
  std::string msg = error_of([&] { run_op("Gather", 13, {x, i64({3}, {0, 7, 1})}); });
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'indices'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("7"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-5, 4]"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Gather", 13, {x, i64({1}, {-6})}); });
  EXPECT_NE(msg.find("-6"), std::string::npos) << msg;
  // Negative indices wrap.
  auto y = run_op("Gather", 13, {f32({3}, {10, 20, 30}), i64({2}, {-1, -3})});
  EXPECT_EQ(y[0].data_as<float>()[0], 30.f);
  EXPECT_EQ(y[0].data_as<float>()[1], 10.f);
  msg = error_of([&] { run_op("Gather", 13, {x, f32({1}, {0})}); });
  EXPECT_NE(msg.find("int32 or int64"), std::string::npos) << msg;
}

TEST(TensorGatherElements, FastMatchesReference) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + iter % 5;
    Shape s = random_shape(rng, rank, false);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    Shape is = s;
    for (int d = 0; d < rank; ++d)
      is[d] = d == axis ? static_cast<int64_t>(rng() % 5) : static_cast<int64_t>(rng() % (s[d] + 1));
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Tensor idx = index_tensor(DType::kInt64, is, s[axis], rng);
      Tensor a = Tensor::zeros(dt, is), b = Tensor::zeros(dt, is);
      gather_elements_cpu(x, idx, idx.shape(), axis, a, "test", "indices");
      gather_elements_ref(x, idx, axis, b);
      ASSERT_TRUE(same_bytes(a, b));
    }
  }
  std::string msg = error_of([&] { run_op("GatherElements", 13, {f32({2, 2}, {1, 2, 3, 4}), i64({1, 2}, {0, 2})}); });
  EXPECT_NE(msg.find("holds 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-2, 1]"), std::string::npos) << msg;
}

TEST(TensorGatherND, FastMatchesReferenceWithBatchDims) {
  std::mt19937 rng(8);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + iter % 4;
    Shape s = random_shape(rng, rank, false);
    const int64_t b = static_cast<int64_t>(rng() % rank);
    const int64_t k = 1 + static_cast<int64_t>(rng() % (rank - b));
    Shape is(s.begin(), s.begin() + b);
    for (int64_t extra = rng() % 3; extra > 0; --extra) is.push_back(static_cast<int64_t>(rng() % 4));
    is.push_back(k);
    Tensor idx = Tensor::allocate(DType::kInt64, is);
    for (int64_t i = 0; i < idx.numel(); ++i) {
      const int64_t dim = s[b + i % k];
      idx.data_as<int64_t>()[i] = static_cast<int64_t>(rng() % (2 * dim)) - dim;
    }
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Shape out = gather_nd_shape(s, is, b, "test");
      Tensor a1 = Tensor::zeros(dt, out), b1 = Tensor::zeros(dt, out);
      gather_nd_cpu(x, idx, b, a1, "test", "indices");
      gather_nd_ref(x, idx, b, b1);
      ASSERT_TRUE(same_bytes(a1, b1));
    }
  }
  std::string msg = error_of([&] { run_op("GatherND", 13, {f32({2, 3}, {0, 0, 0, 0, 0, 0}), i64({1, 2}, {1, 3})}); });
  EXPECT_NE(msg.find("holds 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-3, 2]"), std::string::npos) << msg;
}

TEST(TensorGatherND, LargeGathersOverThreadsAndTheFirstBadIndex) {
  // Rows of 3 floats (points' xyz) and of 5 bytes, int32 and int64 indices, batch_dims 1, on
  // enough tuples for the threads; two bad indices: the error names the first.
  const int saved = omp_get_max_threads();
  std::mt19937 rng(31);
  for (int threads : {1, 2, 3})
    for (DType it : {DType::kInt64, DType::kInt32})
      for (DType dt : {DType::kFloat32, DType::kUInt8}) {
        omp_set_num_threads(threads);
        const int64_t n = 40000, c = dt == DType::kFloat32 ? 3 : 5;
        Tensor x = random_tensor(dt, {2, n, c}, rng);
        Tensor idx = Tensor::allocate(it, {2, n / 2, 1});
        for (int64_t i = 0; i < idx.numel(); ++i) {
          const int64_t v = static_cast<int64_t>(rng() % (2 * n)) - n;
          if (it == DType::kInt64)
            idx.data_as<int64_t>()[i] = v;
          else
            idx.data_as<int32_t>()[i] = static_cast<int32_t>(v);
        }
        Shape out = gather_nd_shape(x.shape(), idx.shape(), 1, "test");
        Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
        gather_nd_cpu(x, idx, 1, a, "test", "indices");
        gather_nd_ref(x, idx, 1, b);
        ASSERT_TRUE(same_bytes(a, b)) << threads << " threads";
        const int64_t bad_late = n - 7, bad_early = n / 2 + 11;  // both in the second batch
        if (it == DType::kInt64) {
          idx.data_as<int64_t>()[bad_late] = n + 5;
          idx.data_as<int64_t>()[bad_early] = -n - 2;
        } else {
          idx.data_as<int32_t>()[bad_late] = static_cast<int32_t>(n + 5);
          idx.data_as<int32_t>()[bad_early] = static_cast<int32_t>(-n - 2);
        }
        const std::string msg = error_of([&] { gather_nd_cpu(x, idx, 1, a, "test", "indices"); });
        EXPECT_NE(msg.find(str_cat("holds ", -n - 2)), std::string::npos) << msg;
      }
  omp_set_num_threads(saved);
}

// Data of 16 MiB and more: each row is prefetched 16 tuples ahead from an index not yet
// validated. Same bytes as the reference; a bad index among the prefetched ones is still named.
TEST(TensorGatherND, DataBeyondTheCacheWithPrefetchedRows) {
  const int saved = omp_get_max_threads();
  std::mt19937 rng(37);
  const int64_t n = 720000;  // 2 x 720000 x 3 floats: 17.3 MB
  Tensor x = random_tensor(DType::kFloat32, {2, n, 3}, rng);
  Tensor idx = Tensor::allocate(DType::kInt64, {2, n / 4, 1});
  for (int64_t i = 0; i < idx.numel(); ++i) idx.data_as<int64_t>()[i] = static_cast<int64_t>(rng() % (2 * n)) - n;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Shape out = gather_nd_shape(x.shape(), idx.shape(), 1, "test");
    Tensor a = Tensor::zeros(DType::kFloat32, out), b = Tensor::zeros(DType::kFloat32, out);
    gather_nd_cpu(x, idx, 1, a, "test", "indices");
    gather_nd_ref(x, idx, 1, b);
    ASSERT_TRUE(same_bytes(a, b)) << threads << " threads";
  }
  idx.data_as<int64_t>()[1000] = 3 * n;  // prefetched (wildly out of range) before it is checked
  idx.data_as<int64_t>()[1001] = -3 * n;
  Tensor a = Tensor::zeros(DType::kFloat32, gather_nd_shape(x.shape(), idx.shape(), 1, "test"));
  const std::string msg = error_of([&] { gather_nd_cpu(x, idx, 1, a, "test", "indices"); });
  EXPECT_NE(msg.find(str_cat("holds ", 3 * n)), std::string::npos) << msg;
  omp_set_num_threads(saved);
}

TEST(TensorScatter, ReductionsAndErrors) {
  Tensor data = f32({1, 5}, {1, 2, 3, 4, 5});
  Tensor idx = i64({1, 2}, {1, 1});
  Tensor up = f32({1, 2}, {1.1f, 2.1f});
  auto y = run_op("ScatterElements", 18, {data, idx, up}, {{"axis", attr_int(1)}, {"reduction", attr_str("add")}});
  EXPECT_FLOAT_EQ(y[0].data_as<float>()[1], 5.2f);
  y = run_op("ScatterElements", 18, {data, idx, up}, {{"axis", attr_int(1)}, {"reduction", attr_str("max")}});
  EXPECT_FLOAT_EQ(y[0].data_as<float>()[1], 2.1f);
  std::string msg = error_of([&] {
    run_op("ScatterElements", 16, {data, idx, up}, {{"axis", attr_int(1)}, {"reduction", attr_str("max")}});
  });
  EXPECT_NE(msg.find("opset 18"), std::string::npos) << msg;
  msg = error_of([&] { run_op("ScatterElements", 13, {data, i64({1, 2}, {1, 5}), up}, {{"axis", attr_int(1)}}); });
  EXPECT_NE(msg.find("holds 5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'indices'"), std::string::npos) << msg;
  Tensor d2 = f32({4}, {1, 2, 3, 4});
  y = run_op("ScatterND", 16, {d2, i64({2, 1}, {0, 0}), f32({2}, {10, 20})}, {{"reduction", attr_str("mul")}});
  EXPECT_FLOAT_EQ(y[0].data_as<float>()[0], 200.f);
  msg = error_of([&] { run_op("ScatterND", 13, {d2, i64({1, 1}, {-5}), f32({1}, {1})}); });
  EXPECT_NE(msg.find("holds -5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[-4, 3]"), std::string::npos) << msg;
}

TEST(TensorScatter, ScatterNDSplitOverThreadsMatchesOnePass) {
  // Outputs of 1 MB or more are split over the threads by output range: repeated (and negative)
  // indices must still resolve in index order, the last assignment winning and reductions
  // combining in order, bit for bit as one pass over the indices.
  const int saved = omp_get_max_threads();
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  for (int64_t slice : {int64_t(1), int64_t(64)}) {
    const int64_t rows = (int64_t(1) << 20) / 4 / slice + 7, tuples = rows / 2 + 3;
    Tensor data = Tensor::allocate(DType::kFloat32, slice == 1 ? Shape{rows} : Shape{rows, slice});
    Tensor idx = Tensor::allocate(DType::kInt64, {tuples, 1});
    Tensor up = Tensor::allocate(DType::kFloat32, slice == 1 ? Shape{tuples} : Shape{tuples, slice});
    for (int64_t i = 0; i < data.numel(); ++i) data.data_as<float>()[i] = u(rng);
    for (int64_t i = 0; i < up.numel(); ++i) up.data_as<float>()[i] = u(rng);
    for (int64_t t = 0; t < tuples; ++t) {  // an eighth of the rows, each hit about 4 times
      const int64_t r = static_cast<int64_t>(rng() % static_cast<uint64_t>(rows / 8)) * 8;
      idx.data_as<int64_t>()[t] = rng() % 2 ? r : r - rows;
    }
    for (Reduction red : {Reduction::kNone, Reduction::kAdd, Reduction::kMul, Reduction::kMax, Reduction::kMin}) {
      Tensor want = data.clone();
      float* w = want.data_as<float>();
      for (int64_t t = 0; t < tuples; ++t) {
        const int64_t v = idx.data_as<int64_t>()[t], at = (v < 0 ? v + rows : v) * slice;
        for (int64_t j = 0; j < slice; ++j) {
          const float o = w[at + j], x = up.data_as<float>()[t * slice + j];
          w[at + j] = red == Reduction::kNone  ? x
                      : red == Reduction::kAdd ? o + x
                      : red == Reduction::kMul ? o * x
                      : red == Reduction::kMax ? std::max(o, x)
                                               : std::min(o, x);
        }
      }
      for (int threads : {1, 2, 3}) {
        omp_set_num_threads(threads);
        Tensor y = Tensor::allocate(DType::kFloat32, data.shape());
        scatter_nd_cpu(data, idx, up, red, y, "test", "indices");
        ASSERT_EQ(std::memcmp(y.data(), want.data(), want.nbytes()), 0)
            << "slice " << slice << " reduction " << static_cast<int>(red) << " threads " << threads;
      }
    }
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace pointrt::tensor
