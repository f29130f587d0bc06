// Scan: runs its body once per element of its scan inputs (contract in control.h).
#include "ops/onnx/control/control.h"

namespace pointrt::control {

namespace {

// One of scan_input_axes / scan_output_axes / ..._directions, `count` entries (default 0 each).
std::vector<int64_t> per_scan_attribute(const KernelInit& init, const char* name, size_t count) {
  std::vector<int64_t> v = init.attrs().get_ints(name, std::vector<int64_t>(count, 0));
  if (v.size() != count) fail(init.where(), ": attribute '", name, "' has ", v.size(), " entries, expected ", count);
  if (std::string(name).find("directions") != std::string::npos)
    for (int64_t d : v)
      if (d != 0 && d != 1) fail(init.where(), ": attribute '", name, "' entries must be 0 or 1, got ", d);
  return v;
}

int normalized_axis(const KernelContext& ctx, int64_t axis, size_t rank, const char* what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) fail(ctx.where(), ": ", what, " axis ", axis, " is out of range for rank ", rank);
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

class ScanKernel : public OpKernel {
 public:
  explicit ScanKernel(const KernelInit& init) : body_(make_body_plan(init, "body")), batched_(init.opset() < 9) {
    const Graph& g = body_->graph();
    const int64_t m = init.attrs().get_int("num_scan_inputs");
    const size_t node_inputs = init.num_inputs() - (batched_ ? 1 : 0);  // Scan-8: sequence_lens first
    if (m < 1 || static_cast<size_t>(m) > node_inputs)
      fail(init.where(), ": num_scan_inputs is ", m, ", the node has ", node_inputs, " state and scan inputs");
    scan_inputs_ = static_cast<size_t>(m);
    states_ = node_inputs - scan_inputs_;
    if (g.inputs.size() != states_ + scan_inputs_)
      fail(init.where(), ": the body takes ", g.inputs.size(), " inputs, the node gives it ", states_, " states and ",
           scan_inputs_, " scan elements");
    if (g.outputs.size() < states_ || init.node.outputs.size() != g.outputs.size())
      fail(init.where(), ": the body has ", g.outputs.size(), " outputs, the node ", init.node.outputs.size(),
           " (both must be the ", states_, " states followed by the scan outputs)");
    scan_outputs_ = g.outputs.size() - states_;
    in_axes_ = per_scan_attribute(init, "scan_input_axes", scan_inputs_);
    in_directions_ = per_scan_attribute(init, batched_ ? "directions" : "scan_input_directions", scan_inputs_);
    out_axes_ = per_scan_attribute(init, "scan_output_axes", scan_outputs_);
    out_directions_ = per_scan_attribute(init, "scan_output_directions", scan_outputs_);
  }

  void run(KernelContext& ctx) const override {
    const size_t first = batched_ ? 1 : 0;
    std::vector<Tensor> ins;
    for (size_t i = first; i < ctx.num_inputs(); ++i) ins.push_back(ctx.input(i));
    if (!batched_) {
      std::vector<Tensor> outs = scan(ctx, ins);
      for (size_t i = 0; i < outs.size(); ++i) ctx.set_output(i, std::move(outs[i]));
      return;
    }
    run_batched(ctx, ins);
  }

 private:
  // Scan-9 semantics on unbatched inputs: returns the final states and the stacked scan outputs.
  std::vector<Tensor> scan(const KernelContext& ctx, const std::vector<Tensor>& ins) const;
  // Scan-8: axis 0 of every input is the batch; each batch row is one Scan-9 run.
  void run_batched(KernelContext& ctx, const std::vector<Tensor>& ins) const;
  Tensor stack(const KernelContext& ctx, size_t k, const std::vector<Tensor>& parts) const;

