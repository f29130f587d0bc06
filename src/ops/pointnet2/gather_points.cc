// Optimised GatherPoints (and GroupPoints, which is the same gather over M*S indices), see
// gather_kernels.h: with at least as many indices as points, a point-major copy of the features
// and 16x16 register transposes; otherwise channel blocks whose rows stay in L2, index tiles
// that stay in L1 and AVX-512 gathers. Contiguous output rows either way, streaming stores for
// outputs larger than the cache.
#include <vector>

#include "ops/pointnet2/gather_kernels.h"
#include "ops/pointnet2/gather_points.h"

namespace pointrt {
namespace pointnet2 {

namespace {

#if defined(__AVX512F__)
// Every index is read as 16-channel rows of the point-major copy: per 16 indices and 16
// channels, 16 loads, one register transpose, 16 stores of 16 consecutive outputs.
template <typename Index>
void gather_transposed(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                       float* out, bool stream) {
  using namespace gather_detail;
  const int64_t padded = padded_channels(channels);
  float* ft = transposed_scratch(static_cast<size_t>(n * padded));
  // Streaming stores need 64-byte aligned 16-output pieces: when every row has the same
  // alignment (m % 16 == 0), the 16-index tiles start `head` outputs into the row.
  stream = stream && m % 16 == 0 && (reinterpret_cast<uintptr_t>(out) & 3) == 0;
  const int64_t head = stream ? static_cast<int64_t>(((64 - (reinterpret_cast<uintptr_t>(out) & 63)) & 63) / 4) : 0;
  const int64_t full = head + (m - head) / 16 * 16;
  for (int64_t b = 0; b < batch; ++b) {
    const float* f = features + b * channels * n;
    const Index* ids = idx + b * m;
    float* o = out + b * channels * m;
#pragma omp parallel if (channels * m > 32768)
    {
      transpose_features(f, channels, n, ft);  // ends with the omp for's barrier
#pragma omp for schedule(static)
      for (int64_t j = head; j < full; j += 16) {
        const float* rows[16];
        for (int k = 0; k < 16; ++k) rows[k] = ft + static_cast<int64_t>(ids[j + k]) * padded;
        for (int64_t c0 = 0; c0 < channels; c0 += 16) {
          __m512 r[16];
          for (int k = 0; k < 16; ++k) r[k] = _mm512_load_ps(rows[k] + c0);
          transpose16x16(r);
          store_rows(r, std::min<int64_t>(16, channels - c0), o + c0 * m + j, m, stream);
        }
      }
      stream_fence(stream);
    }
    for (int64_t c = 0; c < channels; ++c) {  // the head and the last (m - head) % 16 indices
      for (int64_t j = 0; j < head; ++j) o[c * m + j] = f[c * n + static_cast<int64_t>(ids[j])];
      for (int64_t j = full; j < m; ++j) o[c * m + j] = f[c * n + static_cast<int64_t>(ids[j])];
    }
  }
}
#endif

}  // namespace

template <typename Index>
void gather_points(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                   float* out) {
  using namespace gather_detail;
  if (batch == 0 || channels == 0 || m == 0) return;
  if (n > std::numeric_limits<int32_t>::max()) {  // int32 gathers cannot address such rows
    gather_points_ref(features, idx, batch, channels, n, m, out);
    return;
  }
  const bool stream = batch * channels * m * 4 > kStreamOutputBytes;
#if defined(__AVX512F__)
  // Each source point is read m / n times on average: from about once per point, copying the
  // features point-major pays for itself (GroupPoints' M*S gathers; not GatherPoints' M < N).
  if (m >= n && channels >= 4) {
    gather_transposed(features, idx, batch, channels, n, m, out, stream);
    return;
  }
#endif
  const int64_t block = channel_block(channels, n);
  const int64_t blocks = ceil_div(channels, block), tiles = ceil_div(m, kIndexTile);
  const int64_t tasks = batch * blocks * tiles;
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
