// Naive SparseConv oracles: (1) OPS.md evaluated literally, one output site at a time, with a
// std::map site lookup; (2) dense convolution on the densified grid (small grids only).
#include <map>
#include <set>
#include "ops/index_types.h"

#include "ops/sparse/sparse_conv.h"

namespace pointrt::sparse {

namespace {

using Site = std::array<int64_t, 4>;

std::vector<Site> sites_of(const Tensor& idx) {
  std::vector<Site> s(static_cast<size_t>(idx.dim(0)));
  for (int64_t r = 0; r < idx.dim(0); ++r)
    for (int c = 0; c < 4; ++c)
      s[r][c] = idx.dtype() == DType::kInt32 ? idx.data_as<int32_t>()[4 * r + c] : idx.data_as<int64_t>()[4 * r + c];
  return s;
}

float activate(float v, Activation act, float alpha) {
  switch (act) {
    case Activation::kNone: return v;
    case Activation::kReLU: return v > 0.f ? v : 0.f;
    case Activation::kLeakyReLU: return v >= 0.f ? v : v * alpha;
    case Activation::kSigmoid: return 1.f / (1.f + std::exp(-v));
  }
  return v;
}

// W[co, o, ci] . x  accumulated into acc[co]
void accumulate(std::vector<double>& acc, const float* w, int64_t volume, int64_t o, int64_t cin, const float* x) {
  for (size_t co = 0; co < acc.size(); ++co)
    for (int64_t ci = 0; ci < cin; ++ci) acc[co] += double(w[(co * volume + o) * cin + ci]) * x[ci];
}

struct RefForward {  // what an inverse needs from the regular convolution
  SparseConvAttrs attrs;
  std::vector<Site> in_sites, out_sites;
};

// One run's inputs, with the site lookup every kind uses.
struct RefProblem {
  const SparseConvAttrs& attrs;
  std::vector<Site> in;
  std::map<Site, int64_t> row_of;
  const float *xd, *wd;
  int64_t cin, cout, volume;

