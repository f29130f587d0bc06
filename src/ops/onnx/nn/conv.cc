// Conv, ConvTranspose and the internal FusedConv (Conv + folded BatchNorm + Add + Relu) on oneDNN.
//
// The kernel parses attributes and keeps the constant weights at prepare time. oneDNN needs the
// input shape to build a primitive, so primitives live in a cache keyed by input shape and OpenMP
// thread count (oneDNN fixes its thread split at creation; dnnl_common.h plan_key), a map behind a
// mutex: when the graph gives X a fixed shape the factory builds that entry right away (primitive
// created and weights reordered into the layout the primitive chose, once); a symbolic shape
// builds its entry on the first run with that shape, and steady-state runs only look it up.
//
// Layouts: X arrives plain or, when the nn pass says so, channel-blocked (dnnl_common.h); the
// output is written in the layout the pass asked for. When the primitive prefers another layout
// the kernel reorders through a thread-owned buffer. Configurations oneDNN refuses (rank > 5,
// negative transpose padding, ...) run the reference kernel of conv_ref.cc.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>

#include "ops/kernel.h"
#include "ops/onnx/nn/conv.h"
#include "ops/onnx/nn/dnnl_common.h"
#include "ops/onnx/nn/nn_kernels.h"

namespace pointrt::nn {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

tag weights_plain_tag(size_t rank, bool grouped, bool transpose) {
  // rank = rank of X; weights dims are [g,] O, I, spatial
  if (!transpose) {
    switch (rank) {
      case 3: return grouped ? tag::abcd : tag::abc;
      case 4: return grouped ? tag::abcde : tag::abcd;
      case 5: return grouped ? tag::abcdef : tag::abcde;
    }
  } else {  // ONNX keeps [C_in, C_out/group, K..]: i and o swapped
    switch (rank) {
      case 3: return grouped ? tag::acbd : tag::bac;
      case 4: return grouped ? tag::acbde : tag::bacd;
      case 5: return grouped ? tag::acbdef : tag::bacde;
    }
  }
  fail("oneDNN: no weights layout for rank ", rank);
}

struct ConvPlan {
  ConvGeometry geo;
  bool empty = false;  // zero-sized output: nothing to compute
  bool use_ref = false;
  // oneDNN objects (the op desc is kept alive for as long as its primitive_desc)
  std::shared_ptr<void> op_desc;
  dnnl::primitive_desc pd;
  dnnl::primitive prim;
  memory::desc x_md, y_md;            // layouts of the tensors the graph holds
  memory::desc src_md, dst_md, w_md;  // layouts the primitive wants
  memory::desc w_plain_md, b_md;
  memory packed_weights;  // weights reordered once (constant W only)
  std::string impl;
  PreparedReorder src_reorder, sum_reorder, dst_reorder;  // only where the layouts differ
  // Global-max mode (pointwise Conv1d + max over points): one primitive per chunk length.
  struct Chunk {
    int64_t length = 0;
    std::shared_ptr<void> op_desc;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::primitive prim;
    memory::desc src_md, dst_md;  // dense chunk layouts
    memory packed_weights;
    PreparedReorder gather;  // strided view of X's chunk -> dense src
  };
  Chunk main_chunk, tail_chunk;
  // Dilated "same" conv run as space-to-batch: sub-images of every dh-th row / dw-th column are
  // independent undilated convs (Winograd applies), computed by `sub` on [N*dh*dw, C, H/dh, W/dw].
  std::shared_ptr<ConvPlan> sub;
  int64_t s2b_dh = 1, s2b_dw = 1, s2b_chunk = 1;  // s2b_chunk: sub-images per primitive call
};

// Space-to-batch convs call Winograd on chunks of at least this many 4x4 output tiles: the
// scratchpad scales with the chunk, and below ~160 tiles oneDNN's F(4x4,3x3) slows down
// (layer3 of the PSPNet benchmark: 12.7 ms whole, 13.5 ms at 160 tiles, 22 ms at 80).
constexpr int64_t kS2bMinTiles = 160;

// Points per chunk in global-max mode: the chunk's output (M x chunk floats) stays in L2.
constexpr int64_t kMaxChunkBytes = 1 << 20;

class ConvKernel : public OpKernel {
 public:
  ConvKernel(const KernelInit& init, bool transpose, bool fused) : where_(init.where()), transpose_(transpose) {
    const Attributes& at = init.attrs();
    attrs_ = parse_conv_attrs(at, transpose, where_);
    if (fused) {
      relu_ = at.get_int(kAttrPostRelu, 0) != 0;
      has_sum_ = at.get_int(kAttrSumInput, 0) != 0;
      sum_inplace_ = at.get_int(kAttrSumInPlace, 0) != 0;
      global_max_ = at.get_int(kAttrGlobalMax, 0) != 0;
      squeeze_ = at.get_int(kAttrSqueeze, 0) != 0;
    }
    src_blocked_ = at.get_int(kAttrSrcBlocked, 0) != 0;
    dst_blocked_ = at.get_int(kAttrDstBlocked, 0) != 0;
    if (const Tensor* w = init.constant_input(1)) {
      if (w->dtype() != DType::kFloat32)
        fail(where_, ": input W has element type ", dtype_name(w->dtype()), ", expected float");
      weights_ = *w;
      weights_data_ = w->data();
      weights_shape_ = w->shape();
    }
    if (const Tensor* b = init.constant_input(2)) {
      if (b->dtype() != DType::kFloat32)
        fail(where_, ": input B has element type ", dtype_name(b->dtype()), ", expected float");
      bias_ = *b;
    }
    // Build the primitive now when X's shape and W are known.
    const Value* xv = init.input_value(0);
    if (weights_.defined() && xv && xv->has_shape && (bias_.defined() || !init.has_input(2))) {
      Shape s;
      for (const Dim& d : xv->shape) {
        if (!d.is_fixed()) return;
        s.push_back(d.value);
      }
      try {
        auto entry = build_plan(s, weights_.shape(), bias_.defined() ? &bias_.shape() : nullptr);
        plans_[plan_key(s)] = entry;
        // The plan holds its own packed copy of W: drop the plain one (the session drops its
        // reference too when no other node reads W; see releases_constant_input).
        if (owns_packed_copy(*entry->plan)) {
          weights_ = Tensor();
          weights_released_ = true;
        }
      } catch (const Error&) {
        // A shape the run will reject anyway; report it then, with the real input.
      }
    }
  }

