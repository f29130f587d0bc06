// SparseConv rulebook of a submanifold convolution by merge-joins over the sites sorted once by key
// (no hashing): one two-pointer walk per group of taps, each also giving its mirror offset.
#include <immintrin.h>

#include <algorithm>
#include <limits>

#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/sparse_conv_rulebook.h"

namespace pointrt::sparse {

namespace {
// Compact a per-output-row neighbour table (-1 = none) into a pair list sorted by output row, and
// reset the table. `count` = number of entries >= 0. AVX-512: 16 rows per step with an in-register
// compress (the memory-destination form is slow on AMD); otherwise branchless scalar.
void compact_neighbours(int32_t* nb, int64_t m, int64_t count, std::vector<int32_t>& in_rows,
                        std::vector<int32_t>& out_rows) {
  constexpr int64_t kSlack = 16;  // full-width stores may run past the last kept entry
  in_rows.resize(static_cast<size_t>(count + kSlack));
  out_rows.resize(static_cast<size_t>(count + kSlack));
  int32_t* ir = in_rows.data();
  int32_t* orow = out_rows.data();
  int64_t w = 0, p = 0;
#ifdef __AVX512F__
  const __m512i none = _mm512_set1_epi32(-1), zero = _mm512_setzero_si512(), step = _mm512_set1_epi32(16);
  __m512i rows = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (; p + 16 <= m; p += 16) {
    const __m512i q = _mm512_loadu_si512(nb + p);
    const __mmask16 keep = _mm512_cmpge_epi32_mask(q, zero);
    _mm512_storeu_si512(ir + w, _mm512_maskz_compress_epi32(keep, q));
    _mm512_storeu_si512(orow + w, _mm512_maskz_compress_epi32(keep, rows));
    w += __builtin_popcount(keep);
    _mm512_storeu_si512(nb + p, none);
    rows = _mm512_add_epi32(rows, step);
  }
#endif
  for (; p < m; ++p) {
    const int32_t q = nb[p];
    ir[w] = q;
    orow[w] = static_cast<int32_t>(p);
    w += q >= 0;
    nb[p] = -1;
  }
  in_rows.resize(static_cast<size_t>(count));
  out_rows.resize(static_cast<size_t>(count));
}

// Two-pointer walk for one group of subm taps (consecutive keys delta, delta + 1, ...): i over
// the sorted sites p, j to the first key >= key(p) + delta; delta < 0 keeps j <= i. Branchless:
// every step writes a candidate, a hit bumps the count. The walk is latency bound (load, compare,
// advance), so the sites are split in two halves walked in the same loop: two independent chains.
// Hits of tap x for half h go to out + x * n + half_begin[h] as (index of q) << 32 | (index of p),
// hits[h * kTaps + x] of them (one store per tap and step: the walk is store bound).
template <int kTaps>
void merge_walk(const int64_t* skeys, int64_t n, int64_t delta, uint64_t* out, int64_t half_begin[2], int64_t* hits) {
  struct Walk {
    int64_t i, end, j, base;
    int64_t h[kTaps];
  };
  auto step = [&](Walk& w) {
    const int64_t target = skeys[w.i] + delta, key = skeys[w.j];
    const bool at = key >= target;
    int64_t pos = w.j;
    for (int x = 0; x < kTaps; ++x) {
      const bool hit = at && skeys[pos] == target + x;
      out[x * n + w.base + w.h[x]] = static_cast<uint64_t>(pos) << 32 | static_cast<uint64_t>(w.i);
      w.h[x] += hit;
      pos += hit;
    }
    w.j += !at;
    w.i += at;
  };
  const int64_t mid = n / 2;
  Walk a{0, mid, 0, 0, {}}, b{mid, n, 0, mid, {}};
  if (mid < n) b.j = std::lower_bound(skeys, skeys + n, skeys[mid] + delta) - skeys;
  while (a.i < a.end && b.i < b.end) {
    step(a);
    step(b);
  }
  while (a.i < a.end) step(a);
  while (b.i < b.end) step(b);
  half_begin[0] = 0;
  half_begin[1] = mid;
  for (int x = 0; x < kTaps; ++x) {
    hits[x] = a.h[x];
    hits[kTaps + x] = b.h[x];
  }
}

// Groups of up to kMaxTaps innermost taps share one walk; wider kernels (k2 > 2*kMaxTaps+1) split.
constexpr int64_t kMaxTaps = 4;

// Keys are taken in a padded grid (each axis widened by the kernel half-width h = (k-1)/2 * dil on
// both sides), so `key + delta(o)` is exactly the key of the shifted site, never a wrap-around into
// the next row, plane or batch.
struct PaddedGrid {
  Shape3 half, padded;
  uint64_t key(const int32_t* s) const {
    return static_cast<uint64_t>(((s[0] * padded[0] + s[1] + half[0]) * padded[1] + s[2] + half[1]) * padded[2] + s[3] +
                                 half[2]);
  }
};

PaddedGrid padded_grid(const SparseConvAttrs& attrs) {
  PaddedGrid g;
  for (int d = 0; d < 3; ++d) {
    g.half[d] = (attrs.kernel[d] - 1) / 2 * attrs.dilation[d];
    g.padded[d] = attrs.in_shape[d] + 2 * g.half[d];
  }
  return g;
}

bool padded_keys_fit(const Sites& in, const PaddedGrid& g) {
  int64_t batches = 0;
  for (int64_t r = 0; r < in.count; ++r) batches = std::max<int64_t>(batches, in.row(r)[0] + 1);
  const unsigned __int128 space =
      static_cast<unsigned __int128>(batches) * g.padded[0] * g.padded[1] * static_cast<unsigned __int128>(g.padded[2]);
  return space < (static_cast<unsigned __int128>(1) << 62);
}

// Offsets before the centre (a smaller key shift, by the lexicographic order of the taps) are
// searched; each finds its mirror's pairs too. They are searched in groups: with dilation 1 on
// the innermost axis, the taps a2 of one (a0, a1) shift to consecutive keys, so one walk serves
// the whole group (the keys are unique integers: the hit for tap x + 1 is at the position after
// the hit for tap x, or at the same position when tap x had none).
struct TapGroup {
  int64_t first_offset, taps;
};

std::vector<TapGroup> subm_tap_groups(const SparseConvAttrs& attrs) {
  const Shape3& k = attrs.kernel;
  const int64_t centre = attrs.kernel_volume() / 2;
  std::vector<TapGroup> groups;
  for (int64_t o = 0; o < centre;) {
    const int64_t a2 = o % k[2];
    int64_t taps = 1;
    if (attrs.dilation[2] == 1)
      while (taps < kMaxTaps && taps < k[2] - a2 && o + taps < centre) ++taps;
    groups.push_back({o, taps});
    o += taps;
  }
  return groups;
}

// One thread's buffers for walking tap groups over the sorted keys `skeys` (rows `srow`).
struct SubmWalker {
  const SparseConvAttrs& attrs;
  const PaddedGrid& grid;
  const int64_t* skeys;
  const int32_t* srow;
  int64_t n;
  std::vector<uint64_t> hit;
  std::vector<int32_t> nb_fwd, nb_mirror;

