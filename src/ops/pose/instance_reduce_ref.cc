// Naive InstanceReduce: one float64 accumulator per (instance, channel), points in order.
#include <vector>

#include "ops/pose/instance_reduce.h"

namespace pointrt::pose {

void instance_reduce_ref(const float* values, const int32_t* labels, int64_t batch, int64_t n, int64_t channels,
                         const InstanceReduceAttrs& a, float* reduced, int32_t* counts) {
  const int64_t instances = a.num_instances;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> sums(static_cast<size_t>(instances * channels), 0.0);
    std::vector<int32_t> count(static_cast<size_t>(instances), 0);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t l = labels[b * n + i];
      if (l < 0 || l == a.ignore_label) continue;
      ++count[l];
      for (int64_t d = 0; d < channels; ++d) sums[l * channels + d] += values[(b * n + i) * channels + d];
    }
    for (int64_t c = 0; c < instances; ++c) {
      counts[b * instances + c] = count[c];
      for (int64_t d = 0; d < channels; ++d) {
        const double s = sums[c * channels + d];
        reduced[(b * instances + c) * channels + d] = static_cast<float>(a.mean ? (count[c] ? s / count[c] : 0.0) : s);
      }
    }
  }
}

}  // namespace pointrt::pose