  bool releases_constant_input(size_t i) const override { return i == 1 && weights_released_; }

  /// Implementation name chosen for a given X shape (for tests and the profiler).
  std::string impl_for(const Shape& x) const {
    auto p = plan_for(x, weights_shape_, bias_.defined() ? &bias_.shape() : nullptr);
    return p->use_ref ? "reference" : p->impl;
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    if (x.dtype() != DType::kFloat32)
      fail(where_, ": input X has element type ", dtype_name(x.dtype()), ", expected float");
    if (w.dtype() != DType::kFloat32)
      fail(where_, ": input W has element type ", dtype_name(w.dtype()), ", expected float");
    if (b && b->dtype() != DType::kFloat32)
      fail(where_, ": input B has element type ", dtype_name(b->dtype()), ", expected float");
    std::shared_ptr<const ConvPlan> plan = plan_for(x.shape(), w.shape(), b ? &b->shape() : nullptr);
    Shape out_shape = plan->geo.output_shape();
    if (global_max_) return run_global_max(ctx, *plan, x, w, b);

    Tensor y;
    if (has_sum_) {
      const Tensor& s = ctx.input(3);
      if (s.shape() != out_shape || s.dtype() != DType::kFloat32)
        fail(where_, ": fused Add input has shape ", shape_to_string(s.shape()), ", expected ",
             shape_to_string(out_shape));
      if (sum_inplace_) {
        y = s;  // the pass proved nobody else reads this buffer
        ctx.set_output(0, y);
      } else {
        y = ctx.output(0, DType::kFloat32, out_shape);
        if (s.nbytes()) std::memcpy(y.data(), s.data(), s.nbytes());
      }
    } else {
      y = ctx.output(0, DType::kFloat32, out_shape);
    }
    if (plan->empty) return;
    if (plan->use_ref) return run_reference(*plan, x, w, b, y);

    RunBuffers buffers(ctx);
    if (plan->sub) return run_space_to_batch(*plan, x, w, b, y, buffers);
    execute_dnnl(*plan, x.data(), y.data(), w, b, buffers);
  }

 private:
  // Run a oneDNN plan on X data `src` (layout x_md) into `dst` (layout y_md, holding the Add
  // operand first when a sum is fused).
  void execute_dnnl(const ConvPlan& plan, const void* x_data, void* y_data, const Tensor& w, const Tensor* b,
                    RunBuffers& buffers) const {
    const float* wdata = w.data_as<float>();
    memory wmem;
    if (plan.packed_weights && is_packed_constant(w))
      wmem = plan.packed_weights;
    else if (plan.w_md == plan.w_plain_md)
      wmem = memory(plan.w_md, cpu_engine(), const_cast<float*>(wdata));
    else {
      wmem = memory(plan.w_md, cpu_engine(), buffers.get(kWeightsSlot, plan.w_md.get_size()));
      reorder_memory(plan.w_plain_md, wdata, plan.w_md, wmem.get_data_handle());
    }
    void* src = const_cast<void*>(x_data);
    if (plan.src_md != plan.x_md) {
      void* tmp = buffers.get(kSrcSlot, plan.src_md.get_size());
      plan.src_reorder.run(src, tmp);
      src = tmp;
    }
    void* dst = y_data;
    bool dst_tmp = plan.dst_md != plan.y_md;
    if (dst_tmp) {
      dst = buffers.get(kDstSlot, plan.dst_md.get_size());
      if (has_sum_) plan.sum_reorder.run(y_data, dst);
    }
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(plan.src_md, cpu_engine(), src);
    args[DNNL_ARG_WEIGHTS] = wmem;
    if (b) args[DNNL_ARG_BIAS] = memory(plan.b_md, cpu_engine(), const_cast<void*>(b->data()));
    args[DNNL_ARG_DST] = memory(plan.dst_md, cpu_engine(), dst);
    execute_with_scratchpad(plan.prim, plan.pd, args, buffers);
    if (dst_tmp) plan.dst_reorder.run(dst, y_data);
  }

