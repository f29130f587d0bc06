// The four float8 formats of ONNX (opset 19): encode from float32 and decode to float32.
//   E4M3FN   (1-4-3, bias 7):  no infinities; NaN = S.1111.111; max 448.
//   E4M3FNUZ (bias 8):         no infinities, no -0; NaN = 0x80; max 240.
//   E5M2     (1-5-2, bias 15): IEEE-like: inf = S.11111.00, NaN = S.11111.{01,10,11}; max 57344.
//   E5M2FNUZ (bias 16):        no infinities, no -0; NaN = 0x80; max 57344.
// Encoding rounds to nearest, ties to the even code (subnormals included). A finite value
// beyond the largest finite one (after rounding) and +-inf become +-max with saturate, else
// inf (E5M2) or NaN (the others); NaN -> NaN; the FNUZ formats write -0 and negative values
// that round to 0 as +0. This is the ONNX specification's table (onnx.helper's converters).
#pragma once

#include <cstdint>

#include "pointrt/pointrt.h"

namespace pointrt {

inline bool is_float8_type(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ;
}

/// float8 code -> float32 (t must be a float8 type).
float float8_to_float(uint8_t code, DType t);
/// float32 -> float8 code.
uint8_t float_to_float8(float v, DType t, bool saturate);

}  // namespace pointrt
