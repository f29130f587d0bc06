// pointrt::InstanceReduce (docs/operators-pose.md): a masked per-instance reduction from a
// segmentation, e.g. the mean of each object's centre votes or points.
//
//   values [B, N, D] float32, labels [B, N] int32/int64 -> reduced [B, C, D] float32, counts [B, C] int32
//   attributes: num_instances C >= 1 (required); reduction "mean" (default) or "sum"; ignore_label (-1).
//
// Point i of batch b belongs to instance labels[b, i] unless the label is negative or equals
// ignore_label; a label >= C is an error. Sums run in float64 in point order, then are rounded
// to float32 (mean: sum / count). An instance without points has counts 0 and reduced 0 (the flag).
// Non-finite values propagate into their instance's result (this is a plain reduction).
#pragma once

#include <cstdint>
#include <string>

#include "graph/ir.h"

namespace pointrt::pose {

struct InstanceReduceAttrs {
  int64_t num_instances = 0;
  bool mean = true;
  int64_t ignore_label = -1;
};

InstanceReduceAttrs parse_instance_reduce(const Attributes& attrs, const std::string& where);

/// Naive reference (the oracle). `labels` int32 already checked to be < C.
void instance_reduce_ref(const float* values, const int32_t* labels, int64_t batch, int64_t n, int64_t channels,
                         const InstanceReduceAttrs& attrs, float* reduced, int32_t* counts);
/// Optimised: OpenMP over (batch, block of channels); the same summation order as the reference
/// (bit-identical results).
void instance_reduce(const float* values, const int32_t* labels, int64_t batch, int64_t n, int64_t channels,
                     const InstanceReduceAttrs& attrs, float* reduced, int32_t* counts);

}  // namespace pointrt::pose