  // Copies between a [N, C, H, W] tensor and sub-images [first, first + count) of its
  // [N*dh*dw, C, H/dh, W/dw] space-to-batch form (`small` holds just those sub-images). Both
  // layouts this kernel uses are [N, C/U, H, W, U] with U = 1 (plain) or the channel block, so
  // one loop moving U contiguous floats serves both.
  static void space_to_batch(float* big, float* small, int64_t first, int64_t count, int64_t cu, int64_t h, int64_t w,
                             int64_t u, int64_t dh, int64_t dw, bool to_small) {
    int64_t hs = h / dh, ws = w / dw;
#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t k = 0; k < count; ++k)
      for (int64_t c = 0; c < cu; ++c) {
        int64_t nb = first + k;
        int64_t b0 = nb / (dh * dw), a = (nb / dw) % dh, bb = nb % dw;
        for (int64_t i = 0; i < hs; ++i) {
          const int64_t big_row = (((b0 * cu + c) * h) + i * dh + a) * w;
          const int64_t small_row = ((k * cu + c) * hs + i) * ws;
          for (int64_t j = 0; j < ws; ++j) {
            float* bp = big + (big_row + j * dw + bb) * u;
            float* sp = small + (small_row + j) * u;
            if (to_small)
              for (int64_t e = 0; e < u; ++e) sp[e] = bp[e];
            else
              for (int64_t e = 0; e < u; ++e) bp[e] = sp[e];
          }
        }
      }
  }

  // The sub-images go through the Winograd primitive a chunk at a time (p.s2b_chunk of them):
  // its scratchpad and the gathered copies then scale with the chunk, not the whole image.
  void run_space_to_batch(const ConvPlan& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                          RunBuffers& buffers) const {
    const ConvGeometry& g = p.geo;
    int64_t n = g.batch, h = g.in_spatial[0], wd = g.in_spatial[1];
    int64_t ux = src_blocked_ ? channel_block() : 1, uy = dst_blocked_ ? channel_block() : 1;
    int64_t total = n * p.s2b_dh * p.s2b_dw, chunk = p.s2b_chunk;
    size_t sub_pixels = static_cast<size_t>(h / p.s2b_dh) * (wd / p.s2b_dw);
    float* xs = static_cast<float*>(buffers.get(kS2bSrcSlot, chunk * g.in_channels * sub_pixels * sizeof(float)));
    float* ys = static_cast<float*>(buffers.get(kS2bDstSlot, chunk * g.out_channels * sub_pixels * sizeof(float)));
    float* xd = const_cast<float*>(x.data_as<float>());
    float* yd = y.data_as<float>();
    for (int64_t first = 0; first < total; first += chunk) {
      space_to_batch(xd, xs, first, chunk, g.in_channels / ux, h, wd, ux, p.s2b_dh, p.s2b_dw, true);
      if (has_sum_) space_to_batch(yd, ys, first, chunk, g.out_channels / uy, h, wd, uy, p.s2b_dh, p.s2b_dw, true);
      execute_dnnl(*p.sub, xs, ys, w, b, buffers);
      space_to_batch(yd, ys, first, chunk, g.out_channels / uy, h, wd, uy, p.s2b_dh, p.s2b_dw, false);
    }
  }

  // True when `w` (the run's W) is the constant this kernel packed: the constant itself, or the
  // data-less placeholder the session leaves once the plain copy is released.
  bool is_packed_constant(const Tensor& w) const {
    return weights_data_ && (w.data() == weights_data_ || (weights_released_ && w.data() == nullptr));
  }

  // The plan keeps W packed in memory of its own (not a view of the plain weights), for every
  // primitive it runs.
  static bool owns_packed_copy(const ConvPlan& p) {
    if (p.empty || p.use_ref) return false;
    if (p.sub) return owns_packed_copy(*p.sub);
    if (p.main_chunk.prim)
      return p.main_chunk.packed_weights && (p.tail_chunk.length == 0 || p.tail_chunk.packed_weights);
    return p.packed_weights && p.w_md != p.w_plain_md;
  }