  int64_t lookup(const Site& s) const {
    auto it = row_of.find(s);
    return it == row_of.end() ? int64_t(-1) : it->second;
  }
  int64_t offset(int64_t o, int d) const {
    const Shape3& k = attrs.kernel;
    return d == 0 ? o / (k[1] * k[2]) : d == 1 ? (o / k[2]) % k[1] : o % k[2];
  }
  // acc += W[:, o, :] . x[row r], when the site was found.
  void add(std::vector<double>& acc, int64_t o, int64_t r) const {
    if (r >= 0) accumulate(acc, wd, volume, o, cin, xd + r * cin);
  }
};

// Subm: every output site is an input site; q = p + (a - centre) * dil.
void subm_ref(const RefProblem& pb, std::vector<Site>& out_sites, std::vector<std::vector<double>>& acc) {
  const Shape3 &k = pb.attrs.kernel, &dil = pb.attrs.dilation;
  out_sites = pb.in;
  acc.assign(pb.in.size(), std::vector<double>(pb.cout, 0.0));
  for (size_t p = 0; p < pb.in.size(); ++p)
    for (int64_t o = 0; o < pb.volume; ++o) {
      Site q = pb.in[p];
      for (int d = 0; d < 3; ++d) q[d + 1] += (pb.offset(o, d) - (k[d] - 1) / 2) * dil[d];
      pb.add(acc[p], o, pb.lookup(q));
    }
}

// Regular / transposed: the sites some input reaches (sorted), then for each one its inputs.
void strided_ref(const RefProblem& pb, std::vector<Site>& out_sites, std::vector<std::vector<double>>& acc) {
  const Shape3 &st = pb.attrs.stride, &pad = pb.attrs.padding, &dil = pb.attrs.dilation;
  const Shape3 &is = pb.attrs.in_shape, &os = pb.attrs.out_shape;
  const bool tr = pb.attrs.kind == ConvKind::kTransposed;
  std::set<Site> outs;
  for (const Site& q : pb.in)
    for (int64_t o = 0; o < pb.volume; ++o) {
      Site p = q;
      bool ok = true;
      for (int d = 0; d < 3; ++d) {
        int64_t a = pb.offset(o, d);
        if (tr)
          p[d + 1] = q[d + 1] * st[d] - pad[d] + a * dil[d];
        else {
          int64_t num = q[d + 1] + pad[d] - a * dil[d];
          if (num < 0 || num % st[d]) ok = false;
          p[d + 1] = num / st[d];
        }
        ok = ok && p[d + 1] >= 0 && p[d + 1] < os[d];
      }
      if (ok) outs.insert(p);
    }
  out_sites.assign(outs.begin(), outs.end());
  acc.assign(out_sites.size(), std::vector<double>(pb.cout, 0.0));
  for (size_t i = 0; i < out_sites.size(); ++i)
    for (int64_t o = 0; o < pb.volume; ++o) {
      Site q = out_sites[i];
      bool ok = true;
      for (int d = 0; d < 3; ++d) {
        int64_t a = pb.offset(o, d), p = out_sites[i][d + 1];
        if (tr) {
          int64_t num = p + pad[d] - a * dil[d];
          if (num < 0 || num % st[d]) ok = false;
          q[d + 1] = num / st[d];
        } else {
          q[d + 1] = p * st[d] - pad[d] + a * dil[d];
        }
        ok = ok && q[d + 1] >= 0 && q[d + 1] < is[d];
      }
      pb.add(acc[i], o, ok ? pb.lookup(q) : -1);
    }
}

// Inverse: each pair (q_in, o, p_out) of the forward convolution `f`, in reverse.
void inverse_ref(const RefProblem& pb, const RefForward& f, std::vector<Site>& out_sites,
                 std::vector<std::vector<double>>& acc) {
  const SparseConvAttrs& fa = f.attrs;
  out_sites = f.in_sites;
  acc.assign(out_sites.size(), std::vector<double>(pb.cout, 0.0));
  for (size_t i = 0; i < out_sites.size(); ++i)
    for (int64_t o = 0; o < pb.volume; ++o) {
      Site p = out_sites[i];
      bool ok = true;
      for (int d = 0; d < 3; ++d) {
        int64_t num = out_sites[i][d + 1] + fa.padding[d] - pb.offset(o, d) * fa.dilation[d];
        if (num < 0 || num % fa.stride[d]) ok = false;
        p[d + 1] = num / fa.stride[d];
        ok = ok && p[d + 1] < fa.out_shape[d];
      }
      pb.add(acc[i], o, ok ? pb.lookup(p) : -1);
    }
}

class SparseConvReferenceKernel : public OpKernel {
 public:
  explicit SparseConvReferenceKernel(const KernelInit& init) : attrs_(parse_sparse_conv_attrs(init)) {
    where_ = init.where();
    indices_text_ = input_text(init, 1);
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(2);
    const int64_t n = x.dim(0), cin = x.dim(1);
    if (w.dim(4) != cin) fail(where_, ": features have Cin = ", cin, " but the weight expects Cin = ", w.dim(4));
    const float* bias = ctx.has_input(3) ? ctx.input(3).data_as<float>() : nullptr;
    // Validation (same rules and messages as the optimised kernel).
    read_sites(ctx.input(1), n, attrs_.in_shape, IndexSource{where_, indices_text_, "input_spatial_shape"});
    RefProblem pb{attrs_,
                  sites_of(as_signed_indices(ctx.input(1))),
                  {},
                  x.data_as<float>(),
                  w.data_as<float>(),
                  cin,
                  w.dim(0),
                  attrs_.kernel_volume()};
    for (int64_t r = 0; r < n; ++r)
      if (!pb.row_of.emplace(pb.in[r], r).second)
        fail(where_, ": ", indices_text_, " rows ", pb.row_of[pb.in[r]], " and ", r, " are the same site");

    std::vector<Site> out_sites;
    std::vector<std::vector<double>> acc;
    switch (attrs_.kind) {
      case ConvKind::kSubm: subm_ref(pb, out_sites, acc); break;
      case ConvKind::kRegular:
      case ConvKind::kTransposed:
        strided_ref(pb, out_sites, acc);
        if (!attrs_.rulebook.empty() && attrs_.kind == ConvKind::kRegular) {
          auto f = std::make_shared<RefForward>();
          f->attrs = attrs_;
          f->in_sites = pb.in;
          f->out_sites = out_sites;
          ctx.cache().entries["pointrt.sparse.ref/" + attrs_.rulebook] = f;
        }
        break;
      case ConvKind::kInverse: inverse_ref(pb, forward_of(ctx, pb.in), out_sites, acc); break;
    }
    write_outputs(ctx, out_sites, acc, pb.cout, bias);
  }

