// NegativeLogLikelihoodLoss (ONNX 12, 13) and SoftmaxCrossEntropyLoss (12, 13).
//
// NLL: input [N, C] or [N, C, d1..dk] (log-probabilities), target [N] or [N, d1..dk]
//   (int32/int64 class indices), optional weight [C]. Per position p with class t = target[p]:
//   loss[p] = -input[n, t, d...] * w[t], w = weight or 1; a position whose target equals the
//   attribute ignore_index has loss 0 and weight 0. reduction: none (loss [N, d1..dk]), sum,
//   mean (default: sum(loss) / sum of the weights of the non-ignored positions; 0/0 is NaN, as
//   numpy). A target outside [0, C) that is not ignore_index is an error naming the position.
// SoftmaxCrossEntropyLoss: log_prob = LogSoftmax(scores) along axis 1, then NLL(log_prob,
//   labels, weights) with the same reduction and ignore_index; optional output 1 is log_prob.
// Sums are accumulated in double; float16/bfloat16 inputs are computed in float32.
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

enum class LossReduction { kNone, kSum, kMean };

struct LossParams {
  LossReduction reduction = LossReduction::kMean;
  bool has_ignore_index = false;
  int64_t ignore_index = 0;
};

/// input: float32/float64 [N, C, D] (D = prod(d1..dk), 1 when absent); target: int64 [N, D];
/// weight: [C] of input's type or null. Returns loss values [N * D] (reduction none) or one value.
std::vector<double> nll_loss_ref(const Tensor& input, const std::vector<int64_t>& target, const Tensor* weight,
                                 int64_t N, int64_t C, int64_t D, const LossParams& p, const std::string& where);

std::unique_ptr<OpKernel> make_nll_loss_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_softmax_cross_entropy_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
