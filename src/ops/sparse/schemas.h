// ONNX schemas of the sparse operators (type constraints, attributes, type and shape inference):
// what `inspect`, `check` and ONNX's shape inference know of Voxelize, SparseConv and ScatterDense.
#pragma once

#include <vector>

#include "onnx/defs/schema.h"

namespace pointrt::sparse {
/// The schemas of Voxelize, SparseConv and ScatterDense (domain "pointrt", opset 1);
/// register_sparse() returns them. The number of voxels or output sites is data-dependent: such
/// a dimension is left unknown, except a submanifold convolution's, which is its input's.
std::vector<onnx::OpSchema> sparse_schemas();
}  // namespace pointrt::sparse
