// Optimised CPU SparseConv kernel: attributes, input checks, the rulebook (built, or shared through
// the run's cache by key) and its execution. The rulebook is built in sparse_conv_rulebook*.cc,
// the gather-GEMM-scatter in sparse_conv_gemm.cc.
#include "ops/sparse/sparse_conv.h"

#include <chrono>
#include <cstring>

namespace pointrt::sparse {

// ---------------------------------------------------------------- attributes

namespace {

void check_geometry_attrs(const SparseConvAttrs& s, const std::string& where) {
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
}

// The output spatial shape of each kind (OPS.md "SparseConv" shape rules); an inverse takes its
// referenced convolution's input shape.
void set_output_shape(SparseConvAttrs& s, std::shared_ptr<SparseConvAttrs> forward, const std::string& where) {
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
}

void check_spatial_shapes(const Attributes& a, const SparseConvAttrs& s, const std::string& where) {
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
}

}  // namespace

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
  check_geometry_attrs(s, where);
  set_output_shape(s, std::move(forward), where);
  check_spatial_shapes(a, s, where);
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
    const float* bias = bias_data(ctx, cout);
    IndexSource src{where_, indices_text_, "input_spatial_shape"};
    Sites sites = read_sites(ctx.input(1), n, attrs_.in_shape, src);

    const bool reverse = attrs_.kind == ConvKind::kInverse;
    std::shared_ptr<const Rulebook> rb =
        reverse ? forward_rulebook(ctx, sites, n) : rulebook_for(ctx, std::move(sites), src, n);
    std::shared_ptr<const PairLists> reversed = reverse ? reversed_pairs(ctx, *rb) : nullptr;
    const PairLists* pairs = reverse ? reversed.get() : &rb->pairs;
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
  const float* bias_data(KernelContext& ctx, int64_t cout) const {
    if (!ctx.has_input(3)) return nullptr;
    const Tensor& b = ctx.input(3);
    if (b.dtype() != DType::kFloat32 || b.numel() != cout)
      fail(where_, ": input 3 (bias) must be float32 [", cout, "], got ", dtype_name(b.dtype()), " ",
           shape_to_string(b.shape()));
    return b.data_as<float>();
  }

  // An inverse node's rulebook: the one its regular convolution built earlier in this run, whose
  // output sites must be this node's input sites.
  std::shared_ptr<const Rulebook> forward_rulebook(KernelContext& ctx, const Sites& sites, int64_t n) const {
    auto it = ctx.cache().entries.find(cache_key(ConvKind::kRegular, attrs_.rulebook));
    if (it == ctx.cache().entries.end())
      fail(where_, ": inverse SparseConv: rulebook key '", attrs_.rulebook,
           "' names no regular SparseConv that ran earlier in this run");
    auto rb = std::static_pointer_cast<const Rulebook>(it->second);
    if (rb->pairs.num_out != n ||
        (n > 0 && std::memcmp(rb->out_sites.data(), sites.rows.data(), sizeof(int32_t) * 4 * n) != 0))
      fail(where_, ": ", indices_text_, " (", n, " rows) must be the output sites (", rb->pairs.num_out,
           " rows) of the convolution with rulebook key '", attrs_.rulebook, "' (", rb->attrs.node_name, ")");
    return rb;
  }

  // Built for this node, or shared by key within the run (same geometry and input sites).
  std::shared_ptr<const Rulebook> rulebook_for(KernelContext& ctx, Sites sites, const IndexSource& src,
                                               int64_t n) const {
    if (attrs_.rulebook.empty()) return timed_rulebook(ctx, std::move(sites), src);
    auto& entry = ctx.cache().entries[cache_key(attrs_.kind, attrs_.rulebook)];
    if (!entry) {
      auto built = timed_rulebook(ctx, std::move(sites), src);
      entry = built;
      return built;
    }
    auto rb = std::static_pointer_cast<const Rulebook>(entry);
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
    return rb;
  }

  // The forward pairing read backwards, built once per run and key.
  std::shared_ptr<const PairLists> reversed_pairs(KernelContext& ctx, const Rulebook& rb) const {
    auto& entry = ctx.cache().entries[str_cat("pointrt.sparse.rulebook-reversed/", attrs_.rulebook)];
    if (!entry) {
      auto t0 = std::chrono::steady_clock::now();
      entry = std::make_shared<PairLists>(reverse_pairs(rb.pairs, rb.in_sites.count));
      ctx.record_phase("rulebook",
                       std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return std::static_pointer_cast<const PairLists>(entry);
  }

  // Site pairing, timed as the "rulebook" phase for `bench --profile`.
  std::shared_ptr<Rulebook> timed_rulebook(KernelContext& ctx, Sites sites, const IndexSource& src) const {
    auto t0 = std::chrono::steady_clock::now();
    auto built = build_rulebook(attrs_, std::move(sites), src);
    built->attrs.node_name = where_;
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

}  // namespace pointrt::sparse
