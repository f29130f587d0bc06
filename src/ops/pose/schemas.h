// ONNX schemas of the pose operators (type constraints, attributes, shape inference).
#pragma once

#include <vector>

#include "onnx/defs/schema.h"

namespace pointrt::pose {
/// The schemas of MeanShift, InstanceReduce and RigidFit (domain "pointrt", opset 1);
/// register_pose() returns them.
std::vector<onnx::OpSchema> pose_schemas();
}  // namespace pointrt::pose
