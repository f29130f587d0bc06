// QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear: parameter checks shared by every
// kernel and the naive reference kernels (the test oracle).
#include <algorithm>
#include <limits>

#include "core/float8.h"
#include "core/subbyte.h"
#include "ops/onnx/quant/quantize.h"

namespace pointrt::quant {

bool is_quantized_type(DType t) {
  return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16 || is_int4_type(t);
}

void quantized_range(DType t, int64_t& lo, int64_t& hi) {
  switch (t) {
    case DType::kInt8: lo = -128, hi = 127; return;
    case DType::kUInt8: lo = 0, hi = 255; return;
    case DType::kInt16: lo = -32768, hi = 32767; return;
    case DType::kUInt16: lo = 0, hi = 65535; return;
    case DType::kInt4: lo = -8, hi = 7; return;
    case DType::kUInt4: lo = 0, hi = 15; return;
    case DType::kInt32: lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max(); return;
    default: fail("quantization: ", dtype_name(t), " is not a quantized type");
  }
}

bool is_scale_type(DType t) { return t == DType::kFloat32 || t == DType::kFloat16; }

float load_as_float(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data_as<float>()[i];
    case DType::kFloat16: return half_to_float(t.data_as<uint16_t>()[i]);
    case DType::kInt32: return static_cast<float>(t.data_as<int32_t>()[i]);
    default: fail("quantization: cannot read ", dtype_name(t.dtype()), " as float");
  }
}

int64_t load_as_int(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kInt4) return t.data_as<int8_t>()[i];  // stored unpacked (core/subbyte.h)
  if (t.dtype() == DType::kUInt4) return t.data_as<uint8_t>()[i];
  int64_t v = 0;
  dispatch_numeric(t.dtype(), "quantization", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral<T>::value)
      v = static_cast<int64_t>(t.data_as<T>()[i]);
    else
      fail("quantization: ", dtype_name(t.dtype()), " is not an integer type");
  });
  return v;
}

QuantMapping quant_mapping(const Shape& x, const Shape& scale, const Shape* zero_point, int64_t axis,
                           int64_t block_size, const QuantNames& names, const std::string& where) {
  QuantMapping m;
  const int64_t rank = static_cast<int64_t>(x.size());
  // ONNX asks for equal shapes; ONNX Runtime's quantizer writes bias parameters as scale [1] with zero point [].
  auto single = [](const Shape& s) { return s.empty() || (s.size() == 1 && s[0] == 1); };
  if (zero_point && *zero_point != scale && !(single(*zero_point) && single(scale)))
    fail(where, ": zero point '", names.zero_point, "' has shape ", shape_to_string(*zero_point), " but scale '",
         names.scale, "' has shape ", shape_to_string(scale), " (they must be the same)");
  if (block_size < 0) fail(where, ": block_size ", block_size, " must be >= 0");
  if (block_size == 0 && single(scale)) return m;  // per tensor
  if (block_size == 0 && scale.size() != 1)
    fail(where, ": scale '", names.scale, "' has shape ", shape_to_string(scale),
         "; it must be a scalar or 1-D (per axis) unless block_size is set");
  if (rank == 0) fail(where, ": scale '", names.scale, "' is not a scalar but x '", names.x, "' is");
  const int64_t ax = normalize_axis(axis, rank, where);
  m.per_tensor = false;
  m.along = x[ax];
  for (int64_t i = 0; i < ax; ++i) m.outer *= x[i];
  for (int64_t i = ax + 1; i < rank; ++i) m.inner *= x[i];
  if (block_size == 0) {
    if (scale[0] != x[ax])
      fail(where, ": scale '", names.scale, "' has ", scale[0], " elements but x '", names.x, "' ", shape_to_string(x),
           " has ", x[ax], " along axis ", ax);
    return m;
  }
  Shape want = x;
  want[ax] = (x[ax] + block_size - 1) / block_size;
  if (scale != want)
    fail(where, ": scale '", names.scale, "' has shape ", shape_to_string(scale), " but blocks of ", block_size,
         " along axis ", ax, " of x '", names.x, "' ", shape_to_string(x), " need ", shape_to_string(want));
  m.block = block_size;
  return m;
}

