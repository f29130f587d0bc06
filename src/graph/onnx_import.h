// ONNX protobuf -> pointrt Graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

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

/// An importer of foreign files written in ONNX form (NVIDIA scn.onnx): rewrites the model in
/// place into standard and pointrt-domain nodes and returns true, adding a note to `notes`, or
/// returns false and leaves the model untouched. Families provide them (ops/registry.h).
using ForeignImporter = bool (*)(onnx::ModelProto& model, std::vector<std::string>& notes);

/// Parse, rewrite foreign formats (the first of `importers` that accepts the model), run ONNX
/// shape inference, convert. Schemas of custom domains must be registered with ONNX before
/// (Model::load does it through registry()).
std::shared_ptr<detail::ModelImpl> import_onnx(const void* data, size_t size, const ExternalDataRoots& roots,
                                               const std::string& display_name,
                                               const std::vector<ForeignImporter>& importers);

}  // namespace pointrt
