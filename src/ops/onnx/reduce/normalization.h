// LayerNormalization (opset 17..21) and InstanceNormalization (opsets 6..21).
//
// LayerNormalization: X is seen as [N, D] with D = prod(dims[axis:]) (axis default -1).
//   Per row: mean, var = mean((x - mean)^2) (biased), inv = 1 / sqrt(var + epsilon),
//   Y = (x - mean) * inv * Scale + B. Scale and the optional B broadcast (numpy rules) to
//   dims[axis:]. Optional outputs Mean and InvStdDev are float32 (stash_type 1, the only
//   stash type the spec's U allows here) with shape dims[:axis] + [1] * (rank - axis).
//   Statistics are accumulated in double.
// InstanceNormalization: X [N, C, spatial...] (rank >= 2), scale [C], B [C]; per (n, c) the
//   same normalisation over the spatial elements, epsilon default 1e-5.
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

/// scale/bias are dense [D] (already broadcast); mean/inv_std may be null.
template <typename T>
void layer_norm_optimized(const T* x, const T* scale, const T* bias, int64_t N, int64_t D, float epsilon, T* y,
                          float* mean, float* inv_std);
template <typename T>
void layer_norm_reference(const T* x, const T* scale, const T* bias, int64_t N, int64_t D, float epsilon, T* y,
                          float* mean, float* inv_std);
template <typename T>
void instance_norm_optimized(const T* x, const T* scale, const T* bias, int64_t N, int64_t C, int64_t S, float epsilon,
                             T* y);
template <typename T>
void instance_norm_reference(const T* x, const T* scale, const T* bias, int64_t N, int64_t C, int64_t S, float epsilon,
                             T* y);

std::unique_ptr<OpKernel> make_layer_norm_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_instance_norm_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
