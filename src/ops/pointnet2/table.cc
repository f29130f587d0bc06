// Operator table rows of the pointrt pointnet2 family.
#include "ops/families.h"

namespace pointrt {
void register_pointnet2(OpTable& t) {}
}  // namespace pointrt
