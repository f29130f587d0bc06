// SparseConv rulebook of a regular or transposed convolution by merge-joins over the sites sorted
// once by key: per offset the output keys its inputs reach come out increasing, so neither a sort
// per offset nor a hash map is needed.
#include <algorithm>
#include <cstring>
#include <limits>

#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/sparse_conv_rulebook.h"

namespace pointrt::sparse {

namespace {

// The input sites sorted by key (stable) and bucketed by residue class (regular only, when few:
// class of q = (q0 % s0, q1 % s1, q2 % s2)), keeping key order within a class.
struct ClassOrder {
  bool by_class = false;
  std::vector<int64_t> class_start;     // classes + 1
  std::vector<int32_t> site, site_row;  // sites (4 each) and their input rows, in class order
  int64_t batches = 0;
};

ClassOrder sorted_by_class(const SparseConvAttrs& attrs, const Sites& in, const IndexSource& src) {
  const int64_t n = in.count;
  const Shape3 &is = attrs.in_shape, &st = attrs.stride;
  std::vector<uint64_t> keys(static_cast<size_t>(n));
  std::vector<int32_t> rows(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) {
    keys[r] = site_key(in.row(r), is);
    rows[r] = static_cast<int32_t>(r);
  }
  radix_sort_by_key(keys, rows, key_bits(keys));
  reject_duplicates(keys, in, is, src);
  ClassOrder co;
  co.batches = n == 0 ? 0 : in.row(rows[n - 1])[0] + 1;
  co.by_class = attrs.kind == ConvKind::kRegular && st[0] * st[1] * st[2] <= 64;
  const int64_t classes = co.by_class ? st[0] * st[1] * st[2] : 1;
  std::vector<int32_t> res[3];  // res[d][c] = c % stride[d], no divisions per site
  for (int d = 0; d < 3; ++d) {
    res[d].resize(static_cast<size_t>(is[d]));
    for (int64_t c = 0; c < is[d]; ++c) res[d][c] = static_cast<int32_t>(c % st[d]);
  }
  auto class_of = [&](const int32_t* s) -> int64_t {
    return co.by_class ? (int64_t(res[0][s[1]]) * st[1] + res[1][s[2]]) * st[2] + res[2][s[3]] : 0;
  };
  co.class_start.assign(static_cast<size_t>(classes + 1), 0);
  for (int64_t i = 0; i < n; ++i) ++co.class_start[class_of(in.row(i)) + 1];
  for (int64_t c = 0; c < classes; ++c) co.class_start[c + 1] += co.class_start[c];
  co.site.resize(static_cast<size_t>(n) * 4);
  co.site_row.resize(static_cast<size_t>(n));
  std::vector<int64_t> fill(co.class_start.begin(), co.class_start.end() - 1);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t* s = in.row(rows[i]);
    const int64_t pos = fill[class_of(s)]++;
    std::memcpy(co.site.data() + 4 * pos, s, sizeof(int32_t) * 4);
    co.site_row[pos] = rows[i];
  }
  return co;
}

// Pass 1, per offset: the output keys its inputs reach, increasing, with the input rows (into
// pl.in_rows).
std::vector<std::vector<uint64_t>> reached_keys(const SparseConvAttrs& attrs, const ClassOrder& co, PairLists& pl) {
  const Shape3 &os = attrs.out_shape, &k = attrs.kernel, &st = attrs.stride, &pad = attrs.padding,
               &dil = attrs.dilation;
  const int64_t volume = attrs.kernel_volume(), n = static_cast<int64_t>(co.site_row.size());
  std::vector<int32_t> fwd[3];
  forward_tap_tables(attrs, fwd);
  std::vector<std::vector<uint64_t>> reach(static_cast<size_t>(volume));
  auto residue = [](int64_t v, int64_t mod) { return ((v % mod) + mod) % mod; };
#pragma omp parallel for schedule(dynamic, 1) if (n * volume > 20000)
  for (int64_t o = 0; o < volume; ++o) {
    const int64_t a[3] = {o / (k[1] * k[2]), (o / k[2]) % k[1], o % k[2]};
    int64_t cls = 0;
    if (co.by_class)
      cls = (residue(a[0] * dil[0] - pad[0], st[0]) * st[1] + residue(a[1] * dil[1] - pad[1], st[1])) * st[2] +
            residue(a[2] * dil[2] - pad[2], st[2]);
    const int32_t* f0 = fwd[0].data() + a[0];
    const int32_t* f1 = fwd[1].data() + a[1];
    const int32_t* f2 = fwd[2].data() + a[2];
    auto& keys_o = reach[o];
    auto& rows_o = pl.in_rows[o];
    const int64_t lo = co.class_start[cls], hi = co.class_start[cls + 1];
    keys_o.resize(static_cast<size_t>(hi - lo));
    rows_o.resize(static_cast<size_t>(hi - lo));
    int64_t cnt = 0;
    for (int64_t i = lo; i < hi; ++i) {
      const int32_t* s = co.site.data() + 4 * i;
      const int32_t p0 = f0[s[1] * k[0]], p1 = f1[s[2] * k[1]], p2 = f2[s[3] * k[2]];
      // Branchless: write always, keep when the tap lands inside the output on every axis.
      keys_o[cnt] = site_key(s[0], p0, p1, p2, os);
      rows_o[cnt] = co.site_row[i];
      cnt += (p0 | p1 | p2) >= 0;
    }
    keys_o.resize(static_cast<size_t>(cnt));
    rows_o.resize(static_cast<size_t>(cnt));
  }
  return reach;
}

// Output sites: the sorted union of the reached keys (radix sort + unique; linear in the pairs).
std::vector<uint64_t> union_of_keys(const std::vector<std::vector<uint64_t>>& reach, int64_t batches,
                                    const Shape3& os) {
  std::vector<uint64_t> out_keys;
  size_t total = 0;
  for (const auto& r : reach) total += r.size();
  out_keys.reserve(total);
  for (const auto& r : reach) out_keys.insert(out_keys.end(), r.begin(), r.end());
  const uint64_t key_space = static_cast<uint64_t>(batches) * os[0] * os[1] * os[2];
  radix_sort_keys(out_keys, key_space <= 1 ? 0 : 64 - __builtin_clzll(key_space - 1));
  out_keys.erase(std::unique(out_keys.begin(), out_keys.end()), out_keys.end());
  return out_keys;
}

}  // namespace

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
  const Shape3& os = attrs.out_shape;
  const int64_t volume = attrs.kernel_volume(), n = rb.in_sites.count;
  PairLists& pl = rb.pairs;
  const ClassOrder co = sorted_by_class(attrs, rb.in_sites, src);
  std::vector<std::vector<uint64_t>> reach = reached_keys(attrs, co, pl);
  const std::vector<uint64_t> out_keys = union_of_keys(reach, co.batches, os);
  set_output_sites(rb, out_keys, src);

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

}  // namespace pointrt::sparse