  std::shared_ptr<const ConvPlan> plan_for(const Shape& x, const Shape& w, const Shape* b) const {
    std::lock_guard<std::mutex> lock(mutex_);
    Shape key = plan_key(x);
    auto it = plans_.find(key);
    if (it != plans_.end() && w == it->second->w_shape_key && (b != nullptr) == it->second->has_bias_key)
      return it->second->plan;
    if (weights_released_) {
      // The plain W is gone, so no new packing: a plan made for this shape under another thread
      // count computes the same result (oneDNN only splits the work differently).
      for (const auto& [k, e] : plans_)
        if (Shape(k.begin(), k.end() - 1) == x && w == e->w_shape_key && (b != nullptr) == e->has_bias_key)
          return e->plan;
      fail(where_, ": input X has shape ", shape_to_string(x), ", but W was packed for ",
           plans_.empty() ? std::string("no shape")
                          : shape_to_string(Shape(plans_.begin()->first.begin(), plans_.begin()->first.end() - 1)),
           " only and its plain copy released (the model declared that shape)");
    }
    auto entry = build_plan(x, w, b);
    plans_[key] = entry;
    return entry->plan;
  }

  struct Entry {
    std::shared_ptr<const ConvPlan> plan;
    Shape w_shape_key;
    bool has_bias_key = false;
  };

  std::shared_ptr<Entry> build_plan(const Shape& x, const Shape& w, const Shape* b) const {
    auto p = std::make_shared<ConvPlan>();
    p->geo = conv_geometry(attrs_, x, w, b, where_);
    const ConvGeometry& g = p->geo;
    auto entry = std::make_shared<Entry>();
    entry->w_shape_key = w;
    entry->has_bias_key = b != nullptr;
    entry->plan = p;
    if (shape_numel(g.output_shape()) == 0) {
      p->empty = true;
      return entry;
    }
    if (x.size() > 5) fail(where_, ": ", x.size() - 2, " spatial dimensions are not supported (at most 3)");
    try {
      if (global_max_)
        build_global_max(*p, x, w, b != nullptr);
      else if (!build_space_to_batch(*p, x, w, b != nullptr))
        build_dnnl(*p, x, w, b != nullptr);
    } catch (const dnnl::error&) {
      p->use_ref = true;
    }
    return entry;
  }

  // A 2D dilated conv that keeps the spatial size, with padding a multiple of the dilation and
  // sizes divisible by it, is dh*dw undilated convs on sub-sampled images (TensorFlow's
  // SpaceToBatch trick); those can use Winograd, which dilated kernels cannot.
  bool build_space_to_batch(ConvPlan& p, const Shape& x, const Shape& w, bool has_bias) const {
    const ConvGeometry& g = p.geo;
    if (transpose_ || x.size() != 4 || g.group != 1 || !winograd_enabled()) return false;
    int64_t dh = g.dilations[0], dw = g.dilations[1];
    if (dh == 1 && dw == 1) return false;
    if (g.strides[0] != 1 || g.strides[1] != 1 || g.out_spatial != g.in_spatial) return false;
    if (g.in_spatial[0] % dh || g.in_spatial[1] % dw) return false;
    if (g.kernel[0] != 3 || g.kernel[1] != 3 || g.in_channels < 64 || g.out_channels < 64)
      return false;  // Winograd's case
    for (int i = 0; i < 2; ++i)
      if (g.pad_begin[i] % g.dilations[i] || g.pad_end[i] % g.dilations[i]) return false;
    if ((src_blocked_ && g.in_channels % channel_block()) || (dst_blocked_ && g.out_channels % channel_block()))
      return false;
    // Sub-images per call: enough 4x4 output tiles to keep the Winograd GEMMs efficient.
    int64_t total = g.batch * dh * dw;
    int64_t tiles = ((g.in_spatial[0] / dh + 3) / 4) * ((g.in_spatial[1] / dw + 3) / 4);
    int64_t chunk = total;
    for (int64_t d = 1; d <= total; ++d)
      if (total % d == 0 && d * tiles >= kS2bMinTiles) {
        chunk = d;
        break;
      }
    auto sub = std::make_shared<ConvPlan>();
    sub->geo = g;
    sub->geo.batch = chunk;
    sub->geo.in_spatial = {g.in_spatial[0] / dh, g.in_spatial[1] / dw};
    sub->geo.out_spatial = sub->geo.in_spatial;
    sub->geo.dilations = {1, 1};
    sub->geo.pad_begin = {g.pad_begin[0] / dh, g.pad_begin[1] / dw};
    sub->geo.pad_end = {g.pad_end[0] / dh, g.pad_end[1] / dw};
    Shape sx{sub->geo.batch, g.in_channels, sub->geo.in_spatial[0], sub->geo.in_spatial[1]};
    // Winograd's memory is judged against the whole layer's output, not a chunk's.
    build_dnnl(*sub, sx, w, has_bias, sizeof(float) * static_cast<double>(shape_numel(g.output_shape())));
    if (sub->impl.find("wino") == std::string::npos) return false;  // no gain without Winograd
    p.sub = sub;
    p.s2b_dh = dh;
    p.s2b_dw = dw;
    p.s2b_chunk = chunk;
    p.impl = "space_to_batch + " + sub->impl;
    return true;
  }

