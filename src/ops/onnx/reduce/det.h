// Det (ONNX 11): determinant of every square matrix in the last two dimensions of X [..., M, M];
// output [...]. LU decomposition with partial pivoting in double (M = 0 gives 1).
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

/// x: float32/float64 [batch, M, M]; y: [batch].
void det_ref(const Tensor& x, int64_t batch, int64_t M, Tensor& y);
std::unique_ptr<OpKernel> make_det_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
