// Optimised CPU SparseConv: site hash map -> per-offset rulebook -> gather / GEMM / scatter-add.
#include "ops/sparse/sparse_conv.h"

#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
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
  s.kind = subm ? ConvKind::kSubm : transposed ? ConvKind::kTransposed : inverse ? ConvKind::kInverse : ConvKind::kRegular;
  s.rulebook = a.get_string("rulebook", "");
  s.act = parse_activation(a.get_string("activation", "None"), where);
  s.alpha = a.get_float("alpha", 0.01f);
  for (int d = 0; d < 3; ++d) {
    if (s.kernel[d] < 1) fail(where, ": kernel_size ", shape3_text(s.kernel), " must be >= 1 on every axis");
    if (s.stride[d] < 1) fail(where, ": stride ", shape3_text(s.stride), " must be >= 1 on every axis");
    if (s.dilation[d] < 1) fail(where, ": dilation ", shape3_text(s.dilation), " must be >= 1 on every axis");
    if (s.padding[d] < 0) fail(where, ": padding ", shape3_text(s.padding), " must be >= 0 on every axis");
    if (s.output_padding[d] < 0) fail(where, ": output_padding ", shape3_text(s.output_padding), " must be >= 0");
    if (s.in_shape[d] < 1) fail(where, ": input_spatial_shape ", shape3_text(s.in_shape), " must be >= 1 on every axis");
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

// Sorted unique output keys and a key -> row lookup. A bitmap over the output grid gives both
// without sorting when the grid is small enough; otherwise sort + hash map.
struct OutputSites {
  std::vector<uint64_t> bits;     // bitmap path
  std::vector<int32_t> word_rank; // rows before each bitmap word
  SiteMap map;                    // sort path
  bool use_bitmap = false;
  int32_t row_of(uint64_t key) const {
    if (!use_bitmap) return map.find(key);
    uint64_t w = bits[key >> 6];
    return word_rank[key >> 6] + __builtin_popcountll(w & ((uint64_t(1) << (key & 63)) - 1));
  }
};

}  // namespace

