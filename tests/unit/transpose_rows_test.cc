// Transposes that keep the last axis walk the rows in the source's order (copy_rows_in_source_order
// in tensor_utils.cc): checked against the reference on rows just below, at and above the 64-byte
// threshold, several outer permutations, every element size, and strided (sliced) views.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "ops/onnx/tensor/tensor_utils.h"
#include "ops/onnx/tensor/transpose.h"

using namespace pointrt;
using namespace pointrt::tensor;

namespace {

Tensor filled(DType dt, const Shape& s, uint32_t seed) {
  Tensor t = Tensor::allocate(dt, s);
  std::mt19937 rng(seed);
  auto* p = static_cast<unsigned char*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<unsigned char>(rng());
  return t;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST(TransposeRows, SourceOrderWalkMatchesTheReference) {
  struct Case {
    Shape s;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {{{2, 9, 8, 16}, {0, 2, 1, 3}}, {{2, 9, 8, 15}, {0, 2, 1, 3}},
                                   {{2, 9, 8, 17}, {0, 2, 1, 3}}, {{3, 5, 7, 64}, {2, 0, 1, 3}},
                                   {{3, 5, 7, 64}, {1, 2, 0, 3}}, {{2, 3, 4, 5, 33}, {3, 1, 0, 2, 4}},
                                   {{1, 7, 1, 40}, {2, 1, 0, 3}}, {{0, 4, 3, 32}, {0, 2, 1, 3}},
                                   {{6, 1, 70}, {1, 0, 2}},       {{5, 4, 3, 2, 1, 64}, {4, 3, 2, 1, 0, 5}}};
  uint32_t seed = 1;
  for (const auto& c : cases)
    for (DType dt : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kInt64}) {
      Tensor x = filled(dt, c.s, seed++);
      Tensor a = Tensor::zeros(dt, transpose_shape(c.s, c.perm)), b = Tensor::zeros(dt, transpose_shape(c.s, c.perm));
      transpose_cpu(x, c.perm, a);
      transpose_ref(x, c.perm, b);
      EXPECT_TRUE(same_bytes(a, b)) << dtype_name(dt) << " " << shape_to_string(c.s);
    }
}

TEST(TransposeRows, StridedViewsWithPermutedOuterDims) {
  // A [4, 6, 32] output read from a [6, 8, 64] source with the outer dims swapped and every
  // second row: outer strides 64 and 2 * 64 * 8... in a permuted order, inner stride 1.
  Tensor src = filled(DType::kFloat32, {6, 8, 64}, 99);
  const Shape out = {4, 6, 32};
  for (const Strides& st : {Strides{2 * 64, 8 * 64, 1}, Strides{64, 8 * 64, 1}, Strides{64, -8 * 64, 1}}) {
    const int64_t offset = st[1] < 0 ? 5 * 8 * 64 : 3;
    Tensor a = Tensor::zeros(DType::kFloat32, out), b = Tensor::zeros(DType::kFloat32, out);
    strided_copy(src.data(), offset, out, st, a.data(), 4);
    strided_copy_ref(src.data(), offset, out, st, b.data(), 4);
    EXPECT_TRUE(same_bytes(a, b)) << st[0] << " " << st[1];
  }
}

TEST(TransposeBatched2D, RegisterTilesAndTheirEdgesMatchTheReference) {
  // (0, 2, 1) and (1, 0) transposes: both sides around the 16-wide register tile (0, 1, 15, 16,
  // 17, 33), every element size (4-byte elements take whole tiles through registers).
  uint32_t seed = 200;
  for (int64_t rows : {1, 15, 16, 17, 33})
    for (int64_t cols : {0, 1, 15, 16, 17, 48})
      for (DType dt : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kInt64}) {
        for (const std::vector<int64_t>& perm : {std::vector<int64_t>{0, 2, 1}, std::vector<int64_t>{1, 0}}) {
          const Shape s = perm.size() == 3 ? Shape{3, rows, cols} : Shape{rows, cols};
          Tensor x = filled(dt, s, seed++);
          Tensor a = Tensor::zeros(dt, transpose_shape(s, perm)), b = Tensor::zeros(dt, transpose_shape(s, perm));
          transpose_cpu(x, perm, a);
          transpose_ref(x, perm, b);
          EXPECT_TRUE(same_bytes(a, b)) << dtype_name(dt) << " " << shape_to_string(s) << " perm size " << perm.size();
        }
      }
}

}  // namespace
