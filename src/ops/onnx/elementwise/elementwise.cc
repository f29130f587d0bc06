// float16 staging shared by the elementwise kernels.
#include "ops/onnx/elementwise/elementwise.h"

namespace pointrt {
namespace ew {

Tensor to_float32(const Tensor& t) {
  if (t.dtype() != DType::kFloat16) return t;
  Tensor f = Tensor::allocate(DType::kFloat32, t.shape());
  const uint16_t* src = t.data_as<uint16_t>();
  float* dst = f.data_as<float>();
  bcast::unary(src, dst, t.numel(), [](uint16_t h) { return half_to_float(h); });
  return f;
}

void float32_to_half(const Tensor& src, Tensor& dst) {
  if (src.numel() != dst.numel()) fail("float32_to_half: ", src.numel(), " vs ", dst.numel(), " elements");
  bcast::unary(src.data_as<float>(), dst.data_as<uint16_t>(), src.numel(), [](float v) { return float_to_half(v); });
}

}  // namespace ew
}  // namespace pointrt
