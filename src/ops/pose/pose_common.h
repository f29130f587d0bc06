// Shared pieces of the pose family (docs/operators-pose.md): label checks and per-instance
// bucketing of points.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/common.h"

namespace pointrt::pose {

/// The labels of a [B, N] int32/int64 tensor as int32. A label >= num_instances is an error naming
/// the node, the input, the value and its position; negative labels are kept (they mean "no instance").
std::vector<int32_t> read_labels(const Tensor& labels, int64_t num_instances, const std::string& where,
                                 const std::string& name);

/// Points of one batch grouped by instance: the points of instance c are
/// order[offsets[c] .. offsets[c + 1]), ascending. Labels < 0 and `ignore_label` are left out.
struct InstanceBuckets {
  std::vector<int64_t> offsets;  // C + 1
  std::vector<int32_t> order;
};
InstanceBuckets bucket_by_instance(const int32_t* labels, int64_t n, int64_t num_instances, int64_t ignore_label);

inline bool finite3(const float* p) { return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]); }

}  // namespace pointrt::pose
