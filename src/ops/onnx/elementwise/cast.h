// Cast between every numeric type, bool, float16, bfloat16, float8, int4 and string (ONNX Cast,
// opsets 1-21; before opset 6 the `to` attribute is a type name string such as "FLOAT").
//  - Casting to the input's own type returns the input without a copy.
//  - float -> integer truncates toward zero (a C cast) for values in range; NaN -> 0 and values
//    beyond the target's range saturate (elementwise::convert; a C cast is UB there). Anything -> bool is
//    `value != 0`, so NaN -> true as numpy does. bool -> number gives 0 or 1.
//  - -> float16 rounds to nearest even from float32; double -> float16 goes through float32.
//  - -> bfloat16 keeps the upper 16 bits of the float32 value (truncation), as ONNX's reference
//    implementation and its test data do; NaN stays NaN. bfloat16 -> anything is exact via float32.
//  - float8 (opset 19; core/float8.h): to float8 rounds float32 to nearest even; `saturate`
//    (default 1) sends overflow and +-inf to +-max, else to inf (E5M2) or NaN; float8 -> anything
//    decodes exactly to float32 first.
//  - int4/uint4 (opset 21; stored unpacked, core/subbyte.h): to int4 clamps to [-8, 7] / [0, 15],
//    then rounds half to even, as ONNX's reference (NaN -> 0); int4 -> anything is exact.
//  - string -> float8/int4 is an error naming the node; complex targets are reported as "not
//    supported" when the kernel is built, so a model using them fails at prepare time.
#pragma once

#include "ops/onnx/elementwise/elementwise.h"
