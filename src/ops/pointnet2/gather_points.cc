// Optimised GatherPoints (and GroupPoints, which is the same gather over M*S indices): channel
// blocks whose rows stay in L2, index tiles that stay in L1, AVX-512 gathers into contiguous
// output rows, streaming stores for outputs larger than the cache (gather_kernels.h).
#include <vector>

#include "ops/pointnet2/gather_kernels.h"
#include "ops/pointnet2/gather_points.h"

namespace pointrt {
namespace pointnet2 {

template <typename Index>
void gather_points(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                   float* out) {
  using namespace gather_detail;
  if (batch == 0 || channels == 0 || m == 0) return;
  if (n > std::numeric_limits<int32_t>::max()) {  // int32 gathers cannot address such rows
    gather_points_ref(features, idx, batch, channels, n, m, out);
    return;
  }
  const int64_t block = channel_block(channels, n);
  const int64_t blocks = ceil_div(channels, block), tiles = ceil_div(m, kIndexTile);
  const int64_t tasks = batch * blocks * tiles;
  const bool stream = batch * channels * m * 4 > kStreamOutputBytes;
#pragma omp parallel if (batch * channels * m > 32768)
  {
    int32_t buf[kIndexTile];
#pragma omp for schedule(static)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t tile = task % tiles, cb = (task / tiles) % blocks, b = task / (tiles * blocks);
      const int64_t j0 = tile * kIndexTile, len = std::min(kIndexTile, m - j0);
      const int32_t* ids = as_int32(idx + b * m + j0, len, buf);
      const int64_t c_end = std::min(channels, (cb + 1) * block);
      for (int64_t c = cb * block; c < c_end; ++c) {
        const int64_t r = b * channels + c;
        gather_span(features + r * n, ids, len, out + r * m + j0, stream);
      }
    }
    stream_fence(stream);
  }
}

template void gather_points<int32_t>(const float*, const int32_t*, int64_t, int64_t, int64_t, int64_t, float*);
template void gather_points<int64_t>(const float*, const int64_t*, int64_t, int64_t, int64_t, int64_t, float*);

}  // namespace pointnet2
}  // namespace pointrt
