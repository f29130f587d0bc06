// The ONNX strings family: string operators and TfIdfVectorizer.
#include "ops/families.h"
#include "ops/onnx/strings/string_ops.h"

namespace pointrt {

Family register_onnx_strings() {
  using namespace strings;
  Family family{"onnx/strings"};
  add_string_rows(family.rows);
  return family;
}

}  // namespace pointrt
