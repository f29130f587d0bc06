// Cast kernel.
#include "ops/onnx/elementwise/cast.h"
#include "ops/onnx/elementwise/cast_string.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>

#if defined(__AVX512F__) && defined(__AVX512DQ__)
#include <immintrin.h>
#endif

#include "core/avx512_gcc12.h"
#include "core/float8.h"
#include "core/subbyte.h"

namespace pointrt::elementwise {
namespace {

bool castable(DType t) {
  return is_half_type(t) || t == DType::kBool || is_float_type(t) || is_int_type(t) || t == DType::kString ||
         is_float8_type(t) || is_int4_type(t);
}

const char* onnx_type_name(int64_t code) {
  switch (code) {
    case 8: return "string";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    default: return "an unknown type";
  }
}

// Cast-1..5 name the target type as a string: TensorProto.DataType's enum names.
int64_t type_code_from_name(const std::string& name, const std::string& where) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",       "UINT16",  "INT16",
                                       "INT32",     "INT64",  "STRING",    "BOOL",       "FLOAT16", "DOUBLE",
                                       "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  for (int64_t code = 1; code < static_cast<int64_t>(std::size(kNames)); ++code)
    if (name == kNames[code]) return code;
  fail(where, ": attribute 'to' is '", name, "', not a TensorProto data type name (\"FLOAT\", \"INT64\", ...)");
}

int64_t target_type_code(const KernelInit& init) {
  auto it = init.attrs().items.find("to");
  if (it != init.attrs().items.end() && it->second.kind == Attribute::Kind::kString)
    return type_code_from_name(it->second.s, init.where());
  return init.attrs().get_int("to");
}

template <typename What>
Tensor to_float32_values(const Tensor& x, const What& what);
void run_cast(KernelContext& ctx, const Tensor& x, DType to, bool saturate);

// float8 and 4-bit sources: decoded to float32 (exact for every float8 and int4 value), or
// for int4/uint4 copied as the int8/uint8 values they are stored as, then cast from there.
void cast_from_small(KernelContext& ctx, const Tensor& x, DType to, bool saturate) {
  const int64_t n = x.numel();
  if (is_int4_type(x.dtype())) {  // a copy, not a view: the result may alias its input
    Tensor v = Tensor::allocate(x.dtype() == DType::kInt4 ? DType::kInt8 : DType::kUInt8, x.shape());
    if (n) std::memcpy(v.data(), x.data(), static_cast<size_t>(n));
    return run_cast(ctx, v, to, saturate);
  }
  Tensor f = Tensor::allocate(DType::kFloat32, x.shape());
  for (int64_t i = 0; i < n; ++i) f.data_as<float>()[i] = float8_to_float(x.data_as<uint8_t>()[i], x.dtype());
  run_cast(ctx, f, to, saturate);
}

// To float8 (rounded to nearest even; overflow per `saturate`, core/float8.h) or to int4/uint4
// (clamped to the range, then rounded to nearest even, as ONNX's reference does; NaN gives 0).
void cast_to_small(KernelContext& ctx, const Tensor& x, DType to, bool saturate) {
  if (x.dtype() == DType::kString)
    fail(ctx.where(), ": Cast from string to ", dtype_name(to), " is not supported (input 0)");
  const Tensor f =
      is_half_type(x.dtype()) || x.dtype() == DType::kFloat32 ? to_float32(x) : to_float32_values(x, ctx.where());
  Tensor& y = ctx.output(0, to, x.shape());
  const int64_t n = x.numel();
  const float* v = f.data_as<float>();
  uint8_t* out = y.data_as<uint8_t>();
  if (is_float8_type(to)) {
    for (int64_t i = 0; i < n; ++i) out[i] = float_to_float8(v[i], to, saturate);
    return;
  }
  int64_t lo = 0, hi = 0;
  int4_range(to, lo, hi);
  for (int64_t i = 0; i < n; ++i) {
    const float c = std::isnan(v[i]) ? 0.f : std::min(std::max(v[i], static_cast<float>(lo)), static_cast<float>(hi));
    out[i] = static_cast<uint8_t>(static_cast<int8_t>(std::nearbyint(c)));
  }
}

// Any numeric or bool tensor as float32 values.
template <typename What>
Tensor to_float32_values(const Tensor& x, const What& what) {
  Tensor f = Tensor::allocate(DType::kFloat32, x.shape());
  dispatch_all(x.dtype(), what, [&](auto stag) {
    using S = decltype(stag);
    bcast::unary(x.data_as<S>(), f.data_as<float>(), x.numel(), [](S v) { return static_cast<float>(v); });
  });
  return f;
}

#if defined(__AVX512F__) && defined(__AVX512DQ__)
// float32 -> int64 / int32 with convert<>'s results (NaN 0, out of range clamped), 16 at a time.
// vcvttps2qq / vcvttps2dq give the lowest integer for NaN and for values out of range, which is
// already right below the range; values at or above 2^63 (2^31) and NaN are fixed by two masks.
// GCC 12 kept convert<>'s float -> double -> compare path in 256-bit vectors: 1.35x ONNX
// Runtime's time at 1e5 elements to int64.
template <typename D>
void float_to_int_row(const float* x, D* y, int64_t n) {
  static_assert(std::is_same_v<D, int64_t> || std::is_same_v<D, int32_t>);
  const __m512 too_big = _mm512_set1_ps(static_cast<float>(std::numeric_limits<D>::max()));  // rounds to 2^63 / 2^31
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 in_range = n - i >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(in_range, x + i);
    const __mmask16 big = _mm512_cmp_ps_mask(v, too_big, _CMP_GE_OQ), nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    if constexpr (std::is_same_v<D, int32_t>) {
      __m512i r = _mm512_mask_mov_epi32(_mm512_cvttps_epi32(v), big, _mm512_set1_epi32(INT32_MAX));
      r = _mm512_mask_mov_epi32(r, nan, _mm512_setzero_si512());
      _mm512_mask_storeu_epi32(y + i, in_range, r);
    } else {
      const __m256 halves[2] = {_mm512_castps512_ps256(v),
                                _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))};
      for (int h = 0; h < 2; ++h) {
        const auto lanes = [h](__mmask16 m) { return static_cast<__mmask8>(m >> (8 * h)); };
        __m512i r = _mm512_mask_mov_epi64(_mm512_cvttps_epi64(halves[h]), lanes(big), _mm512_set1_epi64(INT64_MAX));
        r = _mm512_mask_mov_epi64(r, lanes(nan), _mm512_setzero_si512());
        _mm512_mask_storeu_epi64(y + i + 8 * h, lanes(in_range), r);
      }
    }
  }
}
#endif