  void build_dnnl(ConvPlan& p, const Shape& x, const Shape& w, bool has_bias, double layer_output_bytes = 0) const {
    const ConvGeometry& g = p.geo;
    size_t rank = x.size();
    for (int64_t pb : g.pad_begin)
      if (pb < 0) throw dnnl::error(dnnl_unimplemented, "negative padding");
    for (int64_t pe : g.pad_end)
      if (pe < 0) throw dnnl::error(dnnl_unimplemented, "negative padding");
    Shape y = g.output_shape();
    bool grouped = g.group > 1;
    memory::dims wdims;
    if (grouped) wdims.push_back(g.group);
    wdims.push_back(g.out_channels / g.group);
    wdims.push_back(g.in_channels / g.group);
    wdims.insert(wdims.end(), g.kernel.begin(), g.kernel.end());
    p.w_plain_md = memory::desc(wdims, memory::data_type::f32, weights_plain_tag(rank, grouped, transpose_));
    p.b_md = memory::desc({g.out_channels}, memory::data_type::f32, tag::x);
    p.x_md = f32_desc(x, src_blocked_ ? blocked_tag(rank) : plain_tag(rank));
    p.y_md = f32_desc(y, dst_blocked_ ? blocked_tag(rank) : plain_tag(rank));
    memory::dims strides(g.strides.begin(), g.strides.end()), dil, pl(g.pad_begin.begin(), g.pad_begin.end()),
        pr(g.pad_end.begin(), g.pad_end.end());
    for (int64_t d : g.dilations) dil.push_back(d - 1);  // oneDNN counts dilation from 0

    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops ops;
    if (has_sum_) ops.append_sum(1.f);
    if (relu_) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);

    memory::desc w_any(wdims, memory::data_type::f32, tag::any);
    // Source: keep what the graph holds when it is blocked, or for the first layer of a network
    // (few channels, where oneDNN reads plain input directly); otherwise let oneDNN choose.
    bool small_c = g.in_channels / g.group < 8 && !grouped;
    memory::desc src_want = (src_blocked_ || small_c) ? p.x_md : f32_desc(x, tag::any);
    memory::desc dst_any = f32_desc(y, tag::any);

    if (layer_output_bytes == 0) layer_output_bytes = sizeof(float) * static_cast<double>(shape_numel(y));
    const double plain_weight_bytes = sizeof(float) * static_cast<double>(shape_numel(w));
    auto try_make = [&](const memory::desc& src, const memory::desc& dst, dnnl::algorithm alg) -> bool {
      try {
        if (!transpose_) {
          auto d = std::make_shared<dnnl::convolution_forward::desc>(dnnl::prop_kind::forward_inference, alg, src,
                                                                     w_any, p.b_md, dst, strides, dil, pl, pr);
          if (!has_bias)
            d = std::make_shared<dnnl::convolution_forward::desc>(dnnl::prop_kind::forward_inference, alg, src, w_any,
                                                                  dst, strides, dil, pl, pr);
          auto pd = dnnl::convolution_forward::primitive_desc(*d, attr, cpu_engine());
          // Winograd: the first implementation whose memory is worth it (oneDNN lists F(4x4,3x3)
          // before F(2x2,3x3), which keeps smaller weights and scratchpad).
          if (alg == dnnl::algorithm::convolution_winograd)
            while (!winograd_worth_its_memory(pd.weights_desc().get_size() - plain_weight_bytes, layer_output_bytes))
              if (!pd.next_impl()) return false;
          p.op_desc = d;
          p.src_md = pd.src_desc();
          p.dst_md = pd.dst_desc();
          p.w_md = pd.weights_desc();
          p.pd = pd;
          p.prim = dnnl::convolution_forward(pd);
        } else {
          auto d = std::make_shared<dnnl::deconvolution_forward::desc>(dnnl::prop_kind::forward_inference, alg, src,
                                                                       w_any, p.b_md, dst, strides, dil, pl, pr);
          if (!has_bias)
            d = std::make_shared<dnnl::deconvolution_forward::desc>(dnnl::prop_kind::forward_inference, alg, src, w_any,
                                                                    dst, strides, dil, pl, pr);
          auto pd = dnnl::deconvolution_forward::primitive_desc(*d, attr, cpu_engine());
          p.op_desc = d;
          p.src_md = pd.src_desc();
          p.dst_md = pd.dst_desc();
          p.w_md = pd.weights_desc();
          p.pd = pd;
          p.prim = dnnl::deconvolution_forward(pd);
        }
        p.impl = p.pd.impl_info_str();
        return true;
      } catch (const dnnl::error&) {
        return false;
      }
    };
    auto is_ref = [&] { return p.impl.rfind("ref", 0) == 0; };