 private:
  const RefForward& forward_of(KernelContext& ctx, const std::vector<Site>& in) const {
    auto it = ctx.cache().entries.find("pointrt.sparse.ref/" + attrs_.rulebook);
    if (it == ctx.cache().entries.end())
      fail(where_, ": inverse SparseConv: rulebook key '", attrs_.rulebook,
           "' names no regular SparseConv that ran earlier in this run");
    auto f = std::static_pointer_cast<RefForward>(it->second);
    if (f->out_sites != in) fail(where_, ": indices must be the output sites of the referenced convolution");
    return *f;  // the run cache keeps it alive
  }

  void write_outputs(KernelContext& ctx, const std::vector<Site>& out_sites,
                     const std::vector<std::vector<double>>& acc, int64_t cout, const float* bias) const {
    const int64_t m = static_cast<int64_t>(out_sites.size());
    Tensor& y = ctx.output(0, DType::kFloat32, {m, cout});
    for (int64_t i = 0; i < m; ++i)
      for (int64_t c = 0; c < cout; ++c)
        y.data_as<float>()[i * cout + c] =
            activate(float(acc[i][c]) + (bias ? bias[c] : 0.f), attrs_.act, attrs_.alpha);
    if (ctx.num_outputs() > 1) {
      Tensor& yi = ctx.output(1, DType::kInt32, {m, 4});
      for (int64_t i = 0; i < m; ++i)
        for (int c = 0; c < 4; ++c) yi.data_as<int32_t>()[4 * i + c] = static_cast<int32_t>(out_sites[i][c]);
    }
  }

