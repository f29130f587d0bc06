#include "ops/index_types.h"

namespace pointrt {

Tensor as_signed_indices(const Tensor& t) {
  if (t.dtype() != DType::kUInt32) return t;
  Tensor wide = Tensor::allocate(DType::kInt64, t.shape());
  const uint32_t* src = t.data_as<uint32_t>();
  int64_t* dst = wide.data_as<int64_t>();
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  return wide;
}

}  // namespace pointrt
