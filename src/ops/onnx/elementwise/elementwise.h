// Helpers shared by the elementwise kernels: float16 staging, overflow-safe integer arithmetic,
// well-defined float->integer conversion, a vectorisable float32 exp, and the kernel factories
// that table.cc uses for its rows.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "core/exp_poly.h"
#include "ops/kernel.h"
#include "ops/onnx/elementwise/broadcast.h"

namespace pointrt::elementwise {

// ---- float16: kernels compute in float32 and round once to half (what numpy does for float16
// arithmetic, and what the ONNX reference implementation therefore expects).

using ::pointrt::float32_to_half;  // core/half.h
using ::pointrt::to_float32;

// ---- integer arithmetic without undefined behaviour: signed overflow wraps (as numpy does).

template <typename T>
inline T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return static_cast<T>(a + b);
  }
}
template <typename T>
inline T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return static_cast<T>(a - b);
  }
}
template <typename T>
inline T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    // Multiply in the unsigned type of at least int's width (uint16*uint16 would promote to int).
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else if constexpr (std::is_integral_v<T> && sizeof(T) < sizeof(unsigned)) {
    return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
  } else {
    return static_cast<T>(a * b);
  }
}
template <typename T>
inline T wrap_neg(T a) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
    return wrap_sub(T(0), a);
  else
    return -a;
}

// ---- conversion between element types with no undefined behaviour.
// float -> integer truncates toward zero as a C cast does for values in range; NaN becomes 0 and
// values beyond the target's range saturate (a C cast is undefined there; numpy's result is
// platform-specific). Anything -> bool is `value != 0` (NaN -> true, as numpy).
template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    if (!(v == v)) return To(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<To>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<To>::max());
    const double d = static_cast<double>(v);
    if (d <= lo) return std::numeric_limits<To>::lowest();
    if (d >= hi) return std::numeric_limits<To>::max();  // hi may round up for 64-bit: >= keeps it defined
    return static_cast<To>(v);
  } else {
    return static_cast<To>(v);
  }
}

// ---- exp for float32 that vectorises (Cephes expf: range reduction by ln2 in two parts, degree-6
// polynomial; within 2 ulp of std::exp). 2^n is applied as two factors so that the whole float
// range, including results that are subnormal, is covered. Overflow gives +inf, results below
// the smallest subnormal 0, NaN propagates.
namespace detail {
// exp on an already clamped argument c in [-104, 89]: straight-line code, no data-dependent
// branches (floor by truncation and one select of two cheap values).
inline float exp_clamped(float c) {
  const float t = c * 1.44269504088896341f + 0.5f;
  const float tt = static_cast<float>(static_cast<int32_t>(t));  // t is bounded: defined
  const float fx = tt > t ? tt - 1.0f : tt;                      // floor(t)
  float r = c - fx * 0.693359375f;
  r = r - fx * -2.12194440e-4f;
  const float z = r * r;
  float y = exp_poly(r);
  y = y * z + r + 1.0f;
  const int32_t n = static_cast<int32_t>(fx), n1 = n / 2, n2 = n - n1;  // n in [-150, 128]
  const float s1 = __builtin_bit_cast(float, (n1 + 127) << 23), s2 = __builtin_bit_cast(float, (n2 + 127) << 23);
  return (y * s1) * s2;  // exp(89) overflows to inf, exp(-104) underflows to 0 right here
}
// Clamp into exp_clamped's domain; NaN maps to the low end (the caller restores NaN).
inline float exp_clamp(float x) {
  const float c = x > -104.0f ? x : -104.0f;
  return c < 89.0f ? c : 89.0f;
}
inline float restore_nan(float x, float result) {
  const int32_t nan_bits = x != x ? 0x7fc00000 : 0;
  return __builtin_bit_cast(float, __builtin_bit_cast(int32_t, result) | nan_bits);
}
}  // namespace detail

/// Scalar form (clamp, evaluate, restore NaN).
inline float fast_exp(float x) { return detail::restore_nan(x, detail::exp_clamped(detail::exp_clamp(x))); }

/// y[i] = exp(sign * x[i]) for n <= 256 elements. Three separate passes: fused into one loop,
/// GCC threads the clamp's constant arm through the polynomial and gives up vectorising.
inline void fast_exp_block(const float* x, float* y, int64_t n, float sign = 1.0f) {
  float c[256];
  for (int64_t i = 0; i < n; ++i) c[i] = detail::exp_clamp(sign * x[i]);
  for (int64_t i = 0; i < n; ++i) c[i] = detail::exp_clamped(c[i]);
  for (int64_t i = 0; i < n; ++i) y[i] = detail::restore_nan(x[i], c[i]);
}

