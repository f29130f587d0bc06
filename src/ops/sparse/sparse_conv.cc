// Optimised CPU SparseConv: sites radix-sorted by key -> per-offset rulebook by merge-joins (hash-map
// builder as fallback) -> gather / GEMM / scatter-add.
#include "ops/sparse/sparse_conv.h"

#include <immintrin.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#ifdef _OPENMP
#include <parallel/algorithm>
#endif

namespace pointrt {
namespace sparse {

// ---------------------------------------------------------------- attributes

SparseConvAttrs parse_sparse_conv_attrs(const Attributes& a, const std::string& where,
                                        std::shared_ptr<SparseConvAttrs> forward) {
  SparseConvAttrs s;
  s.node_name = where;
  s.kernel = get_ints3(a, "kernel_size", nullptr, where);
  const Shape3 ones{1, 1, 1}, zeros{0, 0, 0};
  s.stride = get_ints3(a, "stride", &ones, where);
  s.padding = get_ints3(a, "padding", &zeros, where);
  s.dilation = get_ints3(a, "dilation", &ones, where);
  s.output_padding = get_ints3(a, "output_padding", &zeros, where);
  s.in_shape = get_ints3(a, "input_spatial_shape", nullptr, where);
  bool subm = a.get_int("subm", 0) != 0, transposed = a.get_int("transposed", 0) != 0,
       inverse = a.get_int("inverse", 0) != 0;
  if (subm + transposed + inverse > 1)
    fail(where, ": at most one of subm, transposed, inverse may be set (got subm=", subm, ", transposed=", transposed,
         ", inverse=", inverse, ")");
  s.kind = subm         ? ConvKind::kSubm
           : transposed ? ConvKind::kTransposed
           : inverse    ? ConvKind::kInverse
                        : ConvKind::kRegular;
  s.rulebook = a.get_string("rulebook", "");
  s.act = parse_activation(a.get_string("activation", "None"), where);
  s.alpha = a.get_float("alpha", 0.01f);
  for (int d = 0; d < 3; ++d) {
    if (s.kernel[d] < 1) fail(where, ": kernel_size ", shape3_text(s.kernel), " must be >= 1 on every axis");
    if (s.stride[d] < 1) fail(where, ": stride ", shape3_text(s.stride), " must be >= 1 on every axis");
    if (s.dilation[d] < 1) fail(where, ": dilation ", shape3_text(s.dilation), " must be >= 1 on every axis");
    if (s.padding[d] < 0) fail(where, ": padding ", shape3_text(s.padding), " must be >= 0 on every axis");
    if (s.output_padding[d] < 0) fail(where, ": output_padding ", shape3_text(s.output_padding), " must be >= 0");
    if (s.in_shape[d] < 1)
      fail(where, ": input_spatial_shape ", shape3_text(s.in_shape), " must be >= 1 on every axis");
    if (s.in_shape[d] > (1 << 24)) fail(where, ": input_spatial_shape ", shape3_text(s.in_shape), " is too large");
  }
  switch (s.kind) {
    case ConvKind::kSubm:
      for (int d = 0; d < 3; ++d)
        if (s.kernel[d] % 2 == 0)
          fail(where, ": submanifold convolution needs odd kernel sizes, got kernel_size ", shape3_text(s.kernel));
      s.out_shape = s.in_shape;
      break;
    case ConvKind::kRegular:
      for (int d = 0; d < 3; ++d) {
        int64_t num = s.in_shape[d] + 2 * s.padding[d] - s.dilation[d] * (s.kernel[d] - 1) - 1;
        if (num < 0)
          fail(where, ": kernel_size ", shape3_text(s.kernel), " with dilation ", shape3_text(s.dilation),
               " does not fit input_spatial_shape ", shape3_text(s.in_shape), " with padding ", shape3_text(s.padding));
        s.out_shape[d] = num / s.stride[d] + 1;
      }
      break;
    case ConvKind::kTransposed:
      for (int d = 0; d < 3; ++d) {
        s.out_shape[d] = (s.in_shape[d] - 1) * s.stride[d] - 2 * s.padding[d] + s.dilation[d] * (s.kernel[d] - 1) +
                         s.output_padding[d] + 1;
        if (s.out_shape[d] < 1)
          fail(where, ": transposed output spatial shape would be ", s.out_shape[d], " on axis ", d);
      }
      break;
    case ConvKind::kInverse:
      if (s.rulebook.empty()) fail(where, ": an inverse SparseConv needs a non-empty 'rulebook' key");
      if (!forward)
        fail(where, ": inverse SparseConv: rulebook key '", s.rulebook,
             "' names no earlier regular SparseConv (subm=0, transposed=0, inverse=0) in the graph");
      if (forward->kernel != s.kernel)
        fail(where, ": inverse kernel_size ", shape3_text(s.kernel), " differs from kernel_size ",
             shape3_text(forward->kernel), " of ", forward->node_name, " (rulebook '", s.rulebook, "')");
      if (forward->out_shape != s.in_shape)
        fail(where, ": input_spatial_shape ", shape3_text(s.in_shape), " differs from the output spatial shape ",
             shape3_text(forward->out_shape), " of ", forward->node_name, " (rulebook '", s.rulebook, "')");
      s.out_shape = forward->in_shape;
      s.forward = forward;
      break;
  }
  for (const Shape3* sh : {&s.in_shape, &s.out_shape})
    if ((*sh)[0] * (*sh)[1] * (*sh)[2] > (int64_t(1) << 40))
      fail(where, ": spatial shape ", shape3_text(*sh), " has more than 2^40 cells, more than supported");
  if (a.has("output_spatial_shape")) {
    Shape3 given = get_ints3(a, "output_spatial_shape", nullptr, where);
    if (given != s.out_shape)
      fail(where, ": output_spatial_shape ", shape3_text(given), " does not match the computed output spatial shape ",
           shape3_text(s.out_shape), " (input_spatial_shape ", shape3_text(s.in_shape), ", kernel_size ",
           shape3_text(s.kernel), ", stride ", shape3_text(s.stride), ", padding ", shape3_text(s.padding),
           ", dilation ", shape3_text(s.dilation), ")");
  }
  return s;
}

SparseConvAttrs parse_sparse_conv_attrs(const KernelInit& init) {
  const std::string where = init.where();
  std::shared_ptr<SparseConvAttrs> forward;
  if (init.attrs().get_int("inverse", 0) != 0) {
    std::string key = init.attrs().get_string("rulebook", "");
    for (const Node& n : init.graph.nodes) {
      if (&n == &init.node) break;  // only earlier nodes (the graph is topologically sorted)
      if (n.removed || n.op_type != "SparseConv" || n.domain != "pointrt") continue;
      if (n.attrs.get_string("rulebook", "") != key || key.empty()) continue;
      if (n.attrs.get_int("subm", 0) || n.attrs.get_int("transposed", 0) || n.attrs.get_int("inverse", 0)) continue;
      forward = std::make_shared<SparseConvAttrs>(parse_sparse_conv_attrs(n.attrs, n.describe()));
      break;
    }
  }
  return parse_sparse_conv_attrs(init.attrs(), where, forward);
}

// ---------------------------------------------------------------- rulebook

namespace {

// Sorted unique output keys from the candidate output of every (input, offset). A bitmap over
// the output grid gives them without sorting when the grid is small enough; otherwise sort.
template <typename ForEachCandidate>
std::vector<uint64_t> unique_output_keys(uint64_t key_space, int64_t n, ForEachCandidate&& for_each_candidate) {
  std::vector<uint64_t> sorted;
  const bool use_bitmap =
      key_space <= (uint64_t(1) << 34) && key_space / 64 <= static_cast<uint64_t>(std::max<int64_t>(n, 1024)) * 64;
  if (use_bitmap) {
    std::vector<uint64_t> bits((key_space + 63) / 64, 0);
#pragma omp parallel for schedule(static) if (n > 16384)
    for (int64_t q = 0; q < n; ++q)
      for_each_candidate(
          q, [&](uint64_t key) { __atomic_fetch_or(&bits[key >> 6], uint64_t(1) << (key & 63), __ATOMIC_RELAXED); });
    const size_t words = bits.size();
    std::vector<int64_t> rank(words + 1);
    int64_t total = 0;
    for (size_t w = 0; w < words; ++w) {
      rank[w] = total;
      total += __builtin_popcountll(bits[w]);
    }
    sorted.resize(total);
#pragma omp parallel for schedule(static) if (words > (1 << 18))
    for (size_t w = 0; w < words; ++w) {
      uint64_t b = bits[w];
      int64_t r = rank[w];
      while (b) {
        sorted[r++] = (static_cast<uint64_t>(w) << 6) | static_cast<uint64_t>(__builtin_ctzll(b));
        b &= b - 1;
      }
    }
  } else {
    for (int64_t q = 0; q < n; ++q) for_each_candidate(q, [&](uint64_t key) { sorted.push_back(key); });
#ifdef _OPENMP
    __gnu_parallel::sort(sorted.begin(), sorted.end());
#else
    std::sort(sorted.begin(), sorted.end());
#endif
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  }
  return sorted;
}

}  // namespace

namespace {

// Stable LSD radix sort of (key, row) pairs by key; every key < 2^bits. One histogram pass for
// all digits; a digit shared by every key is skipped.
template <bool kWithRows>
void radix_sort_impl(std::vector<uint64_t>& keys, std::vector<int32_t>& rows, int bits) {
  // Digits of at most 12 bits (a 16 KB histogram stays in L1), as few passes as that allows.
  const size_t n = keys.size();
  const int passes = (bits + 11) / 12;
  if (n < 2 || passes == 0) return;
  const int kDigit = (bits + passes - 1) / passes;
  const size_t kBuckets = size_t(1) << kDigit;
  std::vector<uint32_t> hist(static_cast<size_t>(passes) * kBuckets, 0);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t key = keys[i];
    for (int p = 0; p < passes; ++p) ++hist[p * kBuckets + ((key >> (p * kDigit)) & (kBuckets - 1))];
  }
  std::vector<uint64_t> keys2(n);
  std::vector<int32_t> rows2(kWithRows ? n : 0);
  for (int p = 0; p < passes; ++p) {
    uint32_t* h = hist.data() + p * kBuckets;
    const int shift = p * kDigit;
    if (h[(keys[0] >> shift) & (kBuckets - 1)] == n) continue;  // all keys share this digit
    uint32_t sum = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      const uint32_t c = h[b];
      h[b] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; ++i) {
      const uint32_t pos = h[(keys[i] >> shift) & (kBuckets - 1)]++;
      keys2[pos] = keys[i];
      if (kWithRows) rows2[pos] = rows[i];
    }
    keys.swap(keys2);
    if (kWithRows) rows.swap(rows2);
  }
}
void radix_sort_by_key(std::vector<uint64_t>& keys, std::vector<int32_t>& rows, int bits) {
  radix_sort_impl<true>(keys, rows, bits);
}
void radix_sort_keys(std::vector<uint64_t>& keys, int bits) {
  std::vector<int32_t> none;
  radix_sort_impl<false>(keys, none, bits);
}

int key_bits(const std::vector<uint64_t>& keys) {
  uint64_t mx = 0;
  for (uint64_t k : keys) mx = std::max(mx, k);
  return mx == 0 ? 0 : 64 - __builtin_clzll(mx);
}

// Sorted keys with a repeated key mean a duplicate site: let the site map report it (it names the
// first two rows in input order, the same message as the hash path).
void reject_duplicates(const std::vector<uint64_t>& sorted_keys, const Sites& in, const Shape3& shape,
                       const IndexSource& src) {
  for (size_t i = 1; i < sorted_keys.size(); ++i)
    if (sorted_keys[i] == sorted_keys[i - 1]) {
      build_site_map(in, shape, src);                                  // throws
      fail(src.where, ": ", src.input_text, " has a duplicate site");  // not reached
    }
}

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

// Submanifold pairing by merge-join. Keys are taken in a padded grid (each axis widened by the
// kernel half-width h = (k-1)/2 * dil on both sides), so `key + delta(o)` is exactly the key of
// the shifted site, never a wrap-around into the next row, plane or batch. Sites sorted once by
// key; for an offset with delta < 0 one two-pointer walk over the sorted keys finds every pair
// (p, q = p + delta), and the same pairs read backwards are the mirror offset's (q' = q - delta).
// Returns false when the padded key space does not fit 62 bits (caller uses the hash path).
bool build_subm_sorted(Rulebook& rb, const IndexSource& src) {
  const SparseConvAttrs& attrs = rb.attrs;
  const Sites& in = rb.in_sites;
  const int64_t n = in.count;
  const Shape3 k = attrs.kernel, dil = attrs.dilation, is = attrs.in_shape;
  const int64_t volume = attrs.kernel_volume(), centre = volume / 2;
  Shape3 half, padded;
  for (int d = 0; d < 3; ++d) {
    half[d] = (k[d] - 1) / 2 * dil[d];
    padded[d] = is[d] + 2 * half[d];
  }
  int64_t batches = 0;
  for (int64_t r = 0; r < n; ++r) batches = std::max<int64_t>(batches, in.row(r)[0] + 1);
  const unsigned __int128 space =
      static_cast<unsigned __int128>(batches) * padded[0] * padded[1] * static_cast<unsigned __int128>(padded[2]);
  if (space >= (static_cast<unsigned __int128>(1) << 62)) return false;

  std::vector<uint64_t> keys(static_cast<size_t>(n));
  std::vector<int32_t> rows(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    const int32_t* s = in.row(r);
    keys[r] = static_cast<uint64_t>(((s[0] * padded[0] + s[1] + half[0]) * padded[1] + s[2] + half[1]) * padded[2] +
                                    s[3] + half[2]);
    rows[r] = static_cast<int32_t>(r);
  }
  radix_sort_by_key(keys, rows, key_bits(keys));
  reject_duplicates(keys, in, is, src);

  PairLists& pl = rb.pairs;
  pl.num_out = n;
  pl.identity_offset = centre;
  pl.in_rows[centre].resize(n);
  pl.out_rows[centre].resize(n);
  for (int64_t p = 0; p < n; ++p) pl.in_rows[centre][p] = pl.out_rows[centre][p] = static_cast<int32_t>(p);
  if (n == 0) return true;

  // Offsets before the centre (a smaller key shift, by the lexicographic order of the taps) are
  // searched; each finds its mirror's pairs too. They are searched in groups: with dilation 1 on
  // the innermost axis, the taps a2 of one (a0, a1) shift to consecutive keys, so one walk serves
  // the whole group (the keys are unique integers: the hit for tap x + 1 is at the position after
  // the hit for tap x, or at the same position when tap x had none).
  struct Group {
    int64_t first_offset, taps;
  };
  std::vector<Group> groups;
  for (int64_t o = 0; o < centre;) {
    const int64_t a2 = o % k[2];
    int64_t taps = 1;
    if (dil[2] == 1)
      while (taps < kMaxTaps && taps < k[2] - a2 && o + taps < centre) ++taps;
    groups.push_back({o, taps});
    o += taps;
  }
  keys.resize(static_cast<size_t>(n + k[2]), std::numeric_limits<int64_t>::max());  // sentinels for the group probes
  const int64_t* skeys = reinterpret_cast<const int64_t*>(keys.data());
  const int32_t* srow = rows.data();
  const int64_t num_groups = static_cast<int64_t>(groups.size());
#pragma omp parallel if (n * centre > 20000)
  {
    std::vector<uint64_t> hit(static_cast<size_t>(n * kMaxTaps));
    std::vector<int32_t> nb_fwd(static_cast<size_t>(n), -1), nb_mirror(static_cast<size_t>(n), -1);
#pragma omp for schedule(dynamic, 1)
    for (int64_t g = 0; g < num_groups; ++g) {
      const int64_t o0 = groups[g].first_offset, taps = groups[g].taps;
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
  }
  return true;
}

// Input-coordinate tables for regular / transposed convolutions: fwd[d][c * k + a] is the output
// coordinate input coordinate c reaches through tap a, or -1.
void forward_tap_tables(const SparseConvAttrs& attrs, std::vector<int32_t> fwd[3]) {
  const Shape3 &is = attrs.in_shape, &os = attrs.out_shape, &k = attrs.kernel, &st = attrs.stride, &pad = attrs.padding,
               &dil = attrs.dilation;
  const bool transposed = attrs.kind == ConvKind::kTransposed;
  for (int d = 0; d < 3; ++d) {
    fwd[d].assign(static_cast<size_t>(is[d] * k[d]), -1);
    for (int64_t c = 0; c < is[d]; ++c)
      for (int64_t a = 0; a < k[d]; ++a) {
        int64_t p = -1;
        if (transposed) {
          p = c * st[d] - pad[d] + a * dil[d];
        } else {
          const int64_t num = c + pad[d] - a * dil[d];
          if (num >= 0 && num % st[d] == 0) p = num / st[d];
        }
        if (p >= 0 && p < os[d]) fwd[d][c * k[d] + a] = static_cast<int32_t>(p);
      }
  }
}

// Regular / transposed pairing by merge-join. Inputs sorted by key once; for a fixed tap the map
// input -> output is strictly increasing on the inputs it applies to (per axis p = (q + pad -
// a*dil) / stride on one residue class of q, or p = q*stride - pad + a*dil), so walking the sorted
// inputs yields that offset's output keys in increasing order, and a second pointer over the
// sorted unique output keys gives the output rows: lists come out sorted by output row with no
// sort and no hashing. For a regular convolution only inputs with q = a*dil - pad (mod stride) on
// every axis can reach an output through tap a, so the inputs are bucketed by residue class
// (stably, keeping key order) and each offset walks only its class.
void build_strided_sorted(Rulebook& rb, const IndexSource& src) {
  const SparseConvAttrs& attrs = rb.attrs;
  const Sites& in = rb.in_sites;
  const int64_t n = in.count;
  const Shape3 &is = attrs.in_shape, &os = attrs.out_shape, &k = attrs.kernel, &st = attrs.stride, &pad = attrs.padding,
               &dil = attrs.dilation;
  const int64_t volume = attrs.kernel_volume();
  PairLists& pl = rb.pairs;

  std::vector<uint64_t> keys(static_cast<size_t>(n));
  std::vector<int32_t> rows(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    keys[r] = site_key(in.row(r), is);
    rows[r] = static_cast<int32_t>(r);
  }
  radix_sort_by_key(keys, rows, key_bits(keys));
  reject_duplicates(keys, in, is, src);
  const int64_t batches = n == 0 ? 0 : in.row(rows[n - 1])[0] + 1;

  // Residue classes (regular only, when few): class of q = (q0 % s0, q1 % s1, q2 % s2).
  const bool by_class = attrs.kind == ConvKind::kRegular && st[0] * st[1] * st[2] <= 64;
  const int64_t classes = by_class ? st[0] * st[1] * st[2] : 1;
  std::vector<int32_t> res[3];  // res[d][c] = c % stride[d], no divisions per site
  for (int d = 0; d < 3; ++d) {
    res[d].resize(static_cast<size_t>(is[d]));
    for (int64_t c = 0; c < is[d]; ++c) res[d][c] = static_cast<int32_t>(c % st[d]);
  }
  auto class_of = [&](const int32_t* s) -> int64_t {
    return by_class ? (int64_t(res[0][s[1]]) * st[1] + res[1][s[2]]) * st[2] + res[2][s[3]] : 0;
  };
  std::vector<int64_t> class_start(static_cast<size_t>(classes + 1), 0);
  for (int64_t i = 0; i < n; ++i) ++class_start[class_of(in.row(i)) + 1];
  for (int64_t c = 0; c < classes; ++c) class_start[c + 1] += class_start[c];
  std::vector<int32_t> site(static_cast<size_t>(n) * 4), site_row(static_cast<size_t>(n));  // in class order
  {
    std::vector<int64_t> fill(class_start.begin(), class_start.end() - 1);
    for (int64_t i = 0; i < n; ++i) {
      const int32_t* s = in.row(rows[i]);
      const int64_t pos = fill[class_of(s)]++;
      std::memcpy(site.data() + 4 * pos, s, sizeof(int32_t) * 4);
      site_row[pos] = rows[i];
    }
  }

  std::vector<int32_t> fwd[3];
  forward_tap_tables(attrs, fwd);
  // Pass 1, per offset: the output keys its inputs reach, increasing, with the input rows.
  std::vector<std::vector<uint64_t>> reach(static_cast<size_t>(volume));
  auto residue = [](int64_t v, int64_t mod) { return ((v % mod) + mod) % mod; };
#pragma omp parallel for schedule(dynamic, 1) if (n * volume > 20000)
  for (int64_t o = 0; o < volume; ++o) {
    const int64_t a[3] = {o / (k[1] * k[2]), (o / k[2]) % k[1], o % k[2]};
    int64_t cls = 0;
    if (by_class)
      cls = (residue(a[0] * dil[0] - pad[0], st[0]) * st[1] + residue(a[1] * dil[1] - pad[1], st[1])) * st[2] +
            residue(a[2] * dil[2] - pad[2], st[2]);
    const int32_t* f0 = fwd[0].data() + a[0];
    const int32_t* f1 = fwd[1].data() + a[1];
    const int32_t* f2 = fwd[2].data() + a[2];
    auto& keys_o = reach[o];
    auto& rows_o = pl.in_rows[o];
    const int64_t lo = class_start[cls], hi = class_start[cls + 1];
    keys_o.resize(static_cast<size_t>(hi - lo));
    rows_o.resize(static_cast<size_t>(hi - lo));
    int64_t cnt = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const int32_t* s = site.data() + 4 * i;
      const int32_t p0 = f0[s[1] * k[0]], p1 = f1[s[2] * k[1]], p2 = f2[s[3] * k[2]];
      // Branchless: write always, keep when the tap lands inside the output on every axis.
      keys_o[cnt] = site_key(s[0], p0, p1, p2, os);
      rows_o[cnt] = site_row[i];
      cnt += (p0 | p1 | p2) >= 0;
    }
    keys_o.resize(static_cast<size_t>(cnt));
    rows_o.resize(static_cast<size_t>(cnt));
  }
  // Output sites: the sorted union of the reached keys (radix sort + unique; linear in the pairs).
  std::vector<uint64_t> out_keys;
  {
    size_t total = 0;
    for (const auto& r : reach) total += r.size();
    out_keys.reserve(total);
    for (const auto& r : reach) out_keys.insert(out_keys.end(), r.begin(), r.end());
    const uint64_t key_space = static_cast<uint64_t>(batches) * os[0] * os[1] * os[2];
    radix_sort_keys(out_keys, key_space <= 1 ? 0 : 64 - __builtin_clzll(key_space - 1));
    out_keys.erase(std::unique(out_keys.begin(), out_keys.end()), out_keys.end());
  }
  const int64_t m = static_cast<int64_t>(out_keys.size());
  if (m > std::numeric_limits<int32_t>::max() / 2)
    fail(src.where, ": the convolution would produce ", m, " output sites, more than supported");
  rb.out_sites.resize(static_cast<size_t>(m) * 4);
#pragma omp parallel for schedule(static) if (m > (1 << 17))
  for (int64_t i = 0; i < m; ++i) key_to_site(out_keys[i], os, rb.out_sites.data() + 4 * i);
  pl.num_out = m;

  // Pass 2, per offset: merge-join its increasing keys with the sorted outputs -> output rows.
#pragma omp parallel for schedule(dynamic, 1) if (n * volume > 20000)
  for (int64_t o = 0; o < volume; ++o) {
    const auto& keys_o = reach[o];
    auto& orow = pl.out_rows[o];
    orow.resize(keys_o.size());
    const uint64_t* ok = out_keys.data();
    int64_t j = 0;
    for (size_t i = 0; i < keys_o.size(); ++i) {
      while (ok[j] < keys_o[i]) ++j;  // every reached key is an output, so j stays in range
      orow[i] = static_cast<int32_t>(j);
    }
    std::vector<uint64_t>().swap(reach[o]);
  }
}

}  // namespace

