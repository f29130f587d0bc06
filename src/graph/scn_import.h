// Import of NVIDIA CUDA-CenterPoint / 3DSparseConvolution scn.onnx files (see scn_import.cc).
#pragma once

#include <string>
#include <vector>

namespace onnx {
class ModelProto;
}

namespace pointrt {
/// Rewrite an scn.onnx model in place into pointrt-domain nodes; false (untouched) when the
/// model has no default-domain SparseConvolution / ScatterDense node. Adds a note. The sparse
/// family registers it as a ForeignImporter (register_sparse()).
bool rewrite_nvidia_scn(onnx::ModelProto& model, std::vector<std::string>& notes);
}  // namespace pointrt