void run_cast(KernelContext& ctx, const Tensor& x, DType to, bool saturate) {
  if (!castable(x.dtype())) fail(ctx.where(), ": Cast from ", dtype_name(x.dtype()), " is not supported");
  if (x.dtype() == to) {  // nothing to convert: alias the input
    ctx.set_output(0, x);
    return;
  }
  if (is_float8_type(x.dtype()) || is_int4_type(x.dtype())) return cast_from_small(ctx, x, to, saturate);
  if (is_float8_type(to) || is_int4_type(to)) return cast_to_small(ctx, x, to, saturate);
  if (to == DType::kString) return cast_to_string(ctx, x);
  if (x.dtype() == DType::kString) return cast_from_string(ctx, x, to);
  const Tensor xs = to_float32(x);  // float16 sources are read as float32
  Tensor& y = ctx.output(0, to, x.shape());
  const int64_t n = x.numel();
  const WhereAnd what{ctx.where(), " input 0"};
  if (to == DType::kBFloat16) {  // truncate the float32 bits, as ONNX's reference Cast does (NaN stays NaN)
    const Tensor f = xs.dtype() == DType::kFloat32 ? xs : to_float32_values(xs, what);
    bcast::unary(f.data_as<float>(), y.data_as<uint16_t>(), n, [](float v) {
      const uint32_t bits = __builtin_bit_cast(uint32_t, v);
      return v != v ? static_cast<uint16_t>((bits >> 16) | 0x40u) : static_cast<uint16_t>(bits >> 16);
    });
    return;
  }
  if (is_half_type(to)) {  // through float32: double -> half rounds twice
    if (xs.dtype() == DType::kFloat32) {
      float32_to_half(xs, y);
      return;
    }
    float32_to_half(to_float32_values(xs, what), y);
    return;
  }
#if defined(__AVX512F__) && defined(__AVX512DQ__)
  if (xs.dtype() == DType::kFloat32 && (to == DType::kInt64 || to == DType::kInt32)) {
    const float* src = xs.data_as<float>();
    bcast::detail::for_ranges(n, [&](int64_t begin, int64_t end) {
      if (to == DType::kInt64)
        float_to_int_row(src + begin, y.data_as<int64_t>() + begin, end - begin);
      else
        float_to_int_row(src + begin, y.data_as<int32_t>() + begin, end - begin);
    });
    return;
  }
#endif
  dispatch_all(xs.dtype(), what, [&](auto stag) {
    using S = decltype(stag);
    dispatch_all(to, "Cast target", [&](auto dtag) {
      using D = decltype(dtag);
      if constexpr (std::is_same_v<S, bool> && !std::is_same_v<D, bool>) {  // bytes: the loop then vectorises
        bcast::unary(static_cast<const uint8_t*>(xs.data()), y.data_as<D>(), n,
                     [](uint8_t v) { return v ? D(1) : D(0); });
      } else {
        bcast::unary(xs.data_as<S>(), y.data_as<D>(), n, [](S v) { return convert<D>(v); });
      }
    });
  });
}

// float8 targets exist from opset 19, int4/uint4 from 21.
void check_target(DType to, int64_t to_code, int opset, const std::string& where) {
  const bool known = (to_code >= 1 && to_code <= 13) || (to_code >= 16 && to_code <= 22);
  const int since = is_int4_type(to) ? 21 : is_float8_type(to) ? 19 : 1;
  if (!known || !castable(to) || opset < since)
    fail(where, ": Cast to ", onnx_type_name(to_code), " (to=", to_code, ") is not supported",
         opset < since && known ? str_cat(" before opset ", since) : std::string());
}

}  // namespace

KernelFactory cast_factory() {
  return [](const KernelInit& init) {
    const int64_t to_code = target_type_code(init);
    const DType to = static_cast<DType>(to_code);
    check_target(to, to_code, init.opset(), init.where());
    const bool saturate = init.attrs().get_int("saturate", 1) != 0;  // opset 19; float8 targets only
    return make_function_kernel([to, saturate](KernelContext& ctx) { run_cast(ctx, ctx.input(0), to, saturate); });
  };
}

KernelFactory castlike_factory() {
  return [](const KernelInit& init) {
    const bool saturate = init.attrs().get_int("saturate", 1) != 0;
    const int opset = init.opset();
    return make_function_kernel([saturate, opset](KernelContext& ctx) {
      const DType to = ctx.input(1).dtype();
      check_target(to, static_cast<int64_t>(to), opset, ctx.where());
      run_cast(ctx, ctx.input(0), to, saturate);
    });
  };
}

}  // namespace pointrt::elementwise
