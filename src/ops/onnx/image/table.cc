// Operator table rows of the ONNX image family.
#include "ops/families.h"

namespace pointrt {
void register_onnx_image(OpTable& t) {}
}  // namespace pointrt
