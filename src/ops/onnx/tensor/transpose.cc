#include "ops/onnx/tensor/transpose.h"

namespace pointrt::tensor {

std::vector<int64_t> transpose_perm(const std::vector<int64_t>& perm, size_t rank, const std::string& where) {
  if (perm.empty()) {
    std::vector<int64_t> r(rank);
    for (size_t d = 0; d < rank; ++d) r[d] = static_cast<int64_t>(rank - 1 - d);
    return r;
  }
  if (perm.size() != rank) fail(where, ": attribute 'perm' has ", perm.size(), " entries but input 0 has rank ", rank);
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> r(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t p = perm[d];
    if (p < -static_cast<int64_t>(rank) || p >= static_cast<int64_t>(rank))
      fail(where, ": attribute 'perm' entry ", d, " is ", p, ", outside [0, ", rank - 1, "]");
    if (p < 0) p += rank;
    if (seen[p]) fail(where, ": attribute 'perm' repeats axis ", p, " (not a permutation)");
    seen[p] = true;
    r[d] = p;
  }
  return r;
}

Shape transpose_shape(const Shape& in, const std::vector<int64_t>& perm) {
  Shape s(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) s[d] = in[perm[d]];
  return s;
}

void transpose_cpu(const Tensor& x, const std::vector<int64_t>& perm, Tensor& y) {
  Strides in = contiguous_strides(x.shape()), src(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) src[d] = in[perm[d]];
  strided_copy(x.data(), 0, y.shape(), src, y.data(), dtype_size(x.dtype()));
}

}  // namespace pointrt::tensor
