// Loop: runs its body while the trip count and the condition allow (contract in control.h).
#include "ops/onnx/control/control.h"

namespace pointrt::control {

namespace {

Tensor int64_scalar(int64_t v) {
  Tensor t = Tensor::allocate(DType::kInt64, {});
  *t.data_as<int64_t>() = v;
  return t;
}

Tensor bool_scalar(bool v) {
  Tensor t = Tensor::allocate(DType::kBool, {});
  *t.data_as<bool>() = v;
  return t;
}

class LoopKernel : public OpKernel {
 public:
  explicit LoopKernel(const KernelInit& init) : body_(make_body_plan(init, "body")) {
    const Graph& g = body_->graph();
    if (init.num_inputs() < 2) fail(init.where(), ": Loop takes inputs M, cond and the loop-carried values");
    carried_ = init.num_inputs() - 2;
    if (g.inputs.size() != carried_ + 2)
      fail(init.where(), ": the body takes ", g.inputs.size(), " inputs, but the node has ", carried_,
           " loop-carried values (the body must take iteration_num, cond and those ", carried_, ")");
    if (g.outputs.size() < carried_ + 1)
      fail(init.where(), ": the body has ", g.outputs.size(), " outputs, it must have at least ", carried_ + 1,
           " (cond and ", carried_, " loop-carried values)");
    scans_ = g.outputs.size() - 1 - carried_;
    any_ = has_non_tensor_io(g);
    for (size_t i = 2; i < init.num_inputs(); ++i)
      any_ = any_ || (init.input_value(i) && !init.input_value(i)->is_tensor());
    if (init.node.outputs.size() != carried_ + scans_)
      fail(init.where(), ": the node has ", init.node.outputs.size(), " outputs, its body makes ", carried_,
           " loop-carried values and ", scans_, " scan outputs");
  }

  void run(KernelContext& ctx) const override {
    int64_t trips = -1;  // -1: no trip count
    if (ctx.has_input(0)) {
      const Tensor& m = ctx.input(0);
      if (m.numel() != 1 || m.dtype() != DType::kInt64)
        fail(ctx.where(), ": the trip count M must be one int64, got ", dtype_name(m.dtype()), " ",
             shape_to_string(m.shape()));
      trips = std::max<int64_t>(0, *m.data_as<int64_t>());
    }
    bool cond = ctx.has_input(1) ? scalar_truth(ctx, ctx.input(1), "the condition") : true;
    bool any = any_;  // a carried sequence or none the types did not announce
    for (size_t i = 0; i < carried_ && !any; ++i)
      any = !ctx.input_tensor_defined(2 + i) && ctx.any_input(2 + i).defined();
    if (any) return run_any(ctx, trips, cond);
    std::vector<Tensor> carried;
    for (size_t i = 0; i < carried_; ++i) carried.push_back(ctx.input(2 + i));
    std::vector<std::vector<Tensor>> scanned(scans_);
    int64_t iteration = 0;
    for (; (trips < 0 || iteration < trips) && cond; ++iteration) {
      std::vector<Tensor> in{int64_scalar(iteration), bool_scalar(cond)};
      in.insert(in.end(), carried.begin(), carried.end());
      std::vector<Tensor> out = run_body(ctx, *body_, "body", std::move(in));
      cond = scalar_truth(ctx, out[0], "the body's condition output");
      for (size_t i = 0; i < carried_; ++i) carried[i] = std::move(out[1 + i]);
      for (size_t k = 0; k < scans_; ++k) scanned[k].push_back(std::move(out[1 + carried_ + k]));
    }
    for (size_t i = 0; i < carried_; ++i) ctx.set_output(i, std::move(carried[i]));
    for (size_t k = 0; k < scans_; ++k) stack_scan_output(ctx, k, scanned[k]);
  }

 private:
  // The same loop over values of any kind (carried sequences or optionals).
  void run_any(KernelContext& ctx, int64_t trips, bool cond) const {
    std::vector<AnyValue> carried;
    for (size_t i = 0; i < carried_; ++i) carried.push_back(ctx.any_input(2 + i));
    std::vector<std::vector<Tensor>> scanned(scans_);
    for (int64_t iteration = 0; (trips < 0 || iteration < trips) && cond; ++iteration) {
      std::vector<AnyValue> in{int64_scalar(iteration), bool_scalar(cond)};
      in.insert(in.end(), carried.begin(), carried.end());
      std::vector<AnyValue> out = run_body_any(ctx, *body_, "body", std::move(in));
      if (!out[0].is_tensor()) fail(ctx.where(), ": the body's condition output is ", out[0].describe());
      cond = scalar_truth(ctx, out[0].tensor(), "the body's condition output");
      for (size_t i = 0; i < carried_; ++i) carried[i] = std::move(out[1 + i]);
      for (size_t k = 0; k < scans_; ++k) {
        if (!out[1 + carried_ + k].is_tensor())
          fail(ctx.where(), ": scan output ", k, " is ", out[1 + carried_ + k].describe(), ", not a tensor");
        scanned[k].push_back(out[1 + carried_ + k].tensor());
      }
    }
    for (size_t i = 0; i < carried_; ++i) ctx.set_any_output(i, std::move(carried[i]));
    for (size_t k = 0; k < scans_; ++k) stack_scan_output(ctx, k, scanned[k]);
  }

  // Scan output k: the iterations' values stacked along a new axis 0.
  void stack_scan_output(KernelContext& ctx, size_t k, const std::vector<Tensor>& parts) const {
    const size_t out_index = carried_ + k;
    if (parts.empty()) {
      Shape s{0};
      if (auto declared = fixed_declared_shape(body_->graph(), static_cast<int>(1 + carried_ + k)))
        s.insert(s.end(), declared->begin(), declared->end());
      const DType t = body_->graph().values[body_->graph().outputs[1 + carried_ + k]].dtype;
      ctx.output(out_index, t == DType::kUndefined ? DType::kFloat32 : t, s);
      return;
    }
    Shape s = parts[0].shape();
    s.insert(s.begin(), static_cast<int64_t>(parts.size()));
    Tensor& out = ctx.output(out_index, parts[0].dtype(), s);
    for (size_t it = 0; it < parts.size(); ++it) {
      if (parts[it].shape() != parts[0].shape() || parts[it].dtype() != parts[0].dtype())
        fail(ctx.where(), ": scan output ", k, " is ", dtype_name(parts[it].dtype()), " ",
             shape_to_string(parts[it].shape()), " in iteration ", it, " but ", dtype_name(parts[0].dtype()), " ",
             shape_to_string(parts[0].shape()), " in iteration 0");
      place_along_axis(out, 0, static_cast<int64_t>(it), parts[it]);
    }
  }

  std::shared_ptr<const ExecutionPlan> body_;
  size_t carried_ = 0, scans_ = 0;
  bool any_ = false;  // carried sequences or optionals: run_any
};

}  // namespace

std::unique_ptr<OpKernel> make_loop(const KernelInit& init) { return std::make_unique<LoopKernel>(init); }

}  // namespace pointrt::control
