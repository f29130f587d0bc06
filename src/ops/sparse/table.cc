// Operator table rows of the pointrt sparse family.
#include "ops/families.h"

namespace pointrt {
void register_sparse(OpTable& t) {}
}  // namespace pointrt
