// If: runs one of two branch graphs (contract in control.h).
#include "ops/onnx/control/control.h"

namespace pointrt::control {

namespace {

// Where both branches declare an output's element type, they must agree; so must their ranks
// where the node's output declares one. Branches of different rank under an output of unknown rank
// are valid ONNX (the output's shape is their union): torch 1.13 writes squeeze() of a dynamic axis
// as an If between Squeeze and Identity.
void check_branch_outputs(const KernelInit& init, const Graph& then_g, const Graph& else_g) {
  const size_t n = init.node.outputs.size();
  for (const auto* g : {&then_g, &else_g})
    if (g->outputs.size() != n)
      fail(init.where(), ": branch '", g == &then_g ? "then_branch" : "else_branch", "' has ", g->outputs.size(),
           " outputs, the node has ", n);
  for (size_t i = 0; i < n; ++i) {
    const Value& a = then_g.values[then_g.outputs[i]];
    const Value& b = else_g.values[else_g.outputs[i]];
    if (a.dtype != DType::kUndefined && b.dtype != DType::kUndefined && a.dtype != b.dtype)
      fail(init.where(), ": output ", i, " is ", dtype_name(a.dtype), " in then_branch ('", a.name, "') but ",
           dtype_name(b.dtype), " in else_branch ('", b.name, "')");
    const int out = init.node.outputs[i];
    const bool rank_declared = out >= 0 && init.graph.values[out].has_shape;
    if (rank_declared && a.has_shape && b.has_shape && a.shape.size() != b.shape.size())
      fail(init.where(), ": output ", i, " has rank ", a.shape.size(), " in then_branch ('", a.name, "') but rank ",
           b.shape.size(), " in else_branch ('", b.name, "')");
  }
}

class IfKernel : public OpKernel {
 public:
  explicit IfKernel(const KernelInit& init) {
    check_branch_outputs(init, body_graph(init, "then_branch"), body_graph(init, "else_branch"));
    // A condition known now: only the branch it chooses is built.
    const Tensor* cond = init.constant_input(0);
    const bool known = cond && cond->numel() == 1 && cond->dtype() == DType::kBool && cond->data();
    const bool value = known && *cond->data_as<uint8_t>() != 0;  // bool as a byte (any non-zero is true)
    if (!known || value) then_ = make_body_plan(init, "then_branch");
    if (!known || !value) else_ = make_body_plan(init, "else_branch");
  }

  void run(KernelContext& ctx) const override {
    const bool take_then = scalar_truth(ctx, ctx.input(0), "the condition");
    const ExecutionPlan* plan = take_then ? then_.get() : else_.get();
    const char* attr = take_then ? "then_branch" : "else_branch";
    // Values of any kind: a branch may return a sequence or an optional even where no type says so
    // (files of opsets newer than the ONNX library's shape inference carry no inferred types).
    std::vector<AnyValue> outs = run_body_any(ctx, *plan, attr, {});
    for (size_t i = 0; i < outs.size(); ++i) ctx.set_any_output(i, std::move(outs[i]));
  }

 private:
  std::shared_ptr<const ExecutionPlan> then_, else_;
};

}  // namespace

std::unique_ptr<OpKernel> make_if(const KernelInit& init) { return std::make_unique<IfKernel>(init); }

}  // namespace pointrt::control
