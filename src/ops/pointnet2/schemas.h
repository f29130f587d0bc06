// ONNX operator schemas of the pointrt domain's PointNet++ operators, so that ONNX's type and
// shape inference (run when a model is imported) propagates shapes through these nodes.
#pragma once

#include <vector>

#include "onnx/defs/schema.h"

namespace pointrt::pointnet2 {

/// The schemas of FurthestPointSample, GatherPoints, BallQuery, GroupPoints, ThreeNN,
/// ThreeInterpolate, KNN (domain "pointrt", opset 1); register_pointnet2() returns them.
std::vector<onnx::OpSchema> pointnet2_schemas();

}  // namespace pointrt::pointnet2
