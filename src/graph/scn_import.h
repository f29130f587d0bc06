// Import of NVIDIA CUDA-CenterPoint / 3DSparseConvolution scn.onnx files (see scn_import.cc).
#pragma once

#include <string>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace pointrt {
/// Rewrite an scn.onnx model in place into pointrt-domain nodes; false (untouched) when the
/// model has no default-domain SparseConvolution / ScatterDense node. Adds a note.
bool rewrite_nvidia_scn(onnx::ModelProto& model, std::vector<std::string>& notes);
/// Register rewrite_nvidia_scn as a foreign importer (idempotent).
void register_scn_importer();
}  // namespace pointrt