std::shared_ptr<Rulebook> build_rulebook(const SparseConvAttrs& attrs, Sites in_sites, const IndexSource& src,
                                         RulebookMethod method) {
  auto rb = std::make_shared<Rulebook>();
  rb->attrs = attrs;
  rb->attrs.forward = nullptr;
  rb->in_sites = std::move(in_sites);
  const Sites& in = rb->in_sites;
  const int64_t volume = attrs.kernel_volume();
  const int64_t n = in.count;
  PairLists& pl = rb->pairs;
  pl.in_rows.assign(volume, {});
  pl.out_rows.assign(volume, {});
  if (method != RulebookMethod::kHash && attrs.kind == ConvKind::kSubm && build_subm_sorted(*rb, src)) return rb;
  if (method != RulebookMethod::kHash && attrs.kind != ConvKind::kSubm) {
    build_strided_sorted(*rb, src);
    return rb;
  }
  const Shape3& is = attrs.in_shape;
  const Shape3& os = attrs.out_shape;
  const Shape3 k = attrs.kernel, st = attrs.stride, pad = attrs.padding, dil = attrs.dilation;
  const SiteMap map = build_site_map(in, is, src);  // also rejects duplicate sites

  // Output sites (rows of the result) as (b, p0, p1, p2).
  const int32_t* out = nullptr;
  int64_t m = 0;
  if (attrs.kind == ConvKind::kSubm) {
    out = in.rows.data();
    m = n;
  } else {
    int64_t batches = 0;
    for (int64_t r = 0; r < n; ++r) batches = std::max<int64_t>(batches, in.row(r)[0] + 1);
    // fwd[d][c * k + a]: the output coordinate input coordinate c reaches through kernel tap a, or -1.
    std::vector<int32_t> fwd[3];
    forward_tap_tables(attrs, fwd);
    auto for_each_candidate = [&](int64_t q, auto&& emit) {
      const int32_t* s = in.row(q);
      const int32_t* f0 = fwd[0].data() + s[1] * k[0];
      const int32_t* f1 = fwd[1].data() + s[2] * k[1];
      const int32_t* f2 = fwd[2].data() + s[3] * k[2];
      for (int64_t a0 = 0; a0 < k[0]; ++a0) {
        if (f0[a0] < 0) continue;
        for (int64_t a1 = 0; a1 < k[1]; ++a1) {
          if (f1[a1] < 0) continue;
          for (int64_t a2 = 0; a2 < k[2]; ++a2)
            if (f2[a2] >= 0) emit(site_key(s[0], f0[a0], f1[a1], f2[a2], os));
        }
      }
    };
    const uint64_t key_space = static_cast<uint64_t>(batches) * os[0] * os[1] * os[2];
    std::vector<uint64_t> keys = unique_output_keys(key_space, n, for_each_candidate);
    m = static_cast<int64_t>(keys.size());
    if (m > std::numeric_limits<int32_t>::max() / 2)
      fail(src.where, ": the convolution would produce ", m, " output sites, more than supported");
    rb->out_sites.resize(static_cast<size_t>(m) * 4);
#pragma omp parallel for schedule(static) if (m > (1 << 17))
    for (int64_t i = 0; i < m; ++i) key_to_site(keys[i], os, rb->out_sites.data() + 4 * i);
    out = rb->out_sites.data();
  }
  pl.num_out = m;

  // Output-major pairing: for each output p and offset o, the input q it reads. Lists come out
  // sorted by output row. Subm: q = p + (a - c) * dil; regular: q = p * stride - pad + a * dil;
  // transposed: q * stride = p + pad - a * dil.
  const Shape3 center{(k[0] - 1) / 2, (k[1] - 1) / 2, (k[2] - 1) / 2};
  // back[d][c * k + a]: the input coordinate output coordinate c reads through tap a, or -1.
  std::vector<int32_t> back[3];
  for (int d = 0; d < 3; ++d) {
    back[d].assign(static_cast<size_t>(os[d] * k[d]), -1);
    for (int64_t c = 0; c < os[d]; ++c)
      for (int64_t a = 0; a < k[d]; ++a) {
        int64_t q = -1;
        switch (attrs.kind) {
          case ConvKind::kSubm: q = c + (a - center[d]) * dil[d]; break;
          case ConvKind::kRegular: q = c * st[d] - pad[d] + a * dil[d]; break;
          default: {
            const int64_t num = c + pad[d] - a * dil[d];
            if (num >= 0 && num % st[d] == 0) q = num / st[d];
          }
        }
        if (q >= 0 && q < is[d]) back[d][c * k[d] + a] = static_cast<int32_t>(q);
      }
  }
  // Subm offsets come in mirror pairs (o, volume-1-o): q = p + d  <=>  p = q - d. Only the first
  // half (and the centre) needs hash lookups; the mirrors are derived below.
  const bool mirror = attrs.kind == ConvKind::kSubm;
  const int64_t searched = mirror ? volume / 2 + 1 : volume;
#pragma omp parallel for schedule(dynamic, 1) if (m * searched > 20000)
  for (int64_t o = 0; o < searched; ++o) {
    const int64_t a[3] = {o / (k[1] * k[2]), (o / k[2]) % k[1], o % k[2]};
    auto& ir = pl.in_rows[o];
    auto& orow = pl.out_rows[o];
    if (attrs.kind == ConvKind::kSubm && a[0] == center[0] && a[1] == center[1] && a[2] == center[2]) {
      ir.resize(m);
      orow.resize(m);
      for (int64_t p = 0; p < m; ++p) ir[p] = orow[p] = static_cast<int32_t>(p);
      pl.identity_offset = o;
      continue;
    }
    const int32_t* b0 = back[0].data() + a[0];
    const int32_t* b1 = back[1].data() + a[1];
    const int32_t* b2 = back[2].data() + a[2];
    // Lookups in chunks: compute and prefetch the slots first, then probe (hides cache misses).
    constexpr int kChunk = 32;
    uint64_t keys[kChunk];
    int32_t rows[kChunk];
    for (int64_t p0 = 0; p0 < m; p0 += kChunk) {
      const int64_t p1 = std::min(m, p0 + kChunk);
      int cnt = 0;
      for (int64_t p = p0; p < p1; ++p) {
        const int32_t* s = out + 4 * p;
        const int32_t q0 = b0[s[1] * k[0]], q1 = b1[s[2] * k[1]], q2 = b2[s[3] * k[2]];
        if ((q0 | q1 | q2) < 0) continue;
        keys[cnt] = site_key(s[0], q0, q1, q2, is);
        map.prefetch(keys[cnt]);
        rows[cnt++] = static_cast<int32_t>(p);
      }
      for (int i = 0; i < cnt; ++i) {
        const int32_t r = map.find(keys[i]);
        if (r < 0) continue;
        ir.push_back(r);
        orow.push_back(rows[i]);
      }
    }
  }
  if (mirror) {
#pragma omp parallel if (m * volume > 20000)
    {
      std::vector<int32_t> src_of(static_cast<size_t>(m), -1);
#pragma omp for schedule(dynamic, 1)
      for (int64_t o = searched; o < volume; ++o) {
        const auto& fwd_in = pl.in_rows[volume - 1 - o];
        const auto& fwd_out = pl.out_rows[volume - 1 - o];
        for (size_t i = 0; i < fwd_in.size(); ++i) src_of[fwd_in[i]] = fwd_out[i];
        auto& ir = pl.in_rows[o];
        auto& orow = pl.out_rows[o];
        ir.reserve(fwd_in.size());
        orow.reserve(fwd_in.size());
        for (int64_t q = 0; q < m; ++q)
          if (src_of[q] >= 0) {
            ir.push_back(src_of[q]);
            orow.push_back(static_cast<int32_t>(q));
            src_of[q] = -1;
          }
      }
    }
  }
  return rb;
}

