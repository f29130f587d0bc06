// Expand and Tile: fast vs reference.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ops/onnx/tensor/expand.h"
#include "unit/tensor/tensor_test_util.h"

namespace pointrt::tensor {
namespace {

using namespace test_helpers;

TEST(TensorExpandTile, FastMatchesReference) {
  std::mt19937 rng(10);
  for (int iter = 0; iter < 300; ++iter) {
    const int rank = iter % 5;
    Shape s = random_shape(rng, rank);
    Shape target(rank + rng() % 2);
    for (size_t d = 0; d < target.size(); ++d) {
      const size_t pad = target.size() - rank;
      target[d] =
          d < pad ? static_cast<int64_t>(rng() % 3) : (s[d - pad] == 1 ? static_cast<int64_t>(rng() % 4) : s[d - pad]);
    }
    std::vector<int64_t> reps(rank);
    for (auto& r : reps) r = static_cast<int64_t>(rng() % 4);
    for (DType dt : kSizes) {
      Tensor x = random_tensor(dt, s, rng);
      Shape out = broadcast_shape(s, target, "test");
      Tensor a = Tensor::zeros(dt, out), b = Tensor::zeros(dt, out);
      expand_cpu(x, a);
      expand_ref(x, b);
      ASSERT_TRUE(same_bytes(a, b)) << shape_to_string(s) << " -> " << shape_to_string(out);
      Shape ts = tile_shape(s, reps, "test");
      Tensor c = Tensor::zeros(dt, ts), e = Tensor::zeros(dt, ts);
      tile_cpu(x, reps, c);
      tile_ref(x, reps, e);
      ASSERT_TRUE(same_bytes(c, e)) << shape_to_string(s) << " tiled";
    }
  }
  std::string msg = error_of([&] { run_op("Expand", 13, {f32({3}, {1, 2, 3}), i64({1}, {4})}); });
  EXPECT_NE(msg.find("do not broadcast"), std::string::npos) << msg;
}

}  // namespace
}  // namespace pointrt::tensor
