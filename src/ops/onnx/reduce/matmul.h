// MatMul (opsets 1..21) and Gemm (opsets 7..21), plus the GEMM helpers Einsum lowers to.
//
// MatMul follows numpy.matmul: a 1-D A is [1, K] (the 1 removed from the result), a 1-D B is
// [K, 1] (likewise); leading batch dimensions broadcast (numpy rules). Rank-0 operands and
// mismatched inner dimensions are errors naming both shapes.
// Gemm: Y = alpha * A' * B' + beta * C with A' = transA ? A^T : A ([M, K]), B' = transB ? B^T : B
// ([K, N]); C broadcasts unidirectionally to [M, N]; C is required before opset 11. With
// beta = 0 or no C, C is not read (so an inf/NaN in C does not leak into Y).
// float32 goes to oneDNN (dnnl_sgemm, or a matmul primitive with pre-packed weights when B is a
// constant and the shapes are known at prepare time); other types use a plain blocked loop.
#pragma once

#include "ops/kernel.h"

namespace pointrt::reduce {

/// Row-major C[M, N] = alpha * op(A) * op(B) + beta * C. beta = 0 never reads C.
template <typename T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
          int64_t ldb, T beta, T* C, int64_t ldc);

/// Batched C_i[M, N] = op(A_i) * op(B_i) for i < batch, with element strides between
/// consecutive matrices (0 = the same matrix for every i). A_i is [M, K] ([K, M] when trans_a),
/// B_i is [K, N] ([N, K] when trans_b), all dense row-major.
template <typename T>
void batched_matmul(int64_t batch, int64_t M, int64_t N, int64_t K, const T* A, int64_t stride_a, const T* B,
                    int64_t stride_b, T* C, bool trans_a = false, bool trans_b = false);

/// numpy.matmul output shape; errors (naming `where` and both shapes) on rank 0, an inner
/// dimension mismatch or batch dimensions that do not broadcast.
Shape matmul_output_shape(const Shape& a, const Shape& b, const std::string& where);

/// y = matmul(a, b), y allocated by the caller with matmul_output_shape.
void matmul_optimized(const Tensor& a, const Tensor& b, Tensor& y);
void matmul_reference(const Tensor& a, const Tensor& b, Tensor& y);

/// Gemm on 2-D A and B; c may be null. y allocated [M, N].
void gemm_optimized(const Tensor& a, const Tensor& b, const Tensor* c, bool trans_a, bool trans_b, float alpha,
                    float beta, Tensor& y);
void gemm_reference(const Tensor& a, const Tensor& b, const Tensor* c, bool trans_a, bool trans_b, float alpha,
                    float beta, Tensor& y);

std::unique_ptr<OpKernel> make_matmul_kernel(const KernelInit& init);
/// `c_optional`: opset >= 11.
std::unique_ptr<OpKernel> make_gemm_kernel(const KernelInit& init, bool c_optional);

}  // namespace pointrt::reduce
