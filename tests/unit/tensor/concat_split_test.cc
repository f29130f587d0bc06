// Concat and Split: fast vs reference, mismatch errors, equal/uneven/explicit splits, round trips
// on awkward shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ops/onnx/tensor/concat.h"
#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;

TEST(TensorConcat, FastMatchesReference) {
  std::mt19937 rng(5);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + iter % 6;
    Shape s = random_shape(rng, rank);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    const int n = 1 + static_cast<int>(rng() % 4);
    for (DType dt : kSizes) {
      std::vector<Tensor> owned;
      std::vector<const Tensor*> ins;
      for (int i = 0; i < n; ++i) {
        Shape si = s;
        si[axis] = static_cast<int64_t>(rng() % 4);
        owned.push_back(random_tensor(dt, si, rng));
      }
      for (auto& t : owned) ins.push_back(&t);
      Shape out = concat_shape(ins, axis, "test");
      Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
      concat_cpu(ins, axis, a);
      concat_ref(ins, axis, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(out);
    }
  }
  // Large enough for the OpenMP path.
  Tensor big1 = random_tensor(DType::kFloat32, {64, 100, 7}, rng),
         big2 = random_tensor(DType::kFloat32, {64, 33, 7}, rng);
  std::vector<const Tensor*> ins = {&big1, &big2};
  Tensor a = Tensor::zeros(DType::kFloat32, {64, 133, 7}), b = Tensor::zeros(DType::kFloat32, {64, 133, 7});
  concat_cpu(ins, 1, a);
  concat_ref(ins, 1, b);
  EXPECT_TRUE(same_bytes(a, b));
  // Row parts of byte lengths around cache lines and vector widths (bytes, so lengths are not
  // multiples of 4).
  for (int64_t w : {1, 2, 63, 64, 65, 127, 128, 129, 255, 256, 257, 300}) {
    Tensor p = random_tensor(DType::kUInt8, {70, w}, rng), q = random_tensor(DType::kUInt8, {70, 3}, rng);
    std::vector<const Tensor*> parts = {&p, &q, &p};
    Tensor x = Tensor::zeros(DType::kUInt8, {70, 2 * w + 3}), y = Tensor::zeros(DType::kUInt8, {70, 2 * w + 3});
    concat_cpu(parts, 1, x);
    concat_ref(parts, 1, y);
    ASSERT_TRUE(same_bytes(x, y)) << "part of " << w << " bytes";
  }
}

TEST(TensorConcat, MismatchErrorNamesShapes) {
  std::string msg = error_of([&] {
    run_op("Concat", 13, {f32({2, 3}, {0, 0, 0, 0, 0, 0}), f32({2, 2}, {0, 0, 0, 0})}, {{"axis", attr_int(0)}});
  });
  EXPECT_NE(msg.find("n1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[2, 2]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dimension 1"), std::string::npos) << msg;
}

