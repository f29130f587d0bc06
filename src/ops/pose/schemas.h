// ONNX schemas of the pose operators (type constraints, attributes, shape inference).
#pragma once

namespace pointrt {
namespace pose {
/// Registers MeanShift, InstanceReduce and RigidFit once (idempotent).
void register_pose_schemas();
}  // namespace pose
}  // namespace pointrt
