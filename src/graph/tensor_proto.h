// ONNX TensorProto -> Tensor: raw, typed or external data, every size checked before memory is
// reserved.
#pragma once

#include <string>
#include <vector>

#include "pointrt/pointrt.h"

namespace onnx {
class TensorProto;
}  // namespace onnx

namespace pointrt {

/// Where external data may be read from. Locations are relative to `base_dir` (the model's
/// folder; "" = external data not allowed); after resolving every symbolic link the file must be
/// a regular file inside `base_dir` or one of `allowed_dirs`.
struct ExternalDataRoots {
  ExternalDataRoots(std::string base = "", std::vector<std::string> allowed = {})
      : base_dir(std::move(base)), allowed_dirs(std::move(allowed)) {}
  std::string base_dir;
  std::vector<std::string> allowed_dirs;
};

/// ONNX's TensorProto::DataType code -> DType (kString for strings); Error naming `where` for codes
/// pointrt has no type for.
DType dtype_from_onnx_code(int32_t code, const std::string& where);

/// Decode a TensorProto. `where` starts error messages ("model.onnx:").
Tensor tensor_from_proto(const onnx::TensorProto& proto, const ExternalDataRoots& roots, const std::string& where);

}  // namespace pointrt
