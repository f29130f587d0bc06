// Optimised InstanceReduce: the reference's loop split over (batch, channel block) with OpenMP;
// every accumulator sees the same additions in the same order, so results are bit-identical.
#include "ops/pose/instance_reduce.h"

#include <algorithm>
#include <vector>

#include "core/common.h"

namespace pointrt::pose {

InstanceReduceAttrs parse_instance_reduce(const Attributes& attrs, const std::string& where) {
  InstanceReduceAttrs a;
  a.num_instances = attrs.get_int("num_instances");
  const std::string reduction = attrs.get_string("reduction", "mean");
  a.ignore_label = attrs.get_int("ignore_label", -1);
  if (a.num_instances < 1 || a.num_instances > (int64_t(1) << 20))
    fail(where, ": attribute 'num_instances' = ", a.num_instances, " must be in [1, 2^20]");
  if (reduction != "mean" && reduction != "sum")
    fail(where, ": attribute 'reduction' = '", reduction, "' must be 'mean' or 'sum'");
  a.mean = reduction == "mean";
  return a;
}

void instance_reduce(const float* values, const int32_t* labels, int64_t batch, int64_t n, int64_t channels,
                     const InstanceReduceAttrs& a, float* reduced, int32_t* counts) {
  constexpr int64_t kBlock = 16;
  const int64_t instances = a.num_instances, blocks = (channels + kBlock - 1) / kBlock;
  for (int64_t b = 0; b < batch; ++b) {
    int32_t* count = counts + b * instances;
    std::fill(count, count + instances, 0);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t l = labels[b * n + i];
      if (l >= 0 && l != a.ignore_label) ++count[l];
    }
  }
#pragma omp parallel for collapse(2) schedule(static) if (batch * n * channels > (1 << 16))
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      const int64_t d0 = blk * kBlock, width = std::min(kBlock, channels - d0);
      std::vector<double> sums(static_cast<size_t>(instances * width), 0.0);
      for (int64_t i = 0; i < n; ++i) {
        const int32_t l = labels[b * n + i];
        if (l < 0 || l == a.ignore_label) continue;
        const float* v = values + (b * n + i) * channels + d0;
        double* s = sums.data() + l * width;
        for (int64_t d = 0; d < width; ++d) s[d] += v[d];
      }
      for (int64_t c = 0; c < instances; ++c) {
        const int32_t k = counts[b * instances + c];
        float* out = reduced + (b * instances + c) * channels + d0;
        for (int64_t d = 0; d < width; ++d) {
          const double s = sums[c * width + d];
          out[d] = static_cast<float>(a.mean ? (k ? s / k : 0.0) : s);
        }
      }
    }
}

}  // namespace pointrt::pose
