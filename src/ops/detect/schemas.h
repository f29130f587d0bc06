// ONNX schemas of the detector decode operators (type constraints, attributes, shape inference).
#pragma once

namespace pointrt {
namespace detect {
/// Registers CenterPointDecode and BoxNMS once (idempotent).
void register_detect_schemas();
}  // namespace detect
}  // namespace pointrt
