// SparseConv rulebook: which build_rulebook path runs, the helpers the sorted builders share (radix
// sort, duplicate check, tap tables) and the reversed pairing of an inverse convolution.
#include <algorithm>
#include <limits>
#include <memory>

#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/sparse_conv_rulebook.h"

namespace pointrt::sparse {

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

}  // namespace

void radix_sort_by_key(std::vector<uint64_t>& keys, std::vector<int32_t>& rows, int bits) {
  radix_sort_impl<true>(keys, rows, bits);
}
void radix_sort_keys(std::vector<uint64_t>& keys, int bits) {
  std::vector<int32_t> none;
  radix_sort_impl<false>(keys, none, bits);
}

void set_output_sites(Rulebook& rb, const std::vector<uint64_t>& sorted_keys, const IndexSource& src) {
  const int64_t m = static_cast<int64_t>(sorted_keys.size());
  if (m > std::numeric_limits<int32_t>::max() / 2)
    fail(src.where, ": the convolution would produce ", m, " output sites, more than supported");
  rb.out_sites.resize(static_cast<size_t>(m) * 4);
#pragma omp parallel for schedule(static) if (m > (1 << 17))
  for (int64_t i = 0; i < m; ++i) key_to_site(sorted_keys[i], rb.attrs.out_shape, rb.out_sites.data() + 4 * i);
  rb.pairs.num_out = m;
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

std::shared_ptr<Rulebook> build_rulebook(const SparseConvAttrs& attrs, Sites in_sites, const IndexSource& src,
                                         RulebookMethod method) {
  auto rb = std::make_shared<Rulebook>();
  rb->attrs = attrs;
  rb->attrs.forward = nullptr;
  rb->in_sites = std::move(in_sites);
  const int64_t volume = attrs.kernel_volume();
  rb->pairs.in_rows.assign(volume, {});
  rb->pairs.out_rows.assign(volume, {});
  if (method != RulebookMethod::kHash && attrs.kind == ConvKind::kSubm && build_subm_sorted(*rb, src)) return rb;
  if (method != RulebookMethod::kHash && attrs.kind != ConvKind::kSubm) {
    build_strided_sorted(*rb, src);
    return rb;
  }
  build_hashed(*rb, src);
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

}  // namespace pointrt::sparse
