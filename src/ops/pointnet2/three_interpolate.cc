// Optimised ThreeInterpolate: per tile of output points, the [tile, 3] indices and weights are
// read once and split into six L1-resident arrays (int64 -> int32 too); then every channel of a
// block whose feature rows fit in L2 evaluates three_interpolate_one on 16 points at a time with
// AVX-512 gathers (same mul/add order, no FMA: bit-identical to the reference). The naive loop
// re-read the 24 bytes of indices/weights per point for every channel. When there are at least
// as many output points as feature points (the usual upsampling), a point-major copy of the
// features and register transposes replace the gathers (gather_kernels.h).
#include <vector>

#include "core/avx512_gcc12.h"
#include "ops/pointnet2/gather_kernels.h"
#include "ops/pointnet2/three_interpolate.h"

namespace pointrt::pointnet2 {

namespace {

#if defined(__AVX512F__)
// Point-major: per output point, (w0*f[i0] + w1*f[i1]) + w2*f[i2] over 16 channels at a time
// from the point-major copy (three 64-byte loads), 16 points into a 16x16 block, transposed
// into 16 channel rows. Same operations per element as three_interpolate_one.
template <typename Index>
void interpolate_transposed(const float* features, const Index* idx, const float* weight, int64_t batch,
                            int64_t channels, int64_t m, int64_t n, float* out, bool stream,
                            const ScratchAllocator& scratch) {
  using namespace detail;
  const int64_t padded = padded_channels(channels);
  AlignedScratch buffer(scratch);
  float* ft = buffer.get(static_cast<size_t>(m * padded));
  stream = stream && n % 16 == 0 && (reinterpret_cast<uintptr_t>(out) & 3) == 0;
  const int64_t head = stream ? static_cast<int64_t>(((64 - (reinterpret_cast<uintptr_t>(out) & 63)) & 63) / 4) : 0;
  const int64_t full = head + (n - head) / 16 * 16;
  for (int64_t b = 0; b < batch; ++b) {
    const float* f = features + b * channels * m;
    const Index* id = idx + b * n * 3;
    const float* w = weight + b * n * 3;
    float* o = out + b * channels * n;
#pragma omp parallel if (channels * n > 16384)
    {
      transpose_features(f, channels, m, ft);
#pragma omp for schedule(static)
      for (int64_t i = head; i < full; i += 16) {
        // Indices and weights of the 16 points are read straight from the inputs (L1-hot) in
        // the loop: a precomputed offset array was vectorised by the compiler into 512-bit stores
        // whose scalar reloads missed store-to-load forwarding (~30% of this loop on Zen 5).
        const Index* ik = id + i * 3;
        const float* wk = w + i * 3;
        for (int64_t c0 = 0; c0 < channels; c0 += 16) {
          __m512 r[16];
          for (int k = 0; k < 16; ++k) {
            const float* p0 = ft + static_cast<int64_t>(ik[3 * k]) * padded + c0;
            const float* p1 = ft + static_cast<int64_t>(ik[3 * k + 1]) * padded + c0;
            const float* p2 = ft + static_cast<int64_t>(ik[3 * k + 2]) * padded + c0;
            __m512 a = _mm512_mul_ps(_mm512_set1_ps(wk[3 * k]), _mm512_load_ps(p0));
            __m512 bb = _mm512_mul_ps(_mm512_set1_ps(wk[3 * k + 1]), _mm512_load_ps(p1));
            __m512 cc = _mm512_mul_ps(_mm512_set1_ps(wk[3 * k + 2]), _mm512_load_ps(p2));
            r[k] = _mm512_add_ps(_mm512_add_ps(a, bb), cc);
          }
          transpose16x16(r);
          store_rows(r, std::min<int64_t>(16, channels - c0), o + c0 * n + i, n, stream);
        }
      }
      stream_fence(stream);
    }
    auto scalar = [&](int64_t begin, int64_t end) {
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t i = begin; i < end; ++i) {
          const Index* p = id + i * 3;
          const float* fc = f + c * m;
          o[c * n + i] = three_interpolate_one(fc[p[0]], fc[p[1]], fc[p[2]], w[i * 3], w[i * 3 + 1], w[i * 3 + 2]);
        }
    };
    scalar(0, head);  // before the first aligned tile
    scalar(full, n);  // the last (n - head) % 16 points
  }
}
#endif

}  // namespace

