// Dropout and Identity (ONNX opsets 1-21).
// Dropout: output 0 is the input itself (aliased, no copy) and the optional mask (output 1) all
// ones -- of the input's type before opset 10, bool from opset 10 -- unless the node trains:
//  - opset < 7: attribute is_test = 0 (its default) trains with attribute `ratio` (default 0.5);
//  - opset >= 12: optional input training_mode = true trains with input `ratio`.
// Training keeps an element with probability 1 - ratio and scales kept ones by 1 / (1 - ratio);
// the mask says which were kept (dropout.cc: how the random stream is drawn).
// Identity: output 0 aliases input 0 (ctx.set_output), no copy.
#pragma once

#include "ops/onnx/elementwise/elementwise.h"
