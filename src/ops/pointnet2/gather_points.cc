// Optimised GatherPoints (and GroupPoints, which is the same gather over M*S indices): with at
// least as many indices as points, feature rows longer than L1 and enough channels, a
// point-major copy of the features and 16x16 register transposes (gather_kernels.h), with
// streaming stores for outputs larger than the cache; otherwise a plain row-by-row gather.
#include <vector>

#include "core/avx512_gcc12.h"
#include "ops/pointnet2/gather_kernels.h"
#include "ops/pointnet2/gather_points.h"

namespace pointrt::pointnet2 {

namespace {

#if defined(__AVX512F__)
// Every index is read as 16-channel rows of the point-major copy: per 16 indices and 16
// channels, 16 loads, one register transpose, 16 stores of 16 consecutive outputs.
template <typename Index>
void gather_transposed(const float* features, const Index* idx, int64_t batch, int64_t channels, int64_t n, int64_t m,
                       float* out, bool stream, const ScratchAllocator& scratch) {
  using namespace detail;
  const int64_t padded = padded_channels(channels);
  AlignedScratch buffer(scratch);
  float* ft = buffer.get(static_cast<size_t>(n * padded));
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
        // Row pointers are formed in the loop from the (L1-hot) indices: a precomputed pointer
        // array gets filled with vector stores whose scalar reloads miss store-to-load forwarding.
        const Index* ik = ids + j;
        for (int64_t c0 = 0; c0 < channels; c0 += 16) {
          __m512 r[16];
          for (int k = 0; k < 16; ++k) r[k] = _mm512_load_ps(ft + static_cast<int64_t>(ik[k]) * padded + c0);
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
                   float* out, const ScratchAllocator& scratch) {
  using namespace detail;
  if (batch == 0 || channels == 0 || m == 0) return;
  if (n > std::numeric_limits<int32_t>::max()) {  // int32 gathers cannot address such rows
    gather_points_ref(features, idx, batch, channels, n, m, out);
    return;
  }
#if defined(__AVX512F__)
  const bool stream = batch * channels * m * 4 > kStreamOutputBytes;
  // Each source point is read m / n times on average: from about once per point, copying the
  // features point-major pays for itself (GroupPoints' M*S gathers; not GatherPoints' M < N) —
  // but only when a feature row is too long for L1: shorter rows are gathered from L1 directly
  // (measured on PVN3D's shapes: N = 2048 x 96 channels is 2x faster row by row), and fewer
  // than 16 channels would waste most of each 16-channel load.
  if (m >= n && n * 4 > kL1RowBytes && channels >= 12) {
    gather_transposed(features, idx, batch, channels, n, m, out, stream, scratch);
    return;
  }
#endif
  // Otherwise row by row: each feature row is read from L1/L2 in index order, the output row
  // written contiguously. (Channel blocks x index tiles with AVX-512 gathers measured slower
  // than this plain loop on every shape tried: PVN3D's and the benchmark's.)
  const int64_t rows = batch * channels;
#pragma omp parallel for schedule(static) if (rows * m > 32768)
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict row = features + r * n;
    const Index* __restrict ids = idx + (r / channels) * m;
    float* __restrict dst = out + r * m;
    for (int64_t j = 0; j < m; ++j) dst[j] = gather_one(row, ids, j);
  }
}

template void gather_points<int32_t>(const float*, const int32_t*, int64_t, int64_t, int64_t, int64_t, float*,
                                     const ScratchAllocator&);
template void gather_points<int64_t>(const float*, const int64_t*, int64_t, int64_t, int64_t, int64_t, float*,
                                     const ScratchAllocator&);

}  // namespace pointrt::pointnet2
