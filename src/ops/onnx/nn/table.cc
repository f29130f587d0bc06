// Operator table rows of the ONNX nn family.
#include "ops/families.h"

namespace pointrt {
void register_onnx_nn(OpTable& t) {}
}  // namespace pointrt