PairLists reverse_pairs(const PairLists& fwd, int64_t num_in) {
  PairLists r;
  const int64_t volume = static_cast<int64_t>(fwd.in_rows.size());
  r.num_out = num_in;
  r.in_rows.assign(volume, {});
  r.out_rows.assign(volume, {});
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t o = 0; o < volume; ++o) {
    const auto& src = fwd.out_rows[o];
    const auto& dst = fwd.in_rows[o];
    std::vector<int64_t> order(dst.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return dst[a] < dst[b]; });
    auto& ir = r.in_rows[o];
    auto& orow = r.out_rows[o];
    ir.resize(order.size());
    orow.resize(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      ir[i] = src[order[i]];
      orow[i] = dst[order[i]];
    }
  }
  return r;
}

// ---------------------------------------------------------------- compute

std::vector<float> pack_sparse_weight(const float* w, int64_t cout, int64_t volume, int64_t cin) {
  std::vector<float> packed(static_cast<size_t>(cout * volume * cin));
  for (int64_t co = 0; co < cout; ++co)
    for (int64_t o = 0; o < volume; ++o)
      for (int64_t ci = 0; ci < cin; ++ci) packed[(o * cin + ci) * cout + co] = w[(co * volume + o) * cin + ci];
  return packed;
}

namespace {
void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, float beta, float* c) {
  dnnl_status_t st = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, lda, b, n, beta, c, n);
  if (st != dnnl_success) fail("SparseConv: dnnl_sgemm failed with status ", static_cast<int>(st));
}
}  // namespace