    bool made = false;
    dnnl::algorithm direct = transpose_ ? dnnl::algorithm::deconvolution_direct : dnnl::algorithm::convolution_direct;
    // Winograd for 3x3 stride-1 layers with enough channels, where oneDNN accepts it.
    bool wino_shape = !transpose_ && rank == 4 && !grouped && g.kernel[0] == 3 && g.kernel[1] == 3 &&
                      g.strides[0] == 1 && g.strides[1] == 1 && g.dilations[0] == 1 && g.dilations[1] == 1 &&
                      g.in_channels >= 64 && g.out_channels >= 64 && winograd_enabled();
    if (wino_shape) {
      memory::desc dst = dst_blocked_ ? p.y_md : dst_any;
      made = try_make(src_want, dst, dnnl::algorithm::convolution_winograd);
    }
    if (!made) {
      if (dst_blocked_)
        made = try_make(src_want, p.y_md, direct);
      else {
        // Plain destination (an edge read by another family, or a graph output). A pointwise
        // conv without post-ops on plain data is one GEMM (W [M, C] x X [C, HW]): take oneDNN's
        // gemm kernel, which writes plain directly. Anything else runs faster as a blocked jit
        // kernel plus reorders than as im2col + GEMM (and gemm applies post-ops in a slow
        // second pass), so let oneDNN choose the layouts.
        bool pointwise = std::all_of(g.kernel.begin(), g.kernel.end(), [](int64_t k) { return k == 1; }) &&
                         std::all_of(g.strides.begin(), g.strides.end(), [](int64_t v) { return v == 1; }) &&
                         std::all_of(g.pad_begin.begin(), g.pad_begin.end(), [](int64_t v) { return v == 0; }) &&
                         std::all_of(g.pad_end.begin(), g.pad_end.end(), [](int64_t v) { return v == 0; });
        if (pointwise && !src_blocked_ && !transpose_ && !relu_ && !has_sum_)
          made = try_make(p.x_md, p.y_md, direct) && !is_ref();
        if (!made) made = try_make(src_want, dst_any, direct);
        // Last resort before the reference kernel: whatever oneDNN has for plain in and out.
        if (!made) made = try_make(p.x_md, p.y_md, direct);
      }
    }
    if (!made) throw dnnl::error(dnnl_unimplemented, "no convolution primitive");
    if (p.src_md != p.x_md) p.src_reorder = make_reorder(p.x_md, p.src_md);
    if (p.dst_md != p.y_md) {
      p.dst_reorder = make_reorder(p.dst_md, p.y_md);
      if (has_sum_) p.sum_reorder = make_reorder(p.y_md, p.dst_md);
    }

    if (weights_.defined() && weights_.shape() == w) {
      if (p.w_md == p.w_plain_md)
        p.packed_weights = memory(p.w_md, cpu_engine(), const_cast<void*>(weights_.data()));
      else {
        p.packed_weights = memory(p.w_md, cpu_engine());
        reorder_memory(p.w_plain_md, weights_.data(), p.w_md, p.packed_weights.get_data_handle());
      }
    }
  }

