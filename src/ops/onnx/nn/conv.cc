// Conv, ConvTranspose and the internal FusedConv (Conv + folded BatchNorm + Add + Relu) on oneDNN.
//
// The kernel parses attributes and keeps the constant weights at prepare time. oneDNN needs the
// input shape to build a primitive, so plans live in a cache keyed by input shape and OpenMP
// thread count (oneDNN fixes its thread split at creation; dnnl_common.h plan_key), a map behind a
// mutex: when the graph gives X a fixed shape the factory builds that entry right away (primitive
// created and weights reordered into the layout the primitive chose, once); a symbolic shape
// builds its entry on the first run with that shape, and steady-state runs only look it up.
//
// Each plan has one strategy (conv_plan.h, one file each): global max, space-to-batch, oneDNN
// (Winograd or direct), or the reference fallback; this file chooses it and delegates the run.
// Layouts: X arrives plain or, when the nn pass says so, channel-blocked (dnnl_common.h); the
// output is written in the layout the pass asked for.
#include <cstring>
#include <map>
#include <mutex>

#include "ops/kernel.h"
#include "ops/onnx/nn/conv.h"
#include "ops/onnx/nn/conv_plan.h"
#include "ops/onnx/nn/nn_kernels.h"

namespace pointrt::nn {

namespace {

using Strategy = ConvPlan::Strategy;

class ConvKernel : public OpKernel {
 public:
  ConvKernel(const KernelInit& init, bool transpose, bool fused) {
    node_.where = init.where();
    node_.transpose = transpose;
    const Attributes& at = init.attrs();
    attrs_ = parse_conv_attrs(at, transpose, node_.where);
    if (fused) {
      node_.relu = at.get_int(kAttrPostRelu, 0) != 0;
      node_.has_sum = at.get_int(kAttrSumInput, 0) != 0;
      sum_inplace_ = at.get_int(kAttrSumInPlace, 0) != 0;
      global_max_ = at.get_int(kAttrGlobalMax, 0) != 0;
      squeeze_ = at.get_int(kAttrSqueeze, 0) != 0;
    }
    node_.src_blocked = at.get_int(kAttrSrcBlocked, 0) != 0;
    node_.dst_blocked = at.get_int(kAttrDstBlocked, 0) != 0;
    if (const Tensor* w = init.constant_input(1)) {
      check_float(*w, "W");
      node_.weights = *w;
      node_.weights_data = w->data();
      weights_shape_ = w->shape();
    }
    if (const Tensor* b = init.constant_input(2)) {
      check_float(*b, "B");
      bias_ = *b;
    }
    if (node_.weights.defined() && (bias_.defined() || !init.has_input(2))) build_plan_now(init.input_value(0));
  }

  bool releases_constant_input(size_t i) const override { return i == 1 && node_.weights_released; }

  /// Implementation name chosen for a given X shape (for tests and the profiler).
  std::string impl_for(const Shape& x) const {
    auto p = plan_for(x, weights_shape_, bias_.defined() ? &bias_.shape() : nullptr);
    return p->strategy == Strategy::kFallback ? "reference" : p->impl;
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* b = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    check_float(x, "X");
    check_float(w, "W");
    if (b) check_float(*b, "B");
    std::shared_ptr<const ConvPlan> plan = plan_for(x.shape(), w.shape(), b ? &b->shape() : nullptr);
    if (global_max_) return run_global_max(ctx, *plan, x, w, b);
    Tensor y = output_with_sum(ctx, plan->geo.output_shape());
    RunBuffers buffers(ctx);
    switch (plan->strategy) {
      case Strategy::kEmpty: return;
      case Strategy::kFallback: return run_conv_fallback(plan->geo, node_, x, w, b, y);
      case Strategy::kSpaceToBatch:
        return run_space_to_batch_plan(plan->space_to_batch, plan->geo, node_, x, w, b, y, buffers);
      case Strategy::kDnnl: return run_dnnl_plan(plan->dnnl, node_, x.data(), y.data(), w, b, buffers);
      case Strategy::kGlobalMax: fail(node_.where, ": global-max plan outside global-max mode");
    }
  }

 private:
  void check_float(const Tensor& t, const char* name) const {
    if (t.dtype() != DType::kFloat32)
      fail(node_.where, ": input ", name, " has element type ", dtype_name(t.dtype()), ", expected float");
  }

  // Build the plan now when X's shape is fixed in the graph.
  void build_plan_now(const Value* xv) {
    if (!xv || !xv->has_shape) return;
    Shape s;
    for (const Dim& d : xv->shape) {
      if (!d.is_fixed()) return;
      s.push_back(d.value);
    }
    try {
      auto entry = build_plan(s, node_.weights.shape(), bias_.defined() ? &bias_.shape() : nullptr);
      plans_[plan_key(s)] = entry;
      // The plan holds its own packed copy of W: drop the plain one (the session drops its
      // reference too when no other node reads W; see releases_constant_input).
      if (owns_packed_copy(*entry->plan)) {
        node_.weights = Tensor();
        node_.weights_released = true;
      }
    } catch (const Error&) {
      // A shape the run will reject anyway; report it then, with the real input.
    }
  }

