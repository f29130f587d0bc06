// ONNX protobuf -> pointrt Graph.
#pragma once

#include <memory>
#include <string>

#include "graph/ir.h"
#include "graph/tensor_proto.h"

namespace onnx {
class ModelProto;
class TensorProto;
}  // namespace onnx

namespace pointrt {

namespace detail {
struct ModelImpl {
  std::string path;  // file name used in messages
  Graph graph;
  std::vector<ValueInfo> inputs, outputs;
  std::vector<std::string> import_notes;  // e.g. "rewritten from NVIDIA scn.onnx"
  int64_t ir_version = 0;
  std::string producer;
};
}  // namespace detail

/// Parse, rewrite foreign formats, run ONNX shape inference, convert.
std::shared_ptr<detail::ModelImpl> import_onnx(const void* data, size_t size, const ExternalDataRoots& roots,
                                               const std::string& display_name);

/// Hook for importers of foreign files written in ONNX form (NVIDIA scn.onnx). Returns true
/// when it rewrote the model; adds a note to `notes`.
using ForeignImporter = bool (*)(onnx::ModelProto& model, std::vector<std::string>& notes);
void register_foreign_importer(ForeignImporter importer);

}  // namespace pointrt