  // Global-max mode: y[n, m] = max over points of conv(x)[n, m, :] (after bias and ReLU).
  void build_global_max(ConvPlan& p, const Shape& x, const Shape& w, bool has_bias) const {
    const ConvGeometry& g = p.geo;
    if (x.size() != 3 || g.group != 1) throw dnnl::error(dnnl_unimplemented, "global max needs a 1D conv");
    int64_t c = g.in_channels, m = g.out_channels, points = g.out_spatial[0];
    int64_t chunk =
        std::max<int64_t>(16, std::min<int64_t>(points, kMaxChunkBytes / (4 * std::max<int64_t>(m, 1)) / 16 * 16));
    p.w_plain_md = memory::desc({m, c, 1}, memory::data_type::f32, tag::abc);
    p.b_md = memory::desc({m}, memory::data_type::f32, tag::x);
    p.x_md = f32_desc(x, src_blocked_ ? blocked_tag(3) : plain_tag(3));
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::post_ops ops;
    if (relu_) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);
    auto make = [&](ConvPlan::Chunk& ch, int64_t len) {
      ch.length = len;
      Shape cs{1, c, len}, ds{1, m, len};
      ch.src_md = f32_desc(cs, blockable(3, c) ? blocked_tag(3) : plain_tag(3));
      ch.dst_md = f32_desc(ds, blockable(3, m) ? blocked_tag(3) : plain_tag(3));
      memory::desc w_any({m, c, 1}, memory::data_type::f32, tag::any);
      std::shared_ptr<dnnl::convolution_forward::desc> d;
      if (has_bias)
        d = std::make_shared<dnnl::convolution_forward::desc>(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, ch.src_md, w_any, p.b_md,
            ch.dst_md, memory::dims{1}, memory::dims{0}, memory::dims{0});
      else
        d = std::make_shared<dnnl::convolution_forward::desc>(
            dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, ch.src_md, w_any, ch.dst_md,
            memory::dims{1}, memory::dims{0}, memory::dims{0});
      ch.op_desc = d;
      // X's chunk as a strided view of the whole tensor in the graph's layout (pointer offset
      // chosen per chunk at run time).
      memory::desc view;
      if (src_blocked_) {
        view = f32_desc({1, c, len}, blocked_tag(3));
        auto& st = view.data.format_desc.blocking.strides;
        st[0] = c * points;
        st[1] = points * channel_block();
        st[2] = channel_block();
      } else {
        view = memory::desc({1, c, len}, memory::data_type::f32, memory::dims{c * points, points, 1});
      }
      ch.gather = make_reorder(view, ch.src_md);
      ch.pd = dnnl::convolution_forward::primitive_desc(*d, attr, cpu_engine());
      ch.prim = dnnl::convolution_forward(ch.pd);
      if (weights_.defined() && weights_.shape() == w) {
        ch.packed_weights = memory(ch.pd.weights_desc(), cpu_engine());
        reorder_memory(p.w_plain_md, weights_.data(), ch.pd.weights_desc(), ch.packed_weights.get_data_handle());
      }
    };
    make(p.main_chunk, chunk);
    if (points % chunk) make(p.tail_chunk, points % chunk);
    p.impl = std::string(p.main_chunk.pd.impl_info_str()) + " + running max";
  }

  void run_global_max(KernelContext& ctx, const ConvPlan& p, const Tensor& x, const Tensor& w, const Tensor* b) const {
    const ConvGeometry& g = p.geo;
    int64_t n_batch = g.batch, c = g.in_channels, m = g.out_channels;
    int64_t points = g.out_spatial.empty() ? 0 : g.out_spatial[0];
    Tensor& y = ctx.output(0, DType::kFloat32, squeeze_ ? Shape{n_batch, m} : Shape{n_batch, m, 1});
    if (y.numel() == 0) return;
    if (points == 0) fail(where_, ": max over an empty set of points (X ", shape_to_string(x.shape()), ")");
    float* out = y.data_as<float>();
    if (p.use_ref || p.empty) {
      Tensor full = Tensor::allocate(DType::kFloat32, g.output_shape());
      run_reference(p, x, w, b, full);
      const float* f = full.data_as<float>();
      for (int64_t i = 0; i < n_batch * m; ++i) {
        float acc = f[i * points];
        for (int64_t k = 1; k < points; ++k) {
          float v = f[i * points + k];
          acc = (v > acc || std::isnan(v)) ? v : acc;
        }
        out[i] = acc;
      }
      return;
    }
    const int64_t blk = channel_block();
    RunBuffers buffers(ctx);
    for (int64_t n = 0; n < n_batch; ++n) {
      float* acc = out + n * m;
      for (int64_t i = 0; i < m; ++i) acc[i] = -INFINITY;
      for (int64_t p0 = 0; p0 < points; p0 += p.main_chunk.length) {
        const ConvPlan::Chunk& ch = points - p0 >= p.main_chunk.length ? p.main_chunk : p.tail_chunk;
        int64_t len = ch.length;
        const float* base = x.data_as<float>() + n * c * points + p0 * (src_blocked_ ? blk : 1);
        void* src = buffers.get(kSrcSlot, ch.src_md.get_size());
        ch.gather.run(base, src);
        float* dst = static_cast<float*>(buffers.get(kDstSlot, ch.dst_md.get_size()));
        std::unordered_map<int, memory> args;
        args[DNNL_ARG_SRC] = memory(ch.src_md, cpu_engine(), src);
        memory wmem = ch.packed_weights;
        if (!wmem || !is_packed_constant(w)) {
          wmem = memory(ch.pd.weights_desc(), cpu_engine(), buffers.get(kWeightsSlot, ch.pd.weights_desc().get_size()));
          reorder_memory(p.w_plain_md, w.data(), ch.pd.weights_desc(), wmem.get_data_handle());
        }
        args[DNNL_ARG_WEIGHTS] = wmem;
        if (b) args[DNNL_ARG_BIAS] = memory(p.b_md, cpu_engine(), const_cast<void*>(b->data()));
        args[DNNL_ARG_DST] = memory(ch.dst_md, cpu_engine(), dst);
        execute_with_scratchpad(ch.prim, ch.pd, args, buffers);
        bool blocked_dst = blockable(3, m);
        int64_t groups = blocked_dst ? m / blk : m;
#pragma omp parallel for schedule(static) if (groups * len > 65536)
        for (int64_t gi = 0; gi < groups; ++gi) {
          if (blocked_dst) {
            if (blk == 16)
              running_max_block<16>(dst + gi * len * 16, len, acc + gi * 16);
            else
              running_max_block<8>(dst + gi * len * 8, len, acc + gi * 8);
          } else {
            const float* d = dst + gi * len;
            float a = acc[gi];
            for (int64_t k = 0; k < len; ++k) a = d[k] > a ? d[k] : a;
            acc[gi] = a;
          }
        }
      }
    }
  }

  // acc[j] = max(acc[j], d[k * B + j]) over k. A local copy of acc keeps the compiler from
  // assuming d and acc alias, so the inner loop is one vector max per k. (NaN handling follows
  // the hardware max, as ONNX Runtime's ReduceMax does: unspecified.)
  template <int B>
  static void running_max_block(const float* __restrict d, int64_t len, float* __restrict acc) {
    float a[B];
    for (int j = 0; j < B; ++j) a[j] = acc[j];
    for (int64_t k = 0; k < len; ++k) {
#pragma omp simd
      for (int j = 0; j < B; ++j) a[j] = d[k * B + j] > a[j] ? d[k * B + j] : a[j];
    }
    for (int j = 0; j < B; ++j) acc[j] = a[j];
  }

  void run_reference(const ConvPlan& p, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y) const {
    const ConvGeometry& g = p.geo;
    size_t rank = x.rank();
    Shape ys = g.output_shape();
    Tensor xp = x;
    if (src_blocked_) {
      xp = Tensor::allocate(DType::kFloat32, x.shape());
      reorder_memory(f32_desc(x.shape(), blocked_tag(rank)), x.data(), f32_desc(x.shape(), plain_tag(rank)), xp.data());
    }
    Tensor yp = Tensor::allocate(DType::kFloat32, ys);
    const float* bias = b ? b->data_as<float>() : nullptr;
    if (transpose_)
      conv_transpose_ref(g, xp.data_as<float>(), w.data_as<float>(), bias, yp.data_as<float>());
    else
      conv_ref(g, xp.data_as<float>(), w.data_as<float>(), bias, yp.data_as<float>());
    Tensor sum;
    if (has_sum_) {
      sum = y;  // holds the Add operand in y's layout
      if (dst_blocked_) {
        sum = Tensor::allocate(DType::kFloat32, ys);
        reorder_memory(f32_desc(ys, blocked_tag(rank)), y.data(), f32_desc(ys, plain_tag(rank)), sum.data());
      }
    }
    float* yd = yp.data_as<float>();
    int64_t n = yp.numel();
    for (int64_t i = 0; i < n; ++i) {
      float v = yd[i] + (has_sum_ ? sum.data_as<float>()[i] : 0.f);
      yd[i] = relu_ && v < 0 ? 0.f : v;
    }
    if (dst_blocked_)
      reorder_memory(f32_desc(ys, plain_tag(rank)), yd, f32_desc(ys, blocked_tag(rank)), y.data());
    else
      std::memcpy(y.data(), yd, yp.nbytes());
  }

  std::string where_;
  bool transpose_;
  ConvAttrs attrs_;
  bool relu_ = false, has_sum_ = false, sum_inplace_ = false, src_blocked_ = false, dst_blocked_ = false;
  bool global_max_ = false, squeeze_ = false;
  Tensor weights_, bias_;
  const void* weights_data_ = nullptr;  // identity of the constant W (kept after its release)
  Shape weights_shape_;
  bool weights_released_ = false;  // only packed copies of W remain
  mutable std::mutex mutex_;
  mutable std::map<Shape, std::shared_ptr<Entry>> plans_;
};

}  // namespace

