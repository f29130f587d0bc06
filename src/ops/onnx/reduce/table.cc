// Operator table rows of the ONNX reduce family.
#include "ops/families.h"

namespace pointrt {
void register_onnx_reduce(OpTable& t) {}
}  // namespace pointrt
