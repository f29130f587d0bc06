#include "core/half.h"

#include <string>

namespace pointrt {

Tensor to_float32(const Tensor& t) {
  if (!is_half_type(t.dtype())) return t;
  Tensor f = Tensor::allocate(DType::kFloat32, t.shape());
  const uint16_t* src = t.data_as<uint16_t>();
  float* dst = f.data_as<float>();
  const int64_t n = t.numel();
  if (t.dtype() == DType::kFloat16) {
#pragma omp parallel for if (n >= (1 << 16))
    for (int64_t i = 0; i < n; ++i) dst[i] = half_to_float(src[i]);
  } else {
#pragma omp parallel for if (n >= (1 << 16))
    for (int64_t i = 0; i < n; ++i) dst[i] = bfloat16_to_float(src[i]);
  }
  return f;
}

void float32_to_half(const Tensor& src, Tensor& dst) {
  if (src.numel() != dst.numel() || src.dtype() != DType::kFloat32 || !is_half_type(dst.dtype()))
    throw Error("float32_to_half: needs float32 -> float16/bfloat16 of equal size, got " +
                std::string(dtype_name(src.dtype())) + " -> " + dtype_name(dst.dtype()));
  const float* s = src.data_as<float>();
  uint16_t* d = dst.data_as<uint16_t>();
  const int64_t n = src.numel();
  if (dst.dtype() == DType::kFloat16) {
#pragma omp parallel for if (n >= (1 << 16))
    for (int64_t i = 0; i < n; ++i) d[i] = float_to_half(s[i]);
  } else {
#pragma omp parallel for if (n >= (1 << 16))
    for (int64_t i = 0; i < n; ++i) d[i] = float_to_bfloat16(s[i]);
  }
}

}  // namespace pointrt