std::shared_ptr<Rulebook> build_rulebook(const SparseConvAttrs& attrs, Sites in_sites, const IndexSource& src) {
  auto rb = std::make_shared<Rulebook>();
  rb->attrs = attrs;
  rb->attrs.forward = nullptr;
  rb->in_sites = std::move(in_sites);
  const Sites& in = rb->in_sites;
  const int64_t volume = attrs.kernel_volume();
  const int64_t n = in.count;
  rb->in_rows.assign(volume, {});
  rb->out_rows.assign(volume, {});
  const Shape3& is = attrs.in_shape;
  const Shape3& os = attrs.out_shape;
  const Shape3 k = attrs.kernel, st = attrs.stride, pad = attrs.padding, dil = attrs.dilation;

  if (attrs.kind == ConvKind::kSubm) {
    SiteMap map = build_site_map(in, is, src);
    rb->num_out = n;
    const Shape3 center{(k[0] - 1) / 2, (k[1] - 1) / 2, (k[2] - 1) / 2};
#pragma omp parallel for schedule(dynamic, 1) if (n * volume > 20000)
    for (int64_t o = 0; o < volume; ++o) {
      const int64_t a0 = o / (k[1] * k[2]), a1 = (o / k[2]) % k[1], a2 = o % k[2];
      const int64_t d0 = (a0 - center[0]) * dil[0], d1 = (a1 - center[1]) * dil[1], d2 = (a2 - center[2]) * dil[2];
      auto& ir = rb->in_rows[o];
      auto& orow = rb->out_rows[o];
      if (d0 == 0 && d1 == 0 && d2 == 0) {  // the centre: every site pairs with itself
        ir.resize(n);
        orow.resize(n);
        for (int64_t p = 0; p < n; ++p) ir[p] = orow[p] = static_cast<int32_t>(p);
        rb->identity_offset = o;
        continue;
      }
      ir.reserve(n / 2);
      orow.reserve(n / 2);
      for (int64_t p = 0; p < n; ++p) {
        const int32_t* s = in.row(p);
        int64_t q0 = s[1] + d0, q1 = s[2] + d1, q2 = s[3] + d2;
        if (q0 < 0 || q0 >= is[0] || q1 < 0 || q1 >= is[1] || q2 < 0 || q2 >= is[2]) continue;
        int32_t q = map.find(site_key(s[0], q0, q1, q2, is));
        if (q < 0) continue;
        ir.push_back(q);
        orow.push_back(static_cast<int32_t>(p));
      }
    }
    return rb;
  }

  // Regular / transposed: duplicates are still an error (checked by the site map).
  {
    SiteMap check = build_site_map(in, is, src);
    (void)check;
  }
  int64_t batches = 0;
  for (int64_t r = 0; r < n; ++r) batches = std::max<int64_t>(batches, in.row(r)[0] + 1);
  const uint64_t out_keys = static_cast<uint64_t>(batches) * os[0] * os[1] * os[2];
  const bool transposed = attrs.kind == ConvKind::kTransposed;

  OutputSites outs;
  outs.use_bitmap = out_keys <= (uint64_t(1) << 31) && out_keys <= static_cast<uint64_t>(64 * std::max<int64_t>(n, 1) * 64);
  if (outs.use_bitmap) outs.bits.assign((out_keys + 63) / 64, 0);
  std::vector<std::vector<uint64_t>> pair_keys(volume);

#pragma omp parallel for schedule(dynamic, 1) if (n * volume > 20000)
  for (int64_t o = 0; o < volume; ++o) {
    const int64_t a[3] = {o / (k[1] * k[2]), (o / k[2]) % k[1], o % k[2]};
    auto& ir = rb->in_rows[o];
    auto& keys = pair_keys[o];
    for (int64_t q = 0; q < n; ++q) {
      const int32_t* s = in.row(q);
      int64_t p[3];
      bool ok = true;
      for (int d = 0; d < 3 && ok; ++d) {
        if (transposed) {
          p[d] = s[d + 1] * st[d] - pad[d] + a[d] * dil[d];
        } else {
          int64_t num = s[d + 1] + pad[d] - a[d] * dil[d];
          if (num < 0 || num % st[d] != 0) { ok = false; break; }
          p[d] = num / st[d];
        }
        ok = p[d] >= 0 && p[d] < os[d];
      }
      if (!ok) continue;
      uint64_t key = site_key(s[0], p[0], p[1], p[2], os);
      ir.push_back(static_cast<int32_t>(q));
      keys.push_back(key);
      if (outs.use_bitmap) __atomic_fetch_or(&outs.bits[key >> 6], uint64_t(1) << (key & 63), __ATOMIC_RELAXED);
    }
  }

  std::vector<uint64_t> sorted;
  if (outs.use_bitmap) {
    const size_t words = outs.bits.size();
    outs.word_rank.resize(words + 1);
    int64_t total = 0;
    for (size_t w = 0; w < words; ++w) {
      outs.word_rank[w] = static_cast<int32_t>(total);
      total += __builtin_popcountll(outs.bits[w]);
    }
    outs.word_rank[words] = static_cast<int32_t>(total);
    sorted.resize(total);
#pragma omp parallel for schedule(static) if (words > 65536)
    for (size_t w = 0; w < words; ++w) {
      uint64_t bits = outs.bits[w];
      int64_t r = outs.word_rank[w];
      while (bits) {
        int b = __builtin_ctzll(bits);
        sorted[r++] = (static_cast<uint64_t>(w) << 6) | static_cast<uint64_t>(b);
        bits &= bits - 1;
      }
    }
  } else {
    size_t total = 0;
    for (auto& v : pair_keys) total += v.size();
    sorted.reserve(total);
    for (auto& v : pair_keys) sorted.insert(sorted.end(), v.begin(), v.end());
#ifdef _OPENMP
    __gnu_parallel::sort(sorted.begin(), sorted.end());
#else
    std::sort(sorted.begin(), sorted.end());
#endif
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    outs.map.reserve(static_cast<int64_t>(sorted.size()));
    for (size_t i = 0; i < sorted.size(); ++i) outs.map.insert(sorted[i], static_cast<int32_t>(i));
  }
  const int64_t m = static_cast<int64_t>(sorted.size());
  if (m > std::numeric_limits<int32_t>::max() / 2)
    fail(src.where, ": the convolution would produce ", m, " output sites, more than supported");
  rb->num_out = m;
  rb->out_sites.resize(static_cast<size_t>(m) * 4);
#pragma omp parallel for schedule(static) if (m > 16384)
  for (int64_t i = 0; i < m; ++i) key_to_site(sorted[i], os, rb->out_sites.data() + 4 * i);

#pragma omp parallel for schedule(dynamic, 1) if (n * volume > 20000)
  for (int64_t o = 0; o < volume; ++o) {
    const auto& keys = pair_keys[o];
    auto& orow = rb->out_rows[o];
    orow.resize(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) orow[i] = outs.row_of(keys[i]);
  }
  return rb;
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
void sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float beta, float* c) {
  dnnl_status_t st = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, beta, c, n);
  if (st != dnnl_success) fail("SparseConv: dnnl_sgemm failed with status ", static_cast<int>(st));
}
}  // namespace

