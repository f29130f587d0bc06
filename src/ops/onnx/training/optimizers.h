// The optimiser steps of ai.onnx.preview.training (version 1). Inputs: R (learning rate,
// float scalar), T (update count, int64 scalar), then n tensors X, n gradients G and the
// optimiser's state tensors; outputs the n new X and the new state, in that order. All
// element-wise, computed in double, as ONNX's definitions:
//   every step: G' = norm_coefficient * X + G
//   Adagrad  (X, G, H): r = R / (1 + T * decay_factor); H' = H + G'^2;
//                       X' = X - r * G' / (sqrt(H') + epsilon)
//   Momentum (X, G, V): b = T > 0 ? beta : 1; V' = alpha * V + b * G';
//                       standard: X' = X - R * V'; nesterov: X' = X - R * (G' + alpha * V')
//   Adam  (X, G, V, H): V' = alpha V + (1 - alpha) G'; H' = beta H + (1 - beta) G'^2;
//                       r = T > 0 ? R sqrt(1 - beta^T) / (1 - alpha^T) : R;
//                       X' = (1 - norm_coefficient_post) (X - r V' / (sqrt(H') + epsilon))
// Defaults: Adagrad epsilon 1e-6; Adam alpha 0.9, beta 0.999, epsilon 1e-6; Momentum needs
// alpha, beta and mode. Each group's tensors must share X's shape and type.
#pragma once

#include "ops/kernel.h"

namespace pointrt::training {

inline const char kTrainingDomain[] = "ai.onnx.preview.training";

enum class OptimizerKind { kAdagrad, kMomentum, kAdam };

struct OptimizerParams {
  OptimizerKind kind = OptimizerKind::kAdagrad;
  double alpha = 0, beta = 0, epsilon = 1e-6, decay_factor = 0, norm_coefficient = 0, norm_coefficient_post = 0;
  bool nesterov = false;
};

/// One element's step: x, g and state s (1 value for Adagrad/Momentum, 2 for Adam: V, H) ->
/// returns x' and updates s in place.
double optimizer_step_ref(const OptimizerParams& p, double r, int64_t t, double x, double g, double* state);

std::unique_ptr<OpKernel> make_optimizer_kernel(const KernelInit& init, OptimizerKind kind);
/// Table rows of the training domain.
void add_training_rows(OpTable& t);

}  // namespace pointrt::training
