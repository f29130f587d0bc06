// Cast to and from string, with numpy's text forms (what ONNX's reference produces):
//  - float -> string: the shortest digits that read back to the same value; positional when
//    the decimal exponent is in [-4, 16) ("0.039187793", "1.0"), else scientific ("1e-05",
//    "1.5e+20"); "nan", "inf", "-inf". float16/bfloat16 as their float32 value (float16's
//    shortest digits are those of float32; numpy prints float16 with fewer).
//  - integer -> decimal digits; bool -> "True" / "False".
//  - string -> number: the whole string (surrounding whitespace allowed) must parse as the
//    target (strtod / strtoll rules: "1e3", "inf", "nan", "-7"); anything else is an error
//    naming the element. -> bool: "True"/"1" and "False"/"0".
#pragma once

#include "ops/onnx/elementwise/elementwise.h"

namespace pointrt::elementwise {

/// numpy's str() of a float32 / float64 value.
std::string float_to_text(double v, bool single);
void cast_to_string(KernelContext& ctx, const Tensor& x);
void cast_from_string(KernelContext& ctx, const Tensor& x, DType to);

}  // namespace pointrt::elementwise