template <typename Index>
void three_interpolate(const float* features, const Index* idx, const float* weight, int64_t batch, int64_t channels,
                       int64_t m, int64_t n, float* out, const ScratchAllocator& scratch) {
  using namespace detail;
  if (batch == 0 || channels == 0 || n == 0) return;
  if (m > std::numeric_limits<int32_t>::max()) {
    three_interpolate_ref(features, idx, weight, batch, channels, m, n, out);
    return;
  }
  const bool stream = batch * channels * n * 4 > kStreamOutputBytes;
#if defined(__AVX512F__)
  if (n >= m && channels >= 4) {  // each feature point is used 3n/m times: copy point-major
    interpolate_transposed(features, idx, weight, batch, channels, m, n, out, stream, scratch);
    return;
  }
#endif
  constexpr int64_t kTile = 512;
  const int64_t block = channel_block(channels, m);
  const int64_t blocks = ceil_div(channels, block), tiles = ceil_div(n, kTile);
  const int64_t tasks = batch * blocks * tiles;
#pragma omp parallel if (batch * channels * n > 16384)
  {
    alignas(64) int32_t i0[kTile], i1[kTile], i2[kTile];
    alignas(64) float w0[kTile], w1[kTile], w2[kTile];
#pragma omp for schedule(static)
    for (int64_t task = 0; task < tasks; ++task) {
      const int64_t tile = task % tiles, cb = (task / tiles) % blocks, b = task / (tiles * blocks);
      const int64_t p0 = tile * kTile, len = std::min(kTile, n - p0);
      const Index* id = idx + (b * n + p0) * 3;
      const float* w = weight + (b * n + p0) * 3;
      for (int64_t i = 0; i < len; ++i) {
        i0[i] = static_cast<int32_t>(id[3 * i]);
        i1[i] = static_cast<int32_t>(id[3 * i + 1]);
        i2[i] = static_cast<int32_t>(id[3 * i + 2]);
        w0[i] = w[3 * i];
        w1[i] = w[3 * i + 1];
        w2[i] = w[3 * i + 2];
      }
      const int64_t c_end = std::min(channels, (cb + 1) * block);
      for (int64_t c = cb * block; c < c_end; ++c) {
        const float* __restrict f = features + (b * channels + c) * m;
        float* __restrict dst = out + (b * channels + c) * n + p0;
        int64_t i = 0;
#if defined(__AVX512F__)
        for (; i + 16 <= len; i += 16) {
          __m512 a = _mm512_mul_ps(_mm512_load_ps(w0 + i), _mm512_i32gather_ps(_mm512_load_si512(i0 + i), f, 4));
          __m512 bb = _mm512_mul_ps(_mm512_load_ps(w1 + i), _mm512_i32gather_ps(_mm512_load_si512(i1 + i), f, 4));
          __m512 cc = _mm512_mul_ps(_mm512_load_ps(w2 + i), _mm512_i32gather_ps(_mm512_load_si512(i2 + i), f, 4));
          __m512 v = _mm512_add_ps(_mm512_add_ps(a, bb), cc);
          if (stream && (reinterpret_cast<uintptr_t>(dst + i) & 63) == 0)
            _mm512_stream_ps(dst + i, v);
          else
            _mm512_storeu_ps(dst + i, v);
        }
#endif
        for (; i < len; ++i) dst[i] = three_interpolate_one(f[i0[i]], f[i1[i]], f[i2[i]], w0[i], w1[i], w2[i]);
      }
    }
    stream_fence(stream);
  }
}

template void three_interpolate<int32_t>(const float*, const int32_t*, const float*, int64_t, int64_t, int64_t, int64_t,
                                         float*, const ScratchAllocator&);
template void three_interpolate<int64_t>(const float*, const int64_t*, const float*, int64_t, int64_t, int64_t, int64_t,
                                         float*, const ScratchAllocator&);

}  // namespace pointrt::pointnet2
