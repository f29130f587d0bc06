// Per-element maths of the binary, variadic and ternary elementwise operators. All use numpy
// multidirectional broadcasting (bcast::broadcast_shape), except PRelu whose slope broadcasts
// unidirectionally to X (before opset 7: a 1-D slope of X.dim(1) values applies per channel).
//
// Rules worth writing down:
//  - Integer Add/Sub/Mul wrap on overflow (numpy); no signed-overflow UB.
//  - Integer Div truncates toward zero (C); a zero divisor is an error naming the node and the
//    position of the first zero; INT_MIN / -1 wraps to INT_MIN instead of trapping.
//  - Mod, fmod = 1: C fmod / % (the result has the dividend's sign). fmod = 0: Python/numpy
//    `%` (the result has the divisor's sign), for integers and, as the ONNX reference does, for
//    floats too. An integer zero divisor is an error.
//  - Pow: float bases compute std::pow in the base type when the exponent has the same type,
//    in double otherwise (numpy promotes float32 ** int64 to float64, then ONNX casts back).
//    Integer ** integer is exact by repeated squaring with wrap-around; a negative exponent
//    gives the truncated real result (1, -1 or 0). Integer ** float goes through double and
//    elementwise::convert.
//  - Max/Min propagate NaN (numpy maximum/minimum). Mean = Sum / count, in the input type.
//  - Where(cond, x, y): three-way broadcast, cond must be bool.
//  - BitShift (unsigned integers): a shift by the type's width or more gives 0.
//    BitwiseAnd/Or/Xor: on integers only.
#pragma once

#include <cmath>
#include <type_traits>

#include "ops/onnx/elementwise/elementwise.h"

namespace pointrt::elementwise {

template <BinaryOp kOp, typename T>
inline auto binary_apply(T a, T b) {
  if constexpr (kOp == BinaryOp::kAdd)
    return wrap_add(a, b);
  else if constexpr (kOp == BinaryOp::kSub)
    return wrap_sub(a, b);
  else if constexpr (kOp == BinaryOp::kMul)
    return wrap_mul(a, b);
  else if constexpr (kOp == BinaryOp::kDiv) {
    if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      return b == T(-1) ? wrap_neg(a) : T(a / b);
    else
      return T(a / b);
  } else if constexpr (kOp == BinaryOp::kEqual)
    return a == b;
  else if constexpr (kOp == BinaryOp::kGreater)
    return a > b;
  else if constexpr (kOp == BinaryOp::kGreaterOrEqual)
    return a >= b;
  else if constexpr (kOp == BinaryOp::kLess)
    return a < b;
  else if constexpr (kOp == BinaryOp::kLessOrEqual)
    return a <= b;
  else if constexpr (kOp == BinaryOp::kAnd)
    return static_cast<uint8_t>(a & b);
  else if constexpr (kOp == BinaryOp::kOr)
    return static_cast<uint8_t>(a | b);
  else if constexpr (kOp == BinaryOp::kXor)
    return static_cast<uint8_t>(a ^ b);
  else if constexpr (std::is_integral_v<T>) {  // bit operators (run_binary rejects other types)
    if constexpr (kOp == BinaryOp::kBitwiseAnd)
      return static_cast<T>(a & b);
    else if constexpr (kOp == BinaryOp::kBitwiseOr)
      return static_cast<T>(a | b);
    else if constexpr (kOp == BinaryOp::kBitwiseXor)
      return static_cast<T>(a ^ b);
    else {
      // BitShift is defined on unsigned types; a shift by the width or more gives 0 (numpy).
      using U = std::make_unsigned_t<T>;
      const U ua = static_cast<U>(a), ub = static_cast<U>(b);
      if (ub >= sizeof(U) * 8) return T(0);
      if constexpr (kOp == BinaryOp::kBitShiftLeft)
        return static_cast<T>(static_cast<U>(ua << ub));
      else
        return static_cast<T>(static_cast<U>(ua >> ub));
    }
  } else {
    return a;
  }
}

constexpr bool is_bit_operator(BinaryOp op) {
  return op == BinaryOp::kBitShiftLeft || op == BinaryOp::kBitShiftRight || op == BinaryOp::kBitwiseAnd ||
         op == BinaryOp::kBitwiseOr || op == BinaryOp::kBitwiseXor;
}

/// C-style remainder (fmod = 1): sign of the dividend. Integer b must be non-zero.
template <typename T>
inline T mod_trunc(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return std::fmod(a, b);
  else if constexpr (std::is_signed_v<T>)
    return b == T(-1) ? T(0) : T(a % b);
  else
    return T(a % b);
}
/// Python-style remainder (fmod = 0): sign of the divisor. Integer b must be non-zero.
template <typename T>
inline T mod_floor(T a, T b) {
  if constexpr (std::is_unsigned_v<T>) {
    return T(a % b);
  } else {
    T r = mod_trunc(a, b);
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
    return r;
  }
}

template <typename T>
inline T max_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return (a != a || a > b) ? a : (b != b ? b : (a == b ? a : b));
  else
    return a > b ? a : b;
}
template <typename T>
inline T min_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return (a != a || a < b) ? a : (b != b ? b : (a == b ? a : b));
  else
    return a < b ? a : b;
}

/// Integer power by squaring, wrapping on overflow; negative exponents truncate toward zero.
template <typename B, typename E>
inline B int_pow(B base, E exp) {
  if constexpr (std::is_signed_v<E>) {
    if (exp < E(0)) {
      if (base == B(1)) return B(1);
      if constexpr (std::is_signed_v<B>)
        if (base == B(-1)) return (exp % 2) ? B(-1) : B(1);
      return B(0);
    }
  }
  B result = B(1);
  using UE = std::make_unsigned_t<E>;
  UE e = static_cast<UE>(exp);
  while (e) {
    if (e & 1u) result = wrap_mul(result, base);
    e >>= 1;
    if (e) base = wrap_mul(base, base);
  }
  return result;
}

template <typename B, typename E>
inline B pow_apply(B a, E b) {
  if constexpr (std::is_floating_point_v<B>) {
    if constexpr (std::is_same_v<B, E>)
      return std::pow(a, b);
    else
      return static_cast<B>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  } else if constexpr (std::is_integral_v<E>) {
    return int_pow(a, b);
  } else {
    return convert<B>(std::pow(static_cast<double>(a), static_cast<double>(b)));
  }
}

}  // namespace pointrt::elementwise
