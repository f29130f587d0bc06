// ONNX BatchNormalization, inference form (opsets 7, 9, 14, 15):
//   Y = (X - mean) / sqrt(var + epsilon) * scale + B, per channel (axis 1) of X [N, C, ...].
// Opset 7 with spatial = 0 takes per-activation parameters of shape X.shape[1:].
// training_mode = 1 (opset 14+) normalises with the batch's own statistics, as the spec says, and
// outputs the updated running statistics; `pointrt inspect` warns about such nodes, since a
// deployed model with BatchNorm left in training mode is almost always an export mistake.
// The kernel is two fused multiply-adds per element; it is its own reference (one loop).
#pragma once

#include <cstdint>
#include <vector>

namespace pointrt::nn {

/// Per-channel y = x * mul[c] + add[c] over `outer` blocks of `channels` x `inner` elements.
void batch_norm_apply(const float* x, float* y, int64_t outer, int64_t channels, int64_t inner, const float* mul,
                      const float* add);
/// mul = scale / sqrt(var + eps), add = B - mean * mul.
void batch_norm_coefficients(const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
                             int64_t n, std::vector<float>& mul, std::vector<float>& add);

}  // namespace pointrt::nn
