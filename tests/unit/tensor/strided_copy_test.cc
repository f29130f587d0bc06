// The strided copy engine against its reference on random views.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "ops/onnx/tensor/tensor_utils.h"
#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;

TEST(TensorStridedCopy, MatchesReferenceOnRandomViews) {
  std::mt19937 rng(1);
  for (int iter = 0; iter < 400; ++iter) {
    const int rank = static_cast<int>(rng() % 7);
    Shape out = random_shape(rng, rank);
    Shape src_shape = out;
    for (auto& d : src_shape) d = std::max<int64_t>(d, 1) * 2;
    const Strides base = contiguous_strides(src_shape);
    Strides st(rank);
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d) {
      int kind = static_cast<int>(rng() % 4);  // 0: broadcast, 1: forward, 2: reverse, 3: step 2
      if (kind == 0)
        st[d] = 0;
      else if (kind == 1)
        st[d] = base[d];
      else if (kind == 2) {
        st[d] = -base[d];
        offset += (std::max<int64_t>(out[d], 1) - 1) * base[d];
      } else
        st[d] = 2 * base[d];  // the source dims are twice as big: a stride-2 walk fits
    }
    for (DType dt : kSizes) {
      Tensor src = random_tensor(dt, src_shape, rng);
      Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
      strided_copy(src.data(), offset, out, st, a.data(), dtype_size(dt));
      strided_copy_ref(src.data(), offset, out, st, b.data(), dtype_size(dt));
      ASSERT_TRUE(same_bytes(a, b)) << "iter " << iter << " shape " << shape_to_string(out);
    }
  }
}

}  // namespace
}  // namespace pointrt::tensor
