// Dropout and Identity, inference semantics (ONNX opsets 7-21).
// Dropout: output 0 is the input itself (aliased, no copy); the optional mask (output 1) is all
// ones: of the input's type before opset 10, bool from opset 10. From opset 12 `ratio` and
// `training_mode` are optional inputs: training_mode = true is accepted only when ratio == 0
// (then dropout keeps everything); otherwise it is an error, since pointrt does not train and a
// random mask would not be reproducible anyway.
// Identity: output 0 aliases input 0 (ctx.set_output), no copy.
#pragma once

#include "ops/onnx/elementwise/elementwise.h"