namespace {

// The float8 value of a float8 zero point (0 in every valid model), or 0 without one.
float float8_zero_point(const Tensor* zero_point, int64_t p) {
  return zero_point ? float8_to_float(zero_point->data_as<uint8_t>()[p], zero_point->dtype()) : 0.f;
}

// float8 outputs: x / scale (+ the zero point) rounded to the format; overflow per `saturate`.
void quantize_float8_ref(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m,
                         bool saturate, Tensor& y) {
  const int64_t n = x.numel(), row = m.along * m.inner;
  uint8_t* out = y.data_as<uint8_t>();
  for (int64_t e = 0; e < n; ++e) {
    const int64_t p = m.param_index(e / row, (e / m.inner) % m.along, e % m.inner);
    const float v = load_as_float(x, e) / load_as_float(scale, p) + float8_zero_point(zero_point, p);
    out[e] = float_to_float8(v, y.dtype(), saturate);
  }
}

}  // namespace

void quantize_linear_ref(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m,
                         Tensor& y, bool saturate) {
  if (is_float8_type(y.dtype())) return quantize_float8_ref(x, scale, zero_point, m, saturate, y);
  int64_t lo, hi;
  quantized_range(y.dtype(), lo, hi);
  const int64_t n = x.numel(), row = m.along * m.inner;
  // int4/uint4 are stored as int8/uint8 values (core/subbyte.h)
  const DType storage = y.dtype() == DType::kInt4    ? DType::kInt8
                        : y.dtype() == DType::kUInt4 ? DType::kUInt8
                                                     : y.dtype();
  dispatch_numeric(storage, "QuantizeLinear", [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data_as<T>();
    for (int64_t e = 0; e < n; ++e) {
      const int64_t p = m.param_index(e / row, (e / m.inner) % m.along, e % m.inner);
      const int64_t zp = zero_point ? load_as_int(*zero_point, p) : 0;
      out[e] = static_cast<T>(saturate_round(load_as_float(x, e) / load_as_float(scale, p), zp, lo, hi));
    }
  });
}

void dequantize_linear_ref(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m,
                           Tensor& y) {
  const int64_t n = x.numel(), row = m.along * m.inner;
  for (int64_t e = 0; e < n; ++e) {
    const int64_t p = m.param_index(e / row, (e / m.inner) % m.along, e % m.inner);
    const float v = is_float8_type(x.dtype())
                        ? (float8_to_float(x.data_as<uint8_t>()[e], x.dtype()) - float8_zero_point(zero_point, p)) *
                              load_as_float(scale, p)
                        : static_cast<float>(load_as_int(x, e) - (zero_point ? load_as_int(*zero_point, p) : 0)) *
                              load_as_float(scale, p);
    if (y.dtype() == DType::kFloat16)
      y.data_as<uint16_t>()[e] = float_to_half(v);
    else
      y.data_as<float>()[e] = v;
  }
}

void dynamic_quantize_linear_ref(const Tensor& x, Tensor& y, Tensor& scale, Tensor& zero_point) {
  const float* in = x.data_as<float>();
  float lo = 0.f, hi = 0.f;
  for (int64_t e = 0; e < x.numel(); ++e) {
    lo = std::min(lo, in[e]);
    hi = std::max(hi, in[e]);
  }
  const float s = (hi == lo ? 1.f : hi - lo) / 255.f;
  const float zp = std::nearbyint(std::min(255.f, std::max(0.f, 0.f - lo / s)));
  scale.data_as<float>()[0] = s;
  zero_point.data_as<uint8_t>()[0] = static_cast<uint8_t>(zp);
  for (int64_t e = 0; e < x.numel(); ++e)
    y.data_as<uint8_t>()[e] = static_cast<uint8_t>(saturate_round(in[e] / s, static_cast<int64_t>(zp), 0, 255));
}

}  // namespace pointrt::quant