void apply_rulebook(const Rulebook& rb, bool reverse, const float* x, int64_t cin, const float* packed, int64_t cout,
                    float* out) {
  const int64_t out_rows = reverse ? rb.in_sites.count : rb.num_out;
  const int64_t volume = static_cast<int64_t>(rb.in_rows.size());
  if (out_rows == 0 || cout == 0) return;
  // A subm centre offset pairs every row with itself: one GEMM straight into the output.
  const int64_t identity = reverse ? -1 : rb.identity_offset;
  if (identity >= 0 && cin > 0) {
    sgemm(out_rows, cout, cin, x, packed + identity * cin * cout, 0.0f, out);
  } else {
#pragma omp parallel for schedule(static) if (out_rows * cout > 65536)
    for (int64_t r = 0; r < out_rows; ++r) std::memset(out + r * cout, 0, sizeof(float) * cout);
  }
  if (cin == 0) return;
  size_t max_pairs = 0;
  for (int64_t o = 0; o < volume; ++o)
    if (o != identity) max_pairs = std::max(max_pairs, rb.in_rows[o].size());
  if (max_pairs == 0) return;
  std::vector<float> gathered(max_pairs * cin), products(max_pairs * cout);
  for (int64_t o = 0; o < volume; ++o) {
    if (o == identity) continue;
    const auto& src_rows = reverse ? rb.out_rows[o] : rb.in_rows[o];
    const auto& dst_rows = reverse ? rb.in_rows[o] : rb.out_rows[o];
    const int64_t np = static_cast<int64_t>(src_rows.size());
    if (np == 0) continue;
    float* g = gathered.data();
#pragma omp parallel for schedule(static) if (np * cin > 32768)
    for (int64_t i = 0; i < np; ++i) std::memcpy(g + i * cin, x + static_cast<int64_t>(src_rows[i]) * cin, sizeof(float) * cin);
    sgemm(np, cout, cin, g, packed + o * cin * cout, 0.0f, products.data());
    // Within one offset every destination row occurs at most once: the scatter is race-free.
    const float* p = products.data();
#pragma omp parallel for schedule(static) if (np * cout > 32768)
    for (int64_t i = 0; i < np; ++i) {
      float* dst = out + static_cast<int64_t>(dst_rows[i]) * cout;
      const float* s = p + i * cout;
      for (int64_t c = 0; c < cout; ++c) dst[c] += s[c];
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
      if (rb->num_out != n || std::memcmp(rb->out_sites.data(), sites.rows.data(), sizeof(int32_t) * 4 * n) != 0)
        fail(where_, ": ", indices_text_, " (", n, " rows) must be the output sites (", rb->num_out,
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
            std::memcmp(rb->in_sites.rows.data(), sites.rows.data(), sizeof(int32_t) * 4 * n) != 0)
          fail(where_, ": shares rulebook key '", attrs_.rulebook, "' with ", rb->attrs.node_name,
               " but its ", indices_text_, " are different sites (", n, " rows vs ", rb->in_sites.count, ")");
      } else {
        auto built = build_rulebook(attrs_, std::move(sites), src);
        built->attrs.node_name = where_;
        entry = built;
        rb = built;
      }
    } else {
      auto built = build_rulebook(attrs_, std::move(sites), src);
      built->attrs.node_name = where_;
      rb = built;
    }

    const int64_t m = reverse ? rb->in_sites.count : rb->num_out;
    Tensor& y = ctx.output(0, DType::kFloat32, {m, cout});
    apply_rulebook(*rb, reverse, x.data_as<float>(), cin, packed, cout, y.data_as<float>());
    apply_bias_activation(y.data_as<float>(), m, cout, bias, attrs_.act, attrs_.alpha);
    if (ctx.num_outputs() > 1) {
      Tensor& yi = ctx.output(1, DType::kInt32, {m, 4});
      const int32_t* s = reverse ? rb->in_sites.rows.data() : rb->out_site_rows();
      if (m) std::memcpy(yi.data(), s, sizeof(int32_t) * 4 * m);
    }
  }

 private:
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