  std::shared_ptr<const ExecutionPlan> body_;
  bool batched_;
  size_t states_ = 0, scan_inputs_ = 0, scan_outputs_ = 0;
  std::vector<int64_t> in_axes_, in_directions_, out_axes_, out_directions_;
};

std::vector<Tensor> ScanKernel::scan(const KernelContext& ctx, const std::vector<Tensor>& ins) const {
  std::vector<int> axes(scan_inputs_);
  int64_t length = -1;
  for (size_t j = 0; j < scan_inputs_; ++j) {
    const Tensor& t = ins[states_ + j];
    if (t.rank() == 0) fail(ctx.where(), ": scan input ", j, " is a scalar; it needs an axis to scan");
    axes[j] = normalized_axis(ctx, in_axes_[j], t.rank(), "scan input");
    if (length >= 0 && t.dim(axes[j]) != length)
      fail(ctx.where(), ": scan input ", j, " has length ", t.dim(axes[j]), " along axis ", axes[j],
           ", scan input 0 has ", length);
    length = t.dim(axes[j]);
  }
  std::vector<Tensor> states(ins.begin(), ins.begin() + states_);
  std::vector<std::vector<Tensor>> scanned(scan_outputs_);
  for (int64_t t = 0; t < length; ++t) {
    std::vector<Tensor> body_in = states;
    for (size_t j = 0; j < scan_inputs_; ++j)
      body_in.push_back(slice_along_axis(ins[states_ + j], axes[j], in_directions_[j] ? length - 1 - t : t));
    std::vector<Tensor> out = run_body(ctx, *body_, "body", std::move(body_in));
    for (size_t i = 0; i < states_; ++i) states[i] = std::move(out[i]);
    for (size_t k = 0; k < scan_outputs_; ++k) scanned[k].push_back(std::move(out[states_ + k]));
  }
  for (size_t k = 0; k < scan_outputs_; ++k) states.push_back(stack(ctx, k, scanned[k]));
  return states;
}

// Scan output k: parts[t] placed at t (or T-1-t in reverse) along its output axis.
Tensor ScanKernel::stack(const KernelContext& ctx, size_t k, const std::vector<Tensor>& parts) const {
  const int64_t length = static_cast<int64_t>(parts.size());
  const Graph& g = body_->graph();
  if (parts.empty()) {
    const DType t = g.values[g.outputs[states_ + k]].dtype;
    Shape s = fixed_declared_shape(g, static_cast<int>(states_ + k)).value_or(Shape{});
    s.insert(s.begin() + normalized_axis(ctx, out_axes_[k], s.size() + 1, "scan output"), 0);
    return Tensor::allocate(t == DType::kUndefined ? DType::kFloat32 : t, s);
  }
  const int axis = normalized_axis(ctx, out_axes_[k], parts[0].rank() + 1, "scan output");
  Shape s = parts[0].shape();
  s.insert(s.begin() + axis, length);
  Tensor out = ctx.run_context().allocator().allocate(parts[0].dtype(), s);
  for (int64_t t = 0; t < length; ++t) {
    if (parts[t].shape() != parts[0].shape() || parts[t].dtype() != parts[0].dtype())
      fail(ctx.where(), ": scan output ", k, " is ", dtype_name(parts[t].dtype()), " ",
           shape_to_string(parts[t].shape()), " in iteration ", t, " but ", dtype_name(parts[0].dtype()), " ",
           shape_to_string(parts[0].shape()), " in iteration 0");
    place_along_axis(out, axis, out_directions_[k] ? length - 1 - t : t, parts[t]);
  }
  return out;
}

void ScanKernel::run_batched(KernelContext& ctx, const std::vector<Tensor>& ins) const {
  if (ins.empty() || ins[0].rank() == 0) fail(ctx.where(), ": Scan-8 inputs need a leading batch axis");
  const int64_t batch = ins[0].dim(0);
  for (const Tensor& t : ins)
    if (t.rank() == 0 || t.dim(0) != batch)
      fail(ctx.where(), ": every Scan-8 input needs the batch size ", batch, " along axis 0, got shape ",
           shape_to_string(t.shape()));
  if (ctx.has_input(0)) {  // sequence_lens: served when every row is full length
    const Tensor& lens = ctx.input(0);
    const int64_t full = ins[states_].rank() > 1 ? ins[states_].dim(1) : 0;
    if (lens.dtype() != DType::kInt64)
      fail(ctx.where(), ": sequence_lens must be int64, got ", dtype_name(lens.dtype()));
    for (int64_t b = 0; b < lens.numel(); ++b) {
      const int64_t len = lens.data_as<int64_t>()[b];
      if (len != full)
        fail(ctx.where(), ": sequence_lens[", b, "] is ", len, "; only full-length sequences (", full,
             ") are supported");
    }
  }
  std::vector<std::vector<Tensor>> rows(batch);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> row;
    for (const Tensor& t : ins) row.push_back(slice_along_axis(t, 0, b));
    rows[b] = scan(ctx, row);
  }
  for (size_t i = 0; i < states_ + scan_outputs_; ++i) {
    Shape s = batch ? rows[0][i].shape() : Shape{};
    s.insert(s.begin(), batch);
    if (batch == 0) {
      ctx.output(i, DType::kFloat32, s);
      continue;
    }
    Tensor& out = ctx.output(i, rows[0][i].dtype(), s);
    for (int64_t b = 0; b < batch; ++b) {
      if (rows[b][i].shape() != rows[0][i].shape())
        fail(ctx.where(), ": output ", i, " has shape ", shape_to_string(rows[b][i].shape()), " in batch row ", b,
             " but ", shape_to_string(rows[0][i].shape()), " in row 0");
      place_along_axis(out, 0, b, rows[b][i]);
    }
  }
}

}  // namespace

std::unique_ptr<OpKernel> make_scan(const KernelInit& init) { return std::make_unique<ScanKernel>(init); }

}  // namespace pointrt::control