  SparseConvAttrs attrs_;
  std::string where_, indices_text_;
};

}  // namespace

std::unique_ptr<OpKernel> make_sparse_conv_reference_kernel(const KernelInit& init) {
  return std::make_unique<SparseConvReferenceKernel>(init);
}

namespace {

// The input position q output position p reads through tap av (false when outside the input).
// `g` holds the stride and padding: the referenced convolution's for an inverse.
bool dense_input(const SparseConvAttrs& a, const SparseConvAttrs& g, const int64_t p[3], const int64_t av[3],
                 int64_t q[3]) {
  const Shape3 &k = a.kernel, &dil = a.dilation;
  bool ok = true;
  for (int d = 0; d < 3; ++d) {
    switch (a.kind) {
      case ConvKind::kSubm: q[d] = p[d] + (av[d] - (k[d] - 1) / 2) * dil[d]; break;
      case ConvKind::kRegular: q[d] = p[d] * a.stride[d] - a.padding[d] + av[d] * dil[d]; break;
      case ConvKind::kTransposed:
      case ConvKind::kInverse: {  // input q with q*stride - pad + a*dil = p
        int64_t num = p[d] + g.padding[d] - av[d] * g.dilation[d];
        if (num < 0 || num % g.stride[d]) ok = false;
        q[d] = num / g.stride[d];
        break;
      }
    }
    ok = ok && q[d] >= 0 && q[d] < a.in_shape[d];
  }
  return ok;
}

}  // namespace

SparseResult sparse_conv_dense_oracle(const SparseConvAttrs& a, const Tensor& features, const Tensor& indices,
                                      const Tensor& weight, const Tensor* bias, const Tensor* forward_input_indices) {
  const int64_t n = features.dim(0), cin = features.dim(1), cout = weight.dim(0), volume = a.kernel_volume();
  const float* w = weight.data_as<float>();
  std::vector<Site> in = sites_of(indices);
  int64_t batches = 1;
  for (const Site& s : in) batches = std::max(batches, s[0] + 1);
  std::vector<Site> fwd_in;
  if (a.kind == ConvKind::kInverse) {
    fwd_in = sites_of(*forward_input_indices);
    for (const Site& s : fwd_in) batches = std::max(batches, s[0] + 1);
  }
  const Shape3 &is = a.in_shape, &os = a.out_shape;
  const int64_t in_vol = is[0] * is[1] * is[2], out_vol = os[0] * os[1] * os[2];
  if ((batches * in_vol + batches * out_vol) * std::max<int64_t>(cin, 1) > (int64_t(1) << 28))
    fail("sparse_conv_dense_oracle: grid too large for the dense oracle");
  // Densify the input.
  std::vector<float> grid(static_cast<size_t>(batches * in_vol * cin), 0.f);
  std::vector<uint8_t> occupied(static_cast<size_t>(batches * in_vol), 0);
  auto lin_in = [&](int64_t b, int64_t i0, int64_t i1, int64_t i2) {
    return ((b * is[0] + i0) * is[1] + i1) * is[2] + i2;
  };
  for (int64_t r = 0; r < n; ++r) {
    int64_t l = lin_in(in[r][0], in[r][1], in[r][2], in[r][3]);
    occupied[l] = 1;
    for (int64_t c = 0; c < cin; ++c) grid[l * cin + c] = features.data_as<float>()[r * cin + c];
  }
  // Which output positions are sites.
  std::vector<uint8_t> is_out(static_cast<size_t>(batches * out_vol), 0);
  auto lin_out = [&](int64_t b, int64_t i0, int64_t i1, int64_t i2) {
    return ((b * os[0] + i0) * os[1] + i1) * os[2] + i2;
  };
  if (a.kind == ConvKind::kSubm) {
    for (const Site& s : in) is_out[lin_out(s[0], s[1], s[2], s[3])] = 1;
  } else if (a.kind == ConvKind::kInverse) {
    for (const Site& s : fwd_in) is_out[lin_out(s[0], s[1], s[2], s[3])] = 1;
  }
  const Shape3& k = a.kernel;
  const SparseConvAttrs& g = a.kind == ConvKind::kInverse ? *a.forward : a;  // stride/pad source for inverse
  SparseResult res;
  res.channels = cout;
  std::vector<double> acc(cout);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t p0 = 0; p0 < os[0]; ++p0)
      for (int64_t p1 = 0; p1 < os[1]; ++p1)
        for (int64_t p2 = 0; p2 < os[2]; ++p2) {
          const int64_t p[3] = {p0, p1, p2};
          bool restricted = a.kind == ConvKind::kSubm || a.kind == ConvKind::kInverse;
          if (restricted && !is_out[lin_out(b, p0, p1, p2)]) continue;
          std::fill(acc.begin(), acc.end(), 0.0);
          bool any = false;
          for (int64_t a0 = 0; a0 < k[0]; ++a0)
            for (int64_t a1 = 0; a1 < k[1]; ++a1)
              for (int64_t a2 = 0; a2 < k[2]; ++a2) {
                const int64_t av[3] = {a0, a1, a2};
                int64_t q[3] = {0, 0, 0};
                if (!dense_input(a, g, p, av, q)) continue;
                int64_t l = lin_in(b, q[0], q[1], q[2]);
                if (!occupied[l]) continue;
                any = true;
                accumulate(acc, w, volume, (a0 * k[1] + a1) * k[2] + a2, cin, grid.data() + l * cin);
              }
          if (!restricted && !any) continue;
          res.rows++;
          res.sites.insert(res.sites.end(), {int32_t(b), int32_t(p0), int32_t(p1), int32_t(p2)});
          for (int64_t c = 0; c < cout; ++c)
            res.features.push_back(activate(float(acc[c]) + (bias ? bias->data_as<float>()[c] : 0.f), a.act, a.alpha));
        }
  return res;
}

}  // namespace pointrt::sparse