TEST(TensorSplit, EqualUnevenAndInputSizes) {
  Tensor x = i64({7}, {0, 1, 2, 3, 4, 5, 6});
  auto y = run_op("Split", 18, {x}, {{"num_outputs", attr_int(3)}}, 3);
  EXPECT_EQ(y[0].numel(), 3);
  EXPECT_EQ(y[2].numel(), 1);
  EXPECT_EQ(y[2].data_as<int64_t>()[0], 6);
  y = run_op("Split", 13, {x, i64({2}, {2, 5})}, {}, 2);
  EXPECT_EQ(y[1].numel(), 5);
  EXPECT_EQ(y[1].data_as<int64_t>()[0], 2);
  y = run_op("Split", 11, {x}, {{"split", attr_ints({4, 3})}}, 2);
  EXPECT_EQ(y[0].numel(), 4);
  std::string msg = error_of([&] { run_op("Split", 13, {x}, {}, 2); });
  EXPECT_NE(msg.find("equal parts"), std::string::npos) << msg;
  msg = error_of([&] { run_op("Split", 13, {x, i64({2}, {2, 4})}, {}, 2); });
  EXPECT_NE(msg.find("sum to 6"), std::string::npos) << msg;
  // 2-D along axis 1 with outer > 1.
  Tensor m = i64({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  y = run_op("Split", 13, {m}, {{"axis", attr_int(-1)}}, 2);
  EXPECT_EQ(y[1].shape(), (Shape{2, 2}));
  EXPECT_EQ(y[1].data_as<int64_t>()[2], 6);
}

TEST(TensorSplit, RoundTripsThroughConcatOnAwkwardShapes) {
  std::mt19937 rng(12);
  for (int iter = 0; iter < 200; ++iter) {
    const int rank = 1 + iter % 6;
    Shape s = random_shape(rng, rank);
    const int64_t axis = static_cast<int64_t>(rng() % rank);
    std::vector<int64_t> sizes;
    for (int64_t left = s[axis]; left > 0;) {
      int64_t k = 1 + static_cast<int64_t>(rng() % 3);
      k = std::min(k, left);
      sizes.push_back(k);
      left -= k;
    }
    sizes.push_back(0);  // an empty chunk
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      std::vector<Tensor> parts;
      std::vector<Tensor*> outs;
      for (int64_t k : split_sizes(s[axis], sizes, static_cast<int64_t>(sizes.size()), false, "test")) {
        Shape ps = s;
        ps[axis] = k;
        parts.push_back(Tensor::zeros(dt, ps));
      }
      for (auto& p : parts) outs.push_back(&p);
      split_cpu(x, axis, outs);
      std::vector<const Tensor*> ins(outs.begin(), outs.end());
      Tensor back = Tensor::zeros(dt, s);
      concat_ref(ins, axis, back);
      ASSERT_TRUE(same_bytes(back, x)) << shape_to_string(s) << " axis " << axis;
    }
  }
  // The threaded copy over rows: 97 rows, 1.2 MB, three parts of odd lengths.
  Tensor x = random_tensor(DType::kFloat32, {97, 3001 + 5 + 97}, rng);
  std::vector<Tensor> parts = {Tensor::zeros(DType::kFloat32, {97, 3001}), Tensor::zeros(DType::kFloat32, {97, 5}),
                               Tensor::zeros(DType::kFloat32, {97, 97})};
  std::vector<Tensor*> outs = {&parts[0], &parts[1], &parts[2]};
  split_cpu(x, 1, outs);
  Tensor back = Tensor::zeros(DType::kFloat32, x.shape());
  concat_ref({outs.begin(), outs.end()}, 1, back);
  EXPECT_TRUE(same_bytes(back, x));
}

// Few rows of large parts (axis 0 or 1 of [2, ...]): each part is copied in 256 KiB pieces over
// the threads. Part sizes around the piece (one float under, at, over) and an empty part; Split
// back must give the inputs.
TEST(TensorConcat, FewRowsOfLargePartsCopiedInPieces) {
  std::mt19937 rng(21);
  const int64_t piece = (int64_t{256} << 10) / 4;  // floats
  for (int64_t axis : {0, 1}) {
    const Shape lead = axis == 0 ? Shape{} : Shape{2};
    std::vector<Tensor> owned;
    for (int64_t len : {piece - 1, piece, piece + 1, int64_t{0}, 3 * piece + 5}) {
      Shape s = lead;
      s.push_back(len);
      owned.push_back(random_tensor(DType::kFloat32, s, rng));
    }
    std::vector<const Tensor*> ins;
    for (auto& t : owned) ins.push_back(&t);
    const Shape out = concat_shape(ins, axis, "test");
    Tensor a = Tensor::zeros(DType::kFloat32, out), b = Tensor::zeros(DType::kFloat32, out);
    concat_cpu(ins, axis, a);
    concat_ref(ins, axis, b);
    ASSERT_TRUE(same_bytes(a, b)) << "axis " << axis;
    std::vector<Tensor> parts;
    std::vector<Tensor*> outs;
    for (const Tensor& t : owned) parts.push_back(Tensor::zeros(DType::kFloat32, t.shape()));
    for (auto& p : parts) outs.push_back(&p);
    split_cpu(a, axis, outs);
    for (size_t i = 0; i < owned.size(); ++i) ASSERT_TRUE(same_bytes(parts[i], owned[i])) << "part " << i;
  }
}

}  // namespace
}  // namespace pointrt::tensor
