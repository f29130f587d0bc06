// EyeLike oracle (eye_like.h): every element written from the definition.
#include <algorithm>
#include <climits>
#include <cstring>

#include "core/half.h"
#include "graph/tensor_proto.h"
#include "ops/onnx/tensor/eye_like.h"

namespace pointrt::tensor {

namespace {

// The bytes of the value 1 in `dtype` (little endian, dtype_size(dtype) of them).
uint64_t one_bits(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return float_to_half(1.0f);
    case DType::kFloat32: {
      const float one = 1.0f;
      uint32_t bits;
      std::memcpy(&bits, &one, sizeof bits);
      return bits;
    }
    case DType::kFloat64: {
      const double one = 1.0;
      uint64_t bits;
      std::memcpy(&bits, &one, sizeof bits);
      return bits;
    }
    default: return 1;  // ints, uints, bool
  }
}

}  // namespace

const std::vector<DType>& eye_like_types() {
  static const std::vector<DType> types = [] {
    std::vector<DType> t = kAllTypes;
    t.push_back(DType::kFloat16);
    return t;
  }();
  return types;
}

DType eye_like_output_type(const Attributes& attrs, DType input, const std::string& where) {
  if (!attrs.has("dtype")) return input;
  const int64_t code = attrs.get_int("dtype");
  const auto& types = eye_like_types();
  const DType t =
      code >= 0 && code <= INT32_MAX ? dtype_from_onnx_code(static_cast<int32_t>(code), where) : DType::kUndefined;
  if (std::find(types.begin(), types.end(), t) == types.end())
    fail(where, ": attribute 'dtype' = ", code, " is not a type EyeLike makes (float16/32/64, ints, uints, bool)");
  return t;
}

// Element by element, as the definition reads.
void eye_like_ref(int64_t k, Tensor& y) {
  const int64_t rows = y.dim(0), cols = y.dim(1);
  const size_t es = dtype_size(y.dtype());
  const uint64_t one = one_bits(y.dtype()), zero = 0;
  auto* out = static_cast<char*>(y.data());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) std::memcpy(out + (i * cols + j) * es, j - i == k ? &one : &zero, es);
}

}  // namespace pointrt::tensor
