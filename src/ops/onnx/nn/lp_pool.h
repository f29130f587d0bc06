// LpPool (ONNX 1, 2, 11, 18) and GlobalLpPool (1, 2): y = (sum over the window of |x|^p)^(1/p),
// padding contributing 0. Windows, padding, auto_pad, ceil_mode and dilations as the other
// pools (pool.h). p: attribute, default 2 (a float before opset 2, an integer after).
#pragma once

#include "ops/kernel.h"
#include "ops/onnx/nn/pool.h"

namespace pointrt::nn {

/// x, y: float32/float64 planes [N*C, spatial...] laid out as g says.
void lp_pool_ref(const PoolGeometry& g, double p, const Tensor& x, Tensor& y);
std::unique_ptr<OpKernel> make_lp_pool_kernel(const KernelInit& init, bool global);

}  // namespace pointrt::nn
