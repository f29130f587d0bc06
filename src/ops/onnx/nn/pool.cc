// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool on oneDNN (pooling_v2), with the
// reference kernels of pool_ref.cc for what oneDNN does not express: the Indices output,
// integer and double inputs, more than three spatial dims, and anything oneDNN refuses.
//
// Like Conv, primitives are cached per (input shape, thread count) behind a mutex and built in the factory when
// X's shape is known. A global pool over a blocked input writes [N, C, 1, 1], whose blocked and
// plain layouts are the same bytes, so its output is always plain for the graph.
#include <map>
#include <mutex>

#include "ops/kernel.h"
#include "ops/onnx/nn/dnnl_common.h"
#include "ops/onnx/nn/nn_kernels.h"
#include "ops/onnx/nn/pool.h"

namespace pointrt::nn {

namespace {

using dnnl::memory;

struct PoolPlan {
  PoolGeometry geo;
  bool use_ref = false;
  std::shared_ptr<dnnl::pooling_v2_forward::desc> op_desc;
  dnnl::pooling_v2_forward::primitive_desc pd;
  dnnl::primitive prim;
  memory::desc src_md, dst_md;
};

class PoolKernel : public OpKernel {
 public:
  PoolKernel(const KernelInit& init, PoolKind kind, bool global) : where_(init.where()) {
    attrs_ = parse_pool_attrs(init.attrs(), kind, global, where_);
    src_blocked_ = init.attrs().get_int(kAttrSrcBlocked, 0) != 0;
    dst_blocked_ = init.attrs().get_int(kAttrDstBlocked, 0) != 0;
    int8_nhwc_ = init.attrs().get_int(kAttrInt8Nhwc, 0) != 0;
    want_indices_ = init.node.outputs.size() > 1 && init.node.outputs[1] >= 0;
    squeeze_ = global && init.attrs().get_int(kAttrSqueeze, 0) != 0;
    if (want_indices_ && kind != PoolKind::kMax) fail(where_, ": only MaxPool has an Indices output");
    const Value* xv = init.input_value(0);
    if (xv && xv->has_shape && (xv->dtype == DType::kFloat32 || xv->dtype == DType::kUndefined)) {
      Shape s;
      for (const Dim& d : xv->shape) {
        if (!d.is_fixed()) return;
        s.push_back(d.value);
      }
      try {
        plans_[plan_key(s)] = build_plan(s);
      } catch (const Error&) {}
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    DType t = x.dtype();
    bool is_f32 = t == DType::kFloat32;
    if (!is_f32 &&
        !(attrs_.kind == PoolKind::kMax && (t == DType::kInt8 || t == DType::kUInt8 || t == DType::kFloat64)))
      fail(where_, ": input X has element type ", dtype_name(t), ", which this operator does not support");
    if (!is_f32) {
      PoolGeometry g = pool_geometry(attrs_, x.shape(), where_);
      Tensor& y = ctx.output(0, t, g.output_shape());
      int64_t* ind = want_indices_ ? ctx.output(1, DType::kInt64, g.output_shape()).data_as<int64_t>() : nullptr;
      if (y.numel() == 0) return;
      dispatch_all(t, "MaxPool", [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
          if (int8_nhwc_) return run_int8_nhwc<T>(g, x, y);
          // int8 stems of quantized networks: the same per-tap passes as float32.
          if (!ind && !attrs_.global && max_pool_2d_plain<T>(g, x.data_as<T>(), y.data_as<T>())) return;
        }
        if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t> || std::is_same_v<T, double>)
          max_pool_ref<T>(g, attrs_.storage_order, x.data_as<T>(), y.data_as<T>(), ind);
      });
      return;
    }
    std::shared_ptr<const PoolPlan> plan = plan_for(x.shape());
    Shape ys = plan->geo.output_shape();
    // A ReduceMax rewritten by the nn pass drops the size-1 spatial dims (same bytes).
    Tensor& y = ctx.output(0, DType::kFloat32, squeeze_ ? Shape{ys[0], ys[1]} : ys);
    int64_t* ind = want_indices_ ? ctx.output(1, DType::kInt64, ys).data_as<int64_t>() : nullptr;
    if (y.numel() == 0) return;
    // Plain 2-D max pooling: a vectorised pass per window tap beats oneDNN's plain-layout kernel.
    if (attrs_.kind == PoolKind::kMax && !attrs_.global && !ind && !src_blocked_ && !dst_blocked_ &&
        max_pool_2d_plain(plan->geo, x.data_as<float>(), y.data_as<float>()))
      return;
    if (plan->use_ref) {
      const float* xd = x.data_as<float>();
      Tensor plain;
      if (src_blocked_) {
        plain = Tensor::allocate(DType::kFloat32, x.shape());
        reorder_memory(f32_desc(x.shape(), blocked_tag(x.rank())), x.data(), f32_desc(x.shape(), plain_tag(x.rank())),
                       plain.data());
        xd = plain.data_as<float>();
      }
      Tensor out = dst_blocked_ ? Tensor::allocate(DType::kFloat32, ys) : y;
      if (attrs_.kind == PoolKind::kMax)
        max_pool_ref<float>(plan->geo, attrs_.storage_order, xd, out.data_as<float>(), ind);
      else
        average_pool_ref(plan->geo, attrs_.count_include_pad || attrs_.global, xd, out.data_as<float>());
      if (dst_blocked_)
        reorder_memory(f32_desc(ys, plain_tag(ys.size())), out.data(), f32_desc(ys, blocked_tag(ys.size())), y.data());
      else if (out.data() != y.data())
        std::memcpy(y.data(), out.data(), out.nbytes());
      return;
    }
    std::unordered_map<int, memory> args;
    args[DNNL_ARG_SRC] = memory(plan->src_md, cpu_engine(), const_cast<void*>(x.data()));
    args[DNNL_ARG_DST] = memory(plan->dst_md, cpu_engine(), y.data());
    RunBuffers buffers(ctx);
    execute_with_scratchpad(plan->prim, plan->pd, args, buffers);
  }

