#include "ops/pointnet2/group_points.h"

namespace pointrt::pointnet2 {

template <typename Index>
void group_points(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                  int64_t s, float* out, const ScratchAllocator& scratch) {
  // [B, M, S] indices are [B, M*S] gathers: one contiguous output row per (b, c).
  gather_points(features, idx, batch, channels, n, m * s, out, scratch);
}

template void group_points<int32_t>(const float*, const int32_t*, int64_t, int64_t, int64_t, int64_t, int64_t, float*,
                                    const ScratchAllocator&);
template void group_points<int64_t>(const float*, const int64_t*, int64_t, int64_t, int64_t, int64_t, int64_t, float*,
                                    const ScratchAllocator&);

}  // namespace pointrt::pointnet2
