// SparseConv rulebook of a regular or transposed convolution by merge-joins over the sites sorted
// once by key: per offset the output keys its inputs reach come out increasing, so neither a sort
// per offset nor a hash map is needed.
#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/sparse_conv_rulebook.h"

namespace pointrt {
namespace sparse {

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

}  // namespace sparse
}  // namespace pointrt