 private:
  // X and Y channels-last (the QDQ pass's layout between int8 convolutions). What the NHWC kernel
  // does not take (a window without a tap inside) runs the reference on plain copies.
  template <typename T>
  void run_int8_nhwc(const PoolGeometry& g, const Tensor& x, Tensor& y) const {
    if (x.rank() != 4) fail(where_, ": an NHWC int8 MaxPool needs a 4-D input, got ", shape_to_string(x.shape()));
    if (max_pool_2d_nhwc<T>(g, x.data_as<T>(), y.data_as<T>())) return;
    const memory::data_type dt = std::is_same_v<T, int8_t> ? memory::data_type::s8 : memory::data_type::u8;
    auto desc = [&](const Shape& s, bool nhwc) {
      return memory::desc(to_dims(s), dt, nhwc ? memory::format_tag::nhwc : memory::format_tag::nchw);
    };
    Tensor xp = Tensor::allocate(x.dtype(), x.shape()), yp = Tensor::allocate(y.dtype(), y.shape());
    reorder_memory(desc(x.shape(), true), x.data(), desc(x.shape(), false), xp.data());
    max_pool_ref<T>(g, attrs_.storage_order, xp.data_as<T>(), yp.data_as<T>(), nullptr);
    reorder_memory(desc(y.shape(), false), yp.data(), desc(y.shape(), true), y.data());
  }

  std::shared_ptr<const PoolPlan> plan_for(const Shape& x) const {
    std::lock_guard<std::mutex> lock(mutex_);
    Shape key = plan_key(x);
    auto it = plans_.find(key);
    if (it != plans_.end()) return it->second;
    auto p = build_plan(x);
    plans_[key] = p;
    return p;
  }

  std::shared_ptr<const PoolPlan> build_plan(const Shape& x) const {
    auto p = std::make_shared<PoolPlan>();
    p->geo = pool_geometry(attrs_, x, where_);
    const PoolGeometry& g = p->geo;
    if (want_indices_ || x.size() > 5 || shape_numel(g.output_shape()) == 0) {
      p->use_ref = true;
      return p;
    }
    size_t nsp = g.in_spatial.size();
    memory::dims strides(g.strides.begin(), g.strides.end()), kernel(g.kernel.begin(), g.kernel.end()), dil,
        pl(g.pad_begin.begin(), g.pad_begin.end()), pr(nsp);
    for (int64_t d : g.dilations) dil.push_back(d - 1);
    for (size_t i = 0; i < nsp; ++i) {
      int64_t dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
      // oneDNN computes O = floor((D + pl + pr - dk) / s) + 1: keep the model's end padding
      // when that already gives O, else extend it (ceil mode).
      int64_t in = g.in_spatial[i], pe = g.pad_end[i];
      if ((in + g.pad_begin[i] + pe - dk) / g.strides[i] + 1 == g.out_spatial[i])
        pr[i] = pe;
      else {
        pr[i] = (g.out_spatial[i] - 1) * g.strides[i] + dk - in - g.pad_begin[i];
      }
    }
    dnnl::algorithm alg = attrs_.kind == PoolKind::kMax
                              ? dnnl::algorithm::pooling_max
                              : (attrs_.count_include_pad ? dnnl::algorithm::pooling_avg_include_padding
                                                          : dnnl::algorithm::pooling_avg_exclude_padding);
    Shape ys = g.output_shape();
    p->src_md = f32_desc(x, src_blocked_ ? blocked_tag(x.size()) : plain_tag(x.size()));
    bool dst_blocked = dst_blocked_ || (attrs_.global && src_blocked_);
    p->dst_md = f32_desc(ys, dst_blocked ? blocked_tag(ys.size()) : plain_tag(ys.size()));
    try {
      p->op_desc = std::make_shared<dnnl::pooling_v2_forward::desc>(dnnl::prop_kind::forward_inference, alg, p->src_md,
                                                                    p->dst_md, strides, kernel, dil, pl, pr);
      dnnl::primitive_attr attr;
      attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
      p->pd = dnnl::pooling_v2_forward::primitive_desc(*p->op_desc, attr, cpu_engine());
      p->prim = dnnl::pooling_v2_forward(p->pd);
    } catch (const dnnl::error&) {
      p->use_ref = true;
    }
    return p;
  }

  std::string where_;
  PoolAttrs attrs_;
  bool src_blocked_ = false, dst_blocked_ = false, want_indices_ = false, squeeze_ = false, int8_nhwc_ = false;
  mutable std::mutex mutex_;
  mutable std::map<Shape, std::shared_ptr<const PoolPlan>> plans_;
};

}  // namespace

std::unique_ptr<OpKernel> make_max_pool_kernel(const KernelInit& init) {
  return std::make_unique<PoolKernel>(init, PoolKind::kMax, false);
}
std::unique_ptr<OpKernel> make_average_pool_kernel(const KernelInit& init) {
  return std::make_unique<PoolKernel>(init, PoolKind::kAverage, false);
}
std::unique_ptr<OpKernel> make_global_average_pool_kernel(const KernelInit& init) {
  return std::make_unique<PoolKernel>(init, PoolKind::kAverage, true);
}
std::unique_ptr<OpKernel> make_global_max_pool_kernel(const KernelInit& init) {
  return std::make_unique<PoolKernel>(init, PoolKind::kMax, true);
}

}  // namespace pointrt::nn