namespace {
// POINTRT_WINOGRAD: "0" never, "1" wherever oneDNN has it, unset: where it is worth its memory.
int winograd_mode() {
  static const int mode = [] {
    const char* e = std::getenv("POINTRT_WINOGRAD");
    if (e && std::string(e) == "0") return 0;
    if (e && std::string(e) == "1") return 1;
    return 2;
  }();
  return mode;
}
}  // namespace

bool winograd_enabled() { return winograd_mode() != 0; }

bool winograd_worth_its_memory(double extra_weight_bytes, double layer_output_bytes) {
  if (winograd_mode() == 1) return true;
  // Winograd keeps the weights transformed for the session's life: F(4x4,3x3) in 6x6 tiles, 4x
  // the plain 3x3 weights; F(2x2,3x3) in 4x4 tiles, 1.8x. (Its scratchpad is a temporary in the
  // run's arena.) The speed-up grows with the image, so the extra weights may take up to twice
  // the layer's output, or 8 MiB whatever the output: early, large-image layers and
  // F(2x2,3x3) on small maps (ResNet-18's layer4: 7 MB) yes; 512 channels at 60x80 with
  // F(4x4,3x3) (the PSPNet benchmark's layer4: 27 MB extra for a 9.4 MB output) no.
  constexpr double kPerOutputByte = 2.0, kAlwaysBytes = 8.0 * 1048576;
  return extra_weight_bytes <= std::max(kPerOutputByte * layer_output_bytes, kAlwaysBytes);
}

std::unique_ptr<OpKernel> make_conv_kernel(const KernelInit& init) {
  return std::make_unique<ConvKernel>(init, false, false);
}
std::unique_ptr<OpKernel> make_conv_transpose_kernel(const KernelInit& init) {
  return std::make_unique<ConvKernel>(init, true, false);
}
std::unique_ptr<OpKernel> make_fused_conv_kernel(const KernelInit& init) {
  return std::make_unique<ConvKernel>(init, false, true);
}

std::string conv_impl_name(const OpKernel& k, const Shape& x) {
  auto* c = dynamic_cast<const ConvKernel*>(&k);
  return c ? c->impl_for(x) : "";
}

}  // namespace pointrt::nn
