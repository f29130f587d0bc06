// SparseConv rulebook for any kind by site hash map: the output sites from every (input, offset)
// candidate, then one probe per (output, offset) for the input it reads. The fallback of the
// sorted builders (padded key space over 62 bits) and their test oracle.
#include <algorithm>
#include <limits>

#ifdef _OPENMP
#include <parallel/algorithm>
#endif

#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/sparse_conv_rulebook.h"

namespace pointrt::sparse {

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

// Output sites (rows of the result) as (b, p0, p1, p2): the input sites for subm, else the sorted
// unique sites some input reaches (kept in rb.out_sites). Sets rb.pairs.num_out.
const int32_t* hashed_output_sites(Rulebook& rb, const IndexSource& src) {
  const SparseConvAttrs& attrs = rb.attrs;
  const Sites& in = rb.in_sites;
  const int64_t n = in.count;
  if (attrs.kind == ConvKind::kSubm) {
    rb.pairs.num_out = n;
    return in.rows.data();
  }
  const Shape3& os = attrs.out_shape;
  const Shape3 k = attrs.kernel;
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
  set_output_sites(rb, unique_output_keys(key_space, n, for_each_candidate), src);
  return rb.out_sites.data();
}

// back[d][c * k + a]: the input coordinate output coordinate c reads through tap a, or -1.
// Subm: q = p + (a - c) * dil; regular: q = p * stride - pad + a * dil; transposed:
// q * stride = p + pad - a * dil.
void backward_tap_tables(const SparseConvAttrs& attrs, std::vector<int32_t> back[3]) {
  const Shape3 &is = attrs.in_shape, &os = attrs.out_shape, &k = attrs.kernel, &st = attrs.stride, &pad = attrs.padding,
               &dil = attrs.dilation;
  for (int d = 0; d < 3; ++d) {
    const int64_t center = (k[d] - 1) / 2;
    back[d].assign(static_cast<size_t>(os[d] * k[d]), -1);
    for (int64_t c = 0; c < os[d]; ++c)
      for (int64_t a = 0; a < k[d]; ++a) {
        int64_t q = -1;
        switch (attrs.kind) {
          case ConvKind::kSubm: q = c + (a - center) * dil[d]; break;
          case ConvKind::kRegular: q = c * st[d] - pad[d] + a * dil[d]; break;
          default: {
            const int64_t num = c + pad[d] - a * dil[d];
            if (num >= 0 && num % st[d] == 0) q = num / st[d];
          }
        }
        if (q >= 0 && q < is[d]) back[d][c * k[d] + a] = static_cast<int32_t>(q);
      }
  }
}

// The pairs of offset `o`: for each of the m output sites `out`, the input it reads through the
// tap, found in the site map. Lookups in chunks: compute and prefetch the slots first, then probe
// (hides cache misses). Lists come out sorted by output row.
void probe_offset(const SparseConvAttrs& attrs, const SiteMap& map, const std::vector<int32_t> back[3],
                  const int32_t* out, int64_t m, int64_t o, std::vector<int32_t>& ir, std::vector<int32_t>& orow) {
  const Shape3& k = attrs.kernel;
  const int64_t a[3] = {o / (k[1] * k[2]), (o / k[2]) % k[1], o % k[2]};
  const int32_t* b0 = back[0].data() + a[0];
  const int32_t* b1 = back[1].data() + a[1];
  const int32_t* b2 = back[2].data() + a[2];
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
      keys[cnt] = site_key(s[0], q0, q1, q2, attrs.in_shape);
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

// Subm offsets come in mirror pairs (o, volume-1-o): q = p + d  <=>  p = q - d. Offsets from
// `searched` on are the searched ones read backwards, re-sorted by output row.
void mirror_offsets(PairLists& pl, int64_t searched, int64_t volume) {
  const int64_t m = pl.num_out;
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

}  // namespace

void build_hashed(Rulebook& rb, const IndexSource& src) {
  const SparseConvAttrs& attrs = rb.attrs;
  const int64_t volume = attrs.kernel_volume();
  PairLists& pl = rb.pairs;
  const SiteMap map = build_site_map(rb.in_sites, attrs.in_shape, src);  // also rejects duplicate sites
  const int32_t* out = hashed_output_sites(rb, src);
  const int64_t m = pl.num_out;

  // Output-major pairing: for each output p and offset o, the input q it reads.
  std::vector<int32_t> back[3];
  backward_tap_tables(attrs, back);
  // Subm: only the first half of the offsets (and the centre) needs hash lookups.
  const bool mirror = attrs.kind == ConvKind::kSubm;
  const int64_t searched = mirror ? volume / 2 + 1 : volume;
  const int64_t centre = volume / 2;  // subm: odd kernel sizes, so the middle offset is the centre tap
#pragma omp parallel for schedule(dynamic, 1) if (m * searched > 20000)
  for (int64_t o = 0; o < searched; ++o) {
    auto& ir = pl.in_rows[o];
    auto& orow = pl.out_rows[o];
    if (mirror && o == centre) {
      ir.resize(m);
      orow.resize(m);
      for (int64_t p = 0; p < m; ++p) ir[p] = orow[p] = static_cast<int32_t>(p);
      pl.identity_offset = o;
      continue;
    }
    probe_offset(attrs, map, back, out, m, o, ir, orow);
  }
  if (mirror) mirror_offsets(pl, searched, volume);
}

}  // namespace pointrt::sparse