void apply_pairs(const PairLists& pl, const float* x, int64_t cin, const float* packed, int64_t cout, float* out) {
  const int64_t rows = pl.num_out;
  const int64_t volume = static_cast<int64_t>(pl.in_rows.size());
  if (rows == 0 || cout == 0) return;
  const int64_t identity = pl.identity_offset;
  // Blocks of output rows; each thread owns its blocks, so the scatter-add needs no atomics.
  const int64_t block =
      std::max<int64_t>(256, std::min<int64_t>(4096, rows / (8 * std::max(1, omp_get_max_threads())) + 1));
  const int64_t blocks = (rows + block - 1) / block;
#pragma omp parallel if (blocks > 1)
  {
    std::vector<float> gathered(static_cast<size_t>(block * std::max<int64_t>(cin, 1)));
    std::vector<float> products(static_cast<size_t>(block * cout));
#pragma omp for schedule(dynamic, 1)
    for (int64_t bi = 0; bi < blocks; ++bi) {
      const int64_t r0 = bi * block, r1 = std::min(rows, r0 + block);
      float* ob = out + r0 * cout;
      if (identity >= 0 && cin > 0)  // subm centre: rows pair with themselves, x rows are contiguous
        sgemm(r1 - r0, cout, cin, x + r0 * cin, cin, packed + identity * cin * cout, 0.0f, ob);
      else
        std::memset(ob, 0, sizeof(float) * (r1 - r0) * cout);
      if (cin == 0) continue;
      for (int64_t o = 0; o < volume; ++o) {
        if (o == identity) continue;
        const auto& dst = pl.out_rows[o];
        const auto& src = pl.in_rows[o];
        const int64_t lo = std::lower_bound(dst.begin(), dst.end(), static_cast<int32_t>(r0)) - dst.begin();
        const int64_t hi = std::lower_bound(dst.begin() + lo, dst.end(), static_cast<int32_t>(r1)) - dst.begin();
        const int64_t np = hi - lo;
        if (np == 0) continue;
        float* g = gathered.data();
        for (int64_t i = 0; i < np; ++i)
          std::memcpy(g + i * cin, x + static_cast<int64_t>(src[lo + i]) * cin, sizeof(float) * cin);
        sgemm(np, cout, cin, g, cin, packed + o * cin * cout, 0.0f, products.data());
        const float* pr = products.data();
        for (int64_t i = 0; i < np; ++i) {
          float* d = out + static_cast<int64_t>(dst[lo + i]) * cout;
          const float* s = pr + i * cout;
          for (int64_t c = 0; c < cout; ++c) d[c] += s[c];
        }
      }
    }
  }
}

