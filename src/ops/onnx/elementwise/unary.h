// Per-element maths of the unary elementwise operators (ONNX semantics, opsets 7-21).
// Output shape = input shape; output type = input type except Not/IsNaN/IsInf (bool).
//
// Rules worth writing down:
//  - Round: half to even (std::nearbyint in the default rounding mode), as ONNX specifies.
//  - Abs/Neg of the most negative signed integer wrap (numpy does the same); no UB.
//  - Sign: -1, 0 or 1; NaN stays NaN.
//  - Sigmoid: 1/(1+exp(-x)); float32 uses elementwise::fast_exp_block (vectorised, within 2 ulp; below
//    x = -88.7 the result is 0 where the exact value would be subnormal). Exp and Tanh float32
//    likewise (fast_exp_block, fast_tanh_block); other precisions use <cmath>.
//  - Softplus: log(1+exp(x)) computed as max(x,0) + log1p(exp(-|x|)) so it never overflows.
//  - HardSigmoid: max(0, min(1, alpha*x + beta)); HardSwish: x * HardSigmoid(x; 1/6, 0.5).
//  - Elu: x >= 0 ? x : alpha*(exp(x)-1) (ONNX: x < 0 uses the exponential).
//  - LeakyRelu: x >= 0 ? x : alpha*x.  Relu: max(x, 0) with NaN propagated.
//  - Selu: gamma * (x > 0 ? x : alpha*(exp(x)-1)), alpha/gamma (params alpha/beta) default to
//    1.67326319217681884765625 / 1.05070102214813232421875. Celu: max(0,x) + min(0, alpha*(exp(x/alpha)-1)).
//  - ThresholdedRelu: x > alpha ? x : 0. Softsign: x / (1 + |x|).
//  - Shrink: x < -lambd ? x + bias : (x > lambd ? x - bias : 0) (lambd/bias = params alpha/beta);
//    integers compute in double and convert back (elementwise::convert), as numpy's reference does.
//  - Gelu: x/2 * (1 + erf(x/sqrt(2))); approximate = "tanh": x/2 * (1 + tanh(sqrt(2/pi)*(x + 0.044715x^3))).
//  - Mish: x * tanh(softplus(x)). Tan/Asin/.../Atanh: <cmath>, NaN outside the domain.
//  - BitwiseNot: ~x on integers.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/onnx/elementwise/elementwise.h"

