// ONNX BatchNormalization (opsets 1, 6, 7, 9, 14, 15):
//   Y = (X - mean) / sqrt(var + epsilon) * scale + B, per channel (axis 1) of X [N, C, ...].
// Before opset 9, spatial = 0 takes per-activation parameters of shape X.shape[1:].
// Training -- training_mode = 1 (opset 14+), or is_test = 0 (opset < 7, where it is the
// default) -- normalises with the batch's own statistics, as the spec says, and outputs the
// updated running statistics (and, before opset 14, the batch's saved mean and variance);
// `pointrt inspect` warns about such nodes, since a deployed model with BatchNorm left in
// training mode is almost always an export mistake. consumed_inputs (opset 1) is ignored.
// The kernel is two fused multiply-adds per element; it is its own reference (one loop).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/ir.h"

namespace pointrt::nn {

/// True when the node normalises with batch statistics (training_mode / is_test, see above).
inline bool batch_norm_trains(const Attributes& a, int64_t opset) {
  if (opset >= 14) return a.get_int("training_mode", 0) != 0;
  return opset < 7 && a.get_int("is_test", 0) == 0;
}

/// Per-channel y = x * mul[c] + add[c] over `outer` blocks of `channels` x `inner` elements.
void batch_norm_apply(const float* x, float* y, int64_t outer, int64_t channels, int64_t inner, const float* mul,
                      const float* add);
/// mul = scale / sqrt(var + eps), add = B - mean * mul.
void batch_norm_coefficients(const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
                             int64_t n, std::vector<float>& mul, std::vector<float>& add);

}  // namespace pointrt::nn