/// y[i] = tanh(x[i]) for n <= 256 elements (Cephes tanhf: an odd polynomial for |x| < 0.625,
/// 1 - 2 / (exp(2|x|) + 1) above, with the sign restored; within a few ulp of std::tanh).
inline void fast_tanh_block(const float* x, float* y, int64_t n) {
  float c[256];
  for (int64_t i = 0; i < n; ++i) c[i] = detail::exp_clamp(2.0f * std::fabs(x[i]));
  for (int64_t i = 0; i < n; ++i) c[i] = detail::exp_clamped(c[i]);
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i], a = std::fabs(v), z = v * v;
    const float small =
        ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z -
         3.33332819422e-1f) *
            z * v +
        v;
    const float big = std::copysign(1.0f - 2.0f / (c[i] + 1.0f), v);
    y[i] = detail::restore_nan(v, a < 0.625f ? small : big);
  }
}

/// y[i] = erf(x[i]) for n <= 256 elements: the odd Taylor series to x^9 for |x| < 0.35, else
/// Abramowitz & Stegun 7.1.26 (1 - t (a1 + t (a2 + ...)) exp(-x^2), t = 1 / (1 + p |x|)) with the
/// sign restored; within 4e-7 of std::erf (relative 3e-7 below 0.35) (the GELU of exported transformers runs through
/// it).
inline void fast_erf_block(const float* x, float* y, int64_t n) {
  // min(|x|, 4) (erf(4) rounds to 1 in float; NaN gives 4 and is restored below). Not std::fmin:
  // GCC calls fminf through the PLT for it, and the loops stay scalar (1.5 ms for 131k values).
  auto clamp_abs4 = [](float v) {
    const float a = std::fabs(v);
    return a < 4.0f ? a : 4.0f;
  };
  float c[256];
  for (int64_t i = 0; i < n; ++i) {
    const float a = clamp_abs4(x[i]);
    c[i] = detail::exp_clamp(-a * a);
  }
  for (int64_t i = 0; i < n; ++i) c[i] = detail::exp_clamped(c[i]);
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i], a = clamp_abs4(v), z = v * v;
    // 2/sqrt(pi) * (x - x^3/3 + x^5/10 - x^7/42 + x^9/216)
    const float small =
        v * (1.12837917f + z * (-0.376126389f + z * (0.112837917f + z * (-0.0268661707f + z * 0.00522397762f))));
    const float t = 1.0f / (1.0f + 0.3275911f * a);
    const float poly =
        t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
    const float big = std::copysign(1.0f - poly * c[i], v);
    y[i] = detail::restore_nan(v, a < 0.35f ? small : big);
  }
}

// ---- factories used by table.cc (one per kernel group).

enum class UnaryOp {
  kAbs,
  kNeg,
  kSign,
  kCeil,
  kFloor,
  kRound,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kSigmoid,
  kTanh,
  kSin,
  kCos,
  kErf,
  kSoftplus,
  kRelu,
  kLeakyRelu,
  kElu,
  kHardSigmoid,
  kHardSwish,
  kSelu,
  kCelu,
  kThresholdedRelu,
  kShrink,
  kSoftsign,
  kGelu,
  kGeluTanh,
  kMish,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kBitwiseNot,
};
KernelFactory unary_factory(UnaryOp op);
KernelFactory not_factory();
KernelFactory isnan_factory();
KernelFactory isinf_factory();
/// Clip: bounds as attributes (opset < 11) or as optional scalar inputs 1 and 2 (opset >= 11).
KernelFactory clip_factory(bool bounds_are_inputs);

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kEqual,
  kGreater,
  kGreaterOrEqual,
  kLess,
  kLessOrEqual,
  kAnd,
  kOr,
  kXor,
  kBitShiftLeft,
  kBitShiftRight,
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
};
KernelFactory binary_factory(BinaryOp op);
/// BitShift: `direction` attribute LEFT or RIGHT.
KernelFactory bitshift_factory();
/// Gelu: `approximate` attribute none or tanh.
KernelFactory gelu_factory();
/// Pow; `mixed_types` allows an exponent type different from the base (opset >= 12).
KernelFactory pow_factory(bool mixed_types);
enum class VariadicOp { kMax, kMin, kSum, kMean };
KernelFactory variadic_factory(VariadicOp op);
KernelFactory where_factory();
/// PRelu; `per_channel_slope` (opset < 7): a 1-D slope of X.dim(1) values applies per channel.
KernelFactory prelu_factory(bool per_channel_slope = false);

KernelFactory cast_factory();
/// CastLike: Cast input 0 to the element type of input 1 (target_type).
KernelFactory castlike_factory();
KernelFactory identity_factory();
/// Dropout. `mask_is_bool` (opset >= 10; before, the mask has the input's type);
/// `ratio_and_mode_are_inputs` (opset >= 12). Before opset 7 the `is_test` attribute selects
/// training (0, the default) or inference (1).
KernelFactory dropout_factory(bool mask_is_bool, bool ratio_and_mode_are_inputs);

}  // namespace pointrt::elementwise