  // Y, holding the fused Add's operand (input 3) when there is one.
  Tensor output_with_sum(KernelContext& ctx, const Shape& out_shape) const {
    if (!node_.has_sum) return ctx.output(0, DType::kFloat32, out_shape);
    const Tensor& s = ctx.input(3);
    if (s.shape() != out_shape || s.dtype() != DType::kFloat32)
      fail(node_.where, ": fused Add input has shape ", shape_to_string(s.shape()), ", expected ",
           shape_to_string(out_shape));
    if (sum_inplace_) {
      Tensor y = s;  // the pass proved nobody else reads this buffer
      ctx.set_output(0, y);
      return y;
    }
    Tensor y = ctx.output(0, DType::kFloat32, out_shape);
    if (s.nbytes()) std::memcpy(y.data(), s.data(), s.nbytes());
    return y;
  }

  void run_global_max(KernelContext& ctx, const ConvPlan& p, const Tensor& x, const Tensor& w, const Tensor* b) const {
    const ConvGeometry& g = p.geo;
    int64_t points = g.out_spatial.empty() ? 0 : g.out_spatial[0];
    Tensor& y =
        ctx.output(0, DType::kFloat32, squeeze_ ? Shape{g.batch, g.out_channels} : Shape{g.batch, g.out_channels, 1});
    if (y.numel() == 0) return;
    if (points == 0) fail(node_.where, ": max over an empty set of points (X ", shape_to_string(x.shape()), ")");
    if (p.strategy != Strategy::kGlobalMax) return run_global_max_fallback(g, node_, x, w, b, y.data_as<float>());
    RunBuffers buffers(ctx);
    run_global_max_plan(p.global_max, g, node_, x, w, b, y.data_as<float>(), buffers);
  }

  // The plan keeps W packed in memory of its own (not a view of the plain weights), for every
  // primitive it runs.
  static bool owns_packed_copy(const ConvPlan& p) {
    switch (p.strategy) {
      case Strategy::kSpaceToBatch: return p.space_to_batch.sub->owns_packed_copy();
      case Strategy::kGlobalMax: return p.global_max.owns_packed_copy();
      case Strategy::kDnnl: return p.dnnl.owns_packed_copy();
      default: return false;
    }
  }

  std::shared_ptr<const ConvPlan> plan_for(const Shape& x, const Shape& w, const Shape* b) const {
    std::lock_guard<std::mutex> lock(mutex_);
    Shape key = plan_key(x);
    auto it = plans_.find(key);
    if (it != plans_.end() && w == it->second->w_shape_key && (b != nullptr) == it->second->has_bias_key)
      return it->second->plan;
    if (node_.weights_released) {
      // The plain W is gone, so no new packing: a plan made for this shape under another thread
      // count computes the same result (oneDNN only splits the work differently).
      for (const auto& [k, e] : plans_)
        if (Shape(k.begin(), k.end() - 1) == x && w == e->w_shape_key && (b != nullptr) == e->has_bias_key)
          return e->plan;
      fail(node_.where, ": input X has shape ", shape_to_string(x), ", but W was packed for ",
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
    p->geo = conv_geometry(attrs_, x, w, b, node_.where);
    auto entry = std::make_shared<Entry>();
    entry->w_shape_key = w;
    entry->has_bias_key = b != nullptr;
    entry->plan = p;
    if (shape_numel(p->geo.output_shape()) == 0) return entry;  // Strategy::kEmpty
    if (x.size() > 5) fail(node_.where, ": ", x.size() - 2, " spatial dimensions are not supported (at most 3)");
    try {
      choose_strategy(*p, x, w, b != nullptr);
    } catch (const dnnl::error&) {
      p->strategy = Strategy::kFallback;
    }
    return entry;
  }

  void choose_strategy(ConvPlan& p, const Shape& x, const Shape& w, bool has_bias) const {
    if (global_max_) {
      build_global_max_plan(p.global_max, p.geo, node_, x, w, has_bias);
      p.strategy = Strategy::kGlobalMax;
      p.impl = std::string(p.global_max.main_chunk.pd.impl_info_str()) + " + running max";
    } else if (build_space_to_batch_plan(p.space_to_batch, p.geo, node_, x, w, has_bias)) {
      p.strategy = Strategy::kSpaceToBatch;
      p.impl = "space_to_batch + " + p.space_to_batch.sub->impl;
    } else {
      build_dnnl_plan(p.dnnl, p.geo, node_, x, w, has_bias);
      p.strategy = Strategy::kDnnl;
      p.impl = p.dnnl.impl;
    }
  }

  ConvNode node_;
  ConvAttrs attrs_;
  bool sum_inplace_ = false, global_max_ = false, squeeze_ = false;
  Tensor bias_;
  Shape weights_shape_;
  mutable std::mutex mutex_;
  mutable std::map<Shape, std::shared_ptr<Entry>> plans_;
};

}  // namespace

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
