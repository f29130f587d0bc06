// Kernel factories of the nn family (table.cc wires them into the operator table).
#pragma once

#include <memory>
#include <string>

#include "ops/kernel.h"

namespace pointrt::nn {

std::unique_ptr<OpKernel> make_conv_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_conv_transpose_kernel(const KernelInit& init);
/// Internal "pointrt.internal::FusedConv": Conv with BatchNorm folded in, optional fused
/// residual Add (input 3, a oneDNN sum post-op) and ReLU post-op. Made by the nn graph pass.
std::unique_ptr<OpKernel> make_fused_conv_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_max_pool_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_average_pool_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_global_average_pool_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_global_max_pool_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_batch_norm_kernel(const KernelInit& init);

/// Implementation oneDNN picked for a Conv kernel at input shape `x` ("reference" when the
/// naive kernel runs); "" when `k` is not a conv kernel. For tests and tuning.
std::string conv_impl_name(const OpKernel& k, const Shape& x);
/// Winograd is tried for 3x3 stride-1 convolutions unless POINTRT_WINOGRAD=0.
bool winograd_enabled();
/// False where a Winograd implementation's extra memory (transformed weights beyond the plain
/// ones) is more than the layer is worth (see conv.cc); POINTRT_WINOGRAD=1 takes Winograd
/// wherever oneDNN has it.
bool winograd_worth_its_memory(double extra_weight_bytes, double layer_output_bytes);

/// A new constant value holding `t`, named `base` (or `base_1`, ... when taken); returns its id.
int add_constant(Graph& g, const std::string& base, const Tensor& t);

/// The graph pass: fold BatchNorm into Conv, fuse Add/Relu, choose blocked edges.
bool fuse_conv_batchnorm_relu(Graph& g);

}  // namespace pointrt::nn