  SubmWalker(const SparseConvAttrs& a, const PaddedGrid& g, const int64_t* keys, const int32_t* rows, int64_t count)
      : attrs(a),
        grid(g),
        skeys(keys),
        srow(rows),
        n(count),
        hit(static_cast<size_t>(count * kMaxTaps)),
        nb_fwd(static_cast<size_t>(count), -1),
        nb_mirror(static_cast<size_t>(count), -1) {}

  // The pairs of the group's offsets and of their mirrors, into pl.
  void walk(const TapGroup& group, PairLists& pl) {
    const Shape3 &k = attrs.kernel, &dil = attrs.dilation, &half = grid.half, &padded = grid.padded;
    const int64_t volume = attrs.kernel_volume();
    const int64_t o0 = group.first_offset, taps = group.taps;
    const int64_t a[3] = {o0 / (k[1] * k[2]), (o0 / k[2]) % k[1], o0 % k[2]};
    const int64_t delta = (((a[0] * dil[0] - half[0]) * padded[1]) + (a[1] * dil[1] - half[1])) * padded[2] +
                          (a[2] * dil[2] - half[2]);  // < 0; tap x of the group: delta + x
    int64_t half_begin[2] = {0, 0}, hits[2 * kMaxTaps] = {};
    switch (taps) {  // constant tap counts keep the hit counters in registers
      case 1: merge_walk<1>(skeys, n, delta, hit.data(), half_begin, hits); break;
      case 2: merge_walk<2>(skeys, n, delta, hit.data(), half_begin, hits); break;
      case 3: merge_walk<3>(skeys, n, delta, hit.data(), half_begin, hits); break;
      default: merge_walk<4>(skeys, n, delta, hit.data(), half_begin, hits); break;
    }
    for (int64_t x = 0; x < taps; ++x) {
      const int64_t o = o0 + x;
      int64_t count = 0;
      for (int half_index = 0; half_index < 2; ++half_index) {
        const int64_t c = hits[half_index * taps + x];
        const uint64_t* hx = hit.data() + x * n + half_begin[half_index];
        for (int64_t h = 0; h < c; ++h) {
          const int32_t p = srow[static_cast<uint32_t>(hx[h])], q = srow[hx[h] >> 32];
          nb_fwd[p] = q;     // offset o: output p reads input q
          nb_mirror[q] = p;  // mirror offset: output q reads input p
        }
        count += c;
      }
      compact_neighbours(nb_fwd.data(), n, count, pl.in_rows[o], pl.out_rows[o]);
      compact_neighbours(nb_mirror.data(), n, count, pl.in_rows[volume - 1 - o], pl.out_rows[volume - 1 - o]);
    }
  }
};

}  // namespace

// Submanifold pairing by merge-join (PaddedGrid keys). Sites sorted once by key; for an offset
// with delta < 0 one two-pointer walk over the sorted keys finds every pair (p, q = p + delta),
// and the same pairs read backwards are the mirror offset's (q' = q - delta).
// Returns false when the padded key space does not fit 62 bits (caller uses the hash path).
bool build_subm_sorted(Rulebook& rb, const IndexSource& src) {
  const SparseConvAttrs& attrs = rb.attrs;
  const Sites& in = rb.in_sites;
  const int64_t n = in.count;
  const int64_t centre = attrs.kernel_volume() / 2;
  const PaddedGrid grid = padded_grid(attrs);
  if (!padded_keys_fit(in, grid)) return false;

  std::vector<uint64_t> keys(static_cast<size_t>(n));
  std::vector<int32_t> rows(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    keys[r] = grid.key(in.row(r));
    rows[r] = static_cast<int32_t>(r);
  }
  radix_sort_by_key(keys, rows, key_bits(keys));
  reject_duplicates(keys, in, attrs.in_shape, src);

  PairLists& pl = rb.pairs;
  pl.num_out = n;
  pl.identity_offset = centre;
  pl.in_rows[centre].resize(n);
  pl.out_rows[centre].resize(n);
  for (int64_t p = 0; p < n; ++p) pl.in_rows[centre][p] = pl.out_rows[centre][p] = static_cast<int32_t>(p);
  if (n == 0) return true;

  const std::vector<TapGroup> groups = subm_tap_groups(attrs);
  // Sentinels for the group probes.
  keys.resize(static_cast<size_t>(n + attrs.kernel[2]), std::numeric_limits<int64_t>::max());
  const int64_t* skeys = reinterpret_cast<const int64_t*>(keys.data());
  const int64_t num_groups = static_cast<int64_t>(groups.size());
#pragma omp parallel if (n * centre > 20000)
  {
    SubmWalker walker(attrs, grid, skeys, rows.data(), n);
#pragma omp for schedule(dynamic, 1)
    for (int64_t g = 0; g < num_groups; ++g) walker.walk(groups[g], pl);
  }
  return true;
}

}  // namespace pointrt::sparse
