// ONNX operator schemas of the pointrt domain's PointNet++ operators, so that ONNX's type and
// shape inference (run when a model is imported) propagates shapes through these nodes.
#pragma once

namespace pointrt {
namespace pointnet2 {

/// Registers the "pointrt" domain (opset 1..1) with ONNX if nobody has yet, and the schemas of
/// FurthestPointSample, GatherPoints, BallQuery, GroupPoints, ThreeNN, ThreeInterpolate, KNN.
/// Idempotent and thread-safe.
void register_pointnet2_schemas();

}  // namespace pointnet2
}  // namespace pointrt
