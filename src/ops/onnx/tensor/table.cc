// Operator table rows of the ONNX tensor family.
#include "ops/families.h"

namespace pointrt {
void register_onnx_tensor(OpTable& t) {}
}  // namespace pointrt
