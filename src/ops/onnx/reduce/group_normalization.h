// GroupNormalization (ONNX 18, 21) on X [N, C, ...] with num_groups G dividing C:
//   per (n, group): mean and biased variance over its C/G channels and all spatial positions,
//   y = (x - mean) / sqrt(var + epsilon) * scale + bias (epsilon default 1e-5).
// Opset 18: scale and bias have G entries (one per group); opset 21: C entries (per channel).
// Statistics in double (opset 21's stash_type = 1, float32 or wider, is met).
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

/// x, y: float32/float64 [N, C, S]; scale/bias of x's type with `per_channel` ? C : G entries.
void group_normalization_ref(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t groups, bool per_channel,
                             float epsilon, Tensor& y);
std::unique_ptr<OpKernel> make_group_normalization_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
