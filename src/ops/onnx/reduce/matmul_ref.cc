// Naive MatMul / Gemm: every output element as a sum over k in long double / 64-bit integers,
// batch indices mapped back to the operands by numpy's broadcasting rule.
#include <vector>

#include "ops/onnx/reduce/matmul.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {

void matmul_reference(const Tensor& a, const Tensor& b, Tensor& y) {
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const size_t br = std::max(as.size(), bs.size()) - 2;
  // Output batch shape and each operand's batch dims left-padded with 1.
  Shape ob(br), ab(br, 1), bb(br, 1);
  for (size_t i = 0; i < as.size() - 2; ++i) ab[br - (as.size() - 2) + i] = as[i];
  for (size_t i = 0; i < bs.size() - 2; ++i) bb[br - (bs.size() - 2) + i] = bs[i];
  for (size_t i = 0; i < br; ++i) ob[i] = std::max(ab[i], bb[i]);
  if (ab != ob || bb != ob)
    for (size_t i = 0; i < br; ++i)
      if (ab[i] == 0 || bb[i] == 0) ob[i] = 0;
  const int64_t batch = shape_numel(ob);
  dispatch_numeric(a.dtype(), "matmul_reference", [&](auto tag) {
    using T = decltype(tag);
    using W = std::conditional_t<std::is_floating_point<T>::value, long double, T>;
    const T* A = a.data_as<T>();
    const T* B = b.data_as<T>();
    T* Y = y.data_as<T>();
    for (int64_t n = 0; n < batch; ++n) {
      // Unravel n over ob, then ravel into each operand (index 0 where its dim is 1).
      int64_t rem = n, ia = 0, ib = 0, mul_a = 1, mul_b = 1;
      for (size_t i = br; i-- > 0;) {
        int64_t d = rem % ob[i];
        rem /= ob[i];
        ia += (ab[i] == 1 ? 0 : d) * mul_a;
        ib += (bb[i] == 1 ? 0 : d) * mul_b;
        mul_a *= ab[i];
        mul_b *= bb[i];
      }
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          W s = 0;
          for (int64_t k = 0; k < K; ++k)
            s = detail::wadd(s, detail::wmul(W(A[(ia * M + i) * K + k]), W(B[(ib * K + k) * N + j])));
          Y[(n * M + i) * N + j] = T(s);
        }
    }
  });
}

void gemm_reference(const Tensor& a, const Tensor& b, const Tensor* c, bool trans_a, bool trans_b, float alpha,
                    float beta, Tensor& y) {
  const int64_t M = y.dim(0), N = y.dim(1), K = trans_a ? a.dim(0) : a.dim(1);
  dispatch_numeric(a.dtype(), "gemm_reference", [&](auto tag) {
    using T = decltype(tag);
    using W = std::conditional_t<std::is_floating_point<T>::value, long double, T>;
    const T* A = a.data_as<T>();
    const T* B = b.data_as<T>();
    std::vector<T> cfull;
    if (c && beta != 0.0f) {
      cfull.resize(M * N);
      detail::expand_to(c->data_as<T>(), c->shape(), {M, N}, cfull.data());
    }
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        W s = 0;
        for (int64_t k = 0; k < K; ++k) {
          T av = trans_a ? A[k * M + i] : A[i * K + k];
          T bv = trans_b ? B[j * K + k] : B[k * N + j];
          s = detail::wadd(s, detail::wmul(W(av), W(bv)));
        }
        W r = detail::wmul(W(alpha), s);
        if (!cfull.empty()) r = detail::wadd(r, detail::wmul(W(beta), W(cfull[i * N + j])));
        y.data_as<T>()[i * N + j] = T(r);
      }
  });
}

}  // namespace pointrt::reduce