// ---------------------------------------------------------------- kernel

namespace {

std::string cache_key(ConvKind kind, const std::string& key) {
  const char* k = kind == ConvKind::kSubm ? "subm" : kind == ConvKind::kTransposed ? "transposed" : "regular";
  return str_cat("pointrt.sparse.rulebook/", k, "/", key);
}

bool same_geometry(const SparseConvAttrs& a, const SparseConvAttrs& b) {
  if (a.kernel != b.kernel || a.dilation != b.dilation || a.in_shape != b.in_shape) return false;
  if (a.kind == ConvKind::kSubm) return true;
  return a.stride == b.stride && a.padding == b.padding && a.output_padding == b.output_padding;
}

class SparseConvKernel : public OpKernel {
 public:
  explicit SparseConvKernel(const KernelInit& init) : attrs_(parse_sparse_conv_attrs(init)) {
    where_ = init.where();
    features_text_ = input_text(init, 0);
    indices_text_ = input_text(init, 1);
    weight_text_ = input_text(init, 2);
    if (const Tensor* w = init.constant_input(2)) {
      check_weight(*w, -1);
      packed_ = pack_sparse_weight(w->data_as<float>(), w->dim(0), attrs_.kernel_volume(), w->dim(4));
      packed_cout_ = w->dim(0);
      have_packed_ = true;
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32 || x.rank() != 2)
      fail(where_, ": ", features_text_, " must be float32 [N, Cin], got ", dtype_name(x.dtype()), " ",
           shape_to_string(x.shape()));
    const int64_t n = x.dim(0), cin = x.dim(1);
    const Tensor& w = ctx.input(2);
    check_weight(w, cin);
    const int64_t cout = w.dim(0);
    std::vector<float> run_packed;
    const float* packed = packed_.data();
    if (!have_packed_) {
      run_packed = pack_sparse_weight(w.data_as<float>(), cout, attrs_.kernel_volume(), cin);
      packed = run_packed.data();
    }
    const float* bias = nullptr;
    if (ctx.has_input(3)) {
      const Tensor& b = ctx.input(3);
      if (b.dtype() != DType::kFloat32 || b.numel() != cout)
        fail(where_, ": input 3 (bias) must be float32 [", cout, "], got ", dtype_name(b.dtype()), " ",
             shape_to_string(b.shape()));
      bias = b.data_as<float>();
    }
    IndexSource src{where_, indices_text_, "input_spatial_shape"};
    Sites sites = read_sites(ctx.input(1), n, attrs_.in_shape, src);

    std::shared_ptr<const Rulebook> rb;
    const bool reverse = attrs_.kind == ConvKind::kInverse;
    if (reverse) {
      auto it = ctx.cache().entries.find(cache_key(ConvKind::kRegular, attrs_.rulebook));
      if (it == ctx.cache().entries.end())
        fail(where_, ": inverse SparseConv: rulebook key '", attrs_.rulebook,
             "' names no regular SparseConv that ran earlier in this run");
      rb = std::static_pointer_cast<const Rulebook>(it->second);
      if (rb->pairs.num_out != n ||
          (n > 0 && std::memcmp(rb->out_sites.data(), sites.rows.data(), sizeof(int32_t) * 4 * n) != 0))
        fail(where_, ": ", indices_text_, " (", n, " rows) must be the output sites (", rb->pairs.num_out,
             " rows) of the convolution with rulebook key '", attrs_.rulebook, "' (", rb->attrs.node_name, ")");
    } else if (!attrs_.rulebook.empty()) {
      auto& entry = ctx.cache().entries[cache_key(attrs_.kind, attrs_.rulebook)];
      if (entry) {
        rb = std::static_pointer_cast<const Rulebook>(entry);
        if (!same_geometry(rb->attrs, attrs_))
          fail(where_, ": shares rulebook key '", attrs_.rulebook, "' with ", rb->attrs.node_name,
               " but has a different geometry (kernel_size ", shape3_text(attrs_.kernel), " vs ",
               shape3_text(rb->attrs.kernel), ", dilation ", shape3_text(attrs_.dilation), " vs ",
               shape3_text(rb->attrs.dilation), ", input_spatial_shape ", shape3_text(attrs_.in_shape), " vs ",
               shape3_text(rb->attrs.in_shape), ")");
        if (rb->in_sites.count != n ||
            (n > 0 && std::memcmp(rb->in_sites.rows.data(), sites.rows.data(), sizeof(int32_t) * 4 * n) != 0))
          fail(where_, ": shares rulebook key '", attrs_.rulebook, "' with ", rb->attrs.node_name, " but its ",
               indices_text_, " are different sites (", n, " rows vs ", rb->in_sites.count, ")");
      } else {
        auto built = timed_rulebook(ctx, std::move(sites), src);
        built->attrs.node_name = where_;
        entry = built;
        rb = built;
      }
    } else {
      auto built = timed_rulebook(ctx, std::move(sites), src);
      built->attrs.node_name = where_;
      rb = built;
    }

    const PairLists* pairs = &rb->pairs;
    std::shared_ptr<const PairLists> reversed;
    if (reverse) {  // the reversed pairing is built once per run and key
      auto& entry = ctx.cache().entries[str_cat("pointrt.sparse.rulebook-reversed/", attrs_.rulebook)];
      if (!entry) {
        auto t0 = std::chrono::steady_clock::now();
        entry = std::make_shared<PairLists>(reverse_pairs(rb->pairs, rb->in_sites.count));
        ctx.record_phase("rulebook",
                         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      reversed = std::static_pointer_cast<const PairLists>(entry);
      pairs = reversed.get();
    }
    const int64_t m = pairs->num_out;
    Tensor& y = ctx.output(0, DType::kFloat32, {m, cout});
    apply_pairs(*pairs, x.data_as<float>(), cin, packed, cout, y.data_as<float>());
    apply_bias_activation(y.data_as<float>(), m, cout, bias, attrs_.act, attrs_.alpha);
    if (ctx.num_outputs() > 1) {
      Tensor& yi = ctx.output(1, DType::kInt32, {m, 4});
      const int32_t* s = reverse ? rb->in_sites.rows.data() : rb->out_site_rows();
      if (m) std::memcpy(yi.data(), s, sizeof(int32_t) * 4 * m);
    }
  }

 private:
  // Site pairing, timed as the "rulebook" phase for `bench --profile`.
  std::shared_ptr<Rulebook> timed_rulebook(KernelContext& ctx, Sites sites, const IndexSource& src) const {
    auto t0 = std::chrono::steady_clock::now();
    auto built = build_rulebook(attrs_, std::move(sites), src);
    ctx.record_phase("rulebook",
                     std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    return built;
  }

  void check_weight(const Tensor& w, int64_t cin) const {
    if (w.dtype() != DType::kFloat32 || w.rank() != 5 || w.dim(1) != attrs_.kernel[0] || w.dim(2) != attrs_.kernel[1] ||
        w.dim(3) != attrs_.kernel[2])
      fail(where_, ": ", weight_text_, " must be float32 [Cout, ", attrs_.kernel[0], ", ", attrs_.kernel[1], ", ",
           attrs_.kernel[2], ", Cin] (kernel_size ", shape3_text(attrs_.kernel), "), got ", dtype_name(w.dtype()), " ",
           shape_to_string(w.shape()));
    if (cin >= 0 && w.dim(4) != cin)
      fail(where_, ": ", features_text_, " has Cin = ", cin, " channels but ", weight_text_, " ",
           shape_to_string(w.shape()), " expects Cin = ", w.dim(4));
  }

  SparseConvAttrs attrs_;
  std::string where_, features_text_, indices_text_, weight_text_;
  std::vector<float> packed_;
  int64_t packed_cout_ = 0;
  bool have_packed_ = false;
};

}  // namespace

std::unique_ptr<OpKernel> make_sparse_conv_kernel(const KernelInit& init) {
  return std::make_unique<SparseConvKernel>(init);
}

}  // namespace sparse
}  // namespace pointrt