namespace pointrt::elementwise {

struct UnaryParams {
  float alpha = 0;
  float beta = 0;
};

// The activations and trigonometric functions added after the first set (float types only).
template <UnaryOp kOp, typename T>
inline T unary_apply_more(T x, const UnaryParams& p) {
  if constexpr (kOp == UnaryOp::kSelu)
    return T(p.beta) * (x > T(0) ? x : T(p.alpha) * (std::exp(x) - T(1)));
  else if constexpr (kOp == UnaryOp::kCelu)
    return (x > T(0) ? x : T(0)) + std::min(T(0), T(p.alpha) * (std::exp(x / T(p.alpha)) - T(1)));
  else if constexpr (kOp == UnaryOp::kThresholdedRelu)
    return x > T(p.alpha) ? x : T(0);
  else if constexpr (kOp == UnaryOp::kSoftsign)
    return x / (T(1) + std::fabs(x));
  else if constexpr (kOp == UnaryOp::kGelu)
    return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
  else if constexpr (kOp == UnaryOp::kGeluTanh)
    return T(0.5) * x * (T(1) + std::tanh(T(0.79788456080286535588) * (x + T(0.044715) * x * x * x)));
  else if constexpr (kOp == UnaryOp::kMish)
    return x * std::tanh((x > T(0) ? x : T(0)) + std::log1p(std::exp(-std::fabs(x))));
  else if constexpr (kOp == UnaryOp::kTan)
    return std::tan(x);
  else if constexpr (kOp == UnaryOp::kAsin)
    return std::asin(x);
  else if constexpr (kOp == UnaryOp::kAcos)
    return std::acos(x);
  else if constexpr (kOp == UnaryOp::kAtan)
    return std::atan(x);
  else if constexpr (kOp == UnaryOp::kSinh)
    return std::sinh(x);
  else if constexpr (kOp == UnaryOp::kCosh)
    return std::cosh(x);
  else if constexpr (kOp == UnaryOp::kAsinh)
    return std::asinh(x);
  else if constexpr (kOp == UnaryOp::kAcosh)
    return std::acosh(x);
  else if constexpr (kOp == UnaryOp::kAtanh)
    return std::atanh(x);
}

template <UnaryOp kOp, typename T>
inline T unary_apply(T x, const UnaryParams& p) {
  if constexpr (kOp == UnaryOp::kBitwiseNot) {
    if constexpr (std::is_integral_v<T>)
      return static_cast<T>(~x);
    else
      return x;  // run_unary rejects non-integer types first
  } else if constexpr (kOp == UnaryOp::kShrink) {
    const double v = static_cast<double>(x);
    return convert<T>(v < -double(p.alpha) ? v + double(p.beta) : (v > double(p.alpha) ? v - double(p.beta) : 0.0));
  } else if constexpr (kOp == UnaryOp::kAbs) {
    if constexpr (std::is_unsigned_v<T>)
      return x;
    else if constexpr (std::is_integral_v<T>)
      return x < T(0) ? wrap_neg(x) : x;
    else
      return std::fabs(x);
  } else if constexpr (kOp == UnaryOp::kNeg) {
    return wrap_neg(x);
  } else if constexpr (kOp == UnaryOp::kSign) {
    if constexpr (std::is_floating_point_v<T>)
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);  // keeps 0, -0, NaN
    else if constexpr (std::is_unsigned_v<T>)
      return x > T(0) ? T(1) : T(0);
    else
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
  } else if constexpr (kOp == UnaryOp::kRelu) {
    return x > T(0) ? x : (x == x ? T(0) : x);
  } else {
    static_assert(std::is_floating_point_v<T>, "float-only operator");
    if constexpr (kOp == UnaryOp::kCeil)
      return std::ceil(x);
    else if constexpr (kOp == UnaryOp::kFloor)
      return std::floor(x);
    else if constexpr (kOp == UnaryOp::kRound)
      return std::nearbyint(x);
    else if constexpr (kOp == UnaryOp::kExp) {
      if constexpr (std::is_same_v<T, float>)
        return fast_exp(x);
      else
        return std::exp(x);
    } else if constexpr (kOp == UnaryOp::kLog)
      return std::log(x);
    else if constexpr (kOp == UnaryOp::kSqrt)
      return std::sqrt(x);
    else if constexpr (kOp == UnaryOp::kReciprocal)
      return T(1) / x;
    else if constexpr (kOp == UnaryOp::kSigmoid) {
      if constexpr (std::is_same_v<T, float>)
        return 1.0f / (1.0f + fast_exp(-x));
      else
        return x >= 0 ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
    } else if constexpr (kOp == UnaryOp::kTanh)
      return std::tanh(x);
    else if constexpr (kOp == UnaryOp::kSin)
      return std::sin(x);
    else if constexpr (kOp == UnaryOp::kCos)
      return std::cos(x);
    else if constexpr (kOp == UnaryOp::kErf)
      return std::erf(x);
    else if constexpr (kOp == UnaryOp::kSoftplus)
      return (x > T(0) ? x : T(0)) + std::log1p(std::exp(-std::fabs(x)));
    else if constexpr (kOp == UnaryOp::kLeakyRelu)
      return x >= T(0) ? x : T(p.alpha) * x;
    else if constexpr (kOp == UnaryOp::kElu)
      return x >= T(0) ? x : T(p.alpha) * (std::exp(x) - T(1));
    else if constexpr (kOp == UnaryOp::kHardSigmoid) {
      T v = T(p.alpha) * x + T(p.beta);
      v = v < T(0) ? T(0) : v;
      return v > T(1) ? T(1) : v;
    } else if constexpr (kOp == UnaryOp::kHardSwish) {
      T v = x * T(1.0 / 6.0) + T(0.5);
      v = v < T(0) ? T(0) : v;
      return x * (v > T(1) ? T(1) : v);
    } else {
      return unary_apply_more<kOp>(x, p);
    }
  }
}

/// Operators defined on integers as well as floats (the rest are float-only).
constexpr bool unary_accepts_ints(UnaryOp op) {
  return op == UnaryOp::kAbs || op == UnaryOp::kNeg || op == UnaryOp::kSign || op == UnaryOp::kRelu ||
         op == UnaryOp::kShrink || op == UnaryOp::kBitwiseNot;
}

}  // namespace pointrt::elementwise
