// ONNX schemas of the detector decode operators (type constraints, attributes, shape inference).
#pragma once

#include <vector>

#include "onnx/defs/schema.h"

namespace pointrt::detect {
/// The schemas of CenterPointDecode and BoxNMS (domain "pointrt", opset 1); register_detect()
/// returns them.
std::vector<onnx::OpSchema> detect_schemas();
}  // namespace pointrt::detect
