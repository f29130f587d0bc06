// SequenceMap (contract in sequence.h): its body runs through the executor as If/Loop bodies do.
#include "ops/onnx/control/control.h"
#include "ops/onnx/sequence/sequence.h"

namespace pointrt::sequence {

namespace {

class SequenceMapKernel : public OpKernel {
 public:
  explicit SequenceMapKernel(const KernelInit& init) : body_(control::make_body_plan(init, "body")) {
    const Graph& g = body_->graph();
    if (g.inputs.size() != init.num_inputs())
      fail(init.where(), ": the body takes ", g.inputs.size(), " inputs, the node has ", init.num_inputs());
    if (g.outputs.size() != init.node.outputs.size())
      fail(init.where(), ": the body has ", g.outputs.size(), " outputs, the node has ", init.node.outputs.size());
    for (size_t j = 0; j < g.outputs.size(); ++j) {
      DType t = g.values[g.outputs[j]].dtype;
      const int out = init.node.outputs[j];
      if (t == DType::kUndefined && out >= 0) t = init.graph.values[out].dtype;
      out_types_.push_back(t == DType::kUndefined ? DType::kFloat32 : t);
    }
  }

  void run(KernelContext& ctx) const override {
    const size_t n = ctx.sequence_input(0).size();
    std::vector<AnyValue> ins(ctx.num_inputs());
    for (size_t j = 0; j < ins.size(); ++j) {
      ins[j] = ctx.any_input(j);
      if (ins[j].is_sequence() && ins[j].sequence().size() != n)
        fail(ctx.where(), ": ", ctx.input_name(j), " has ", ins[j].sequence().size(), " elements but ",
             ctx.input_name(0), " has ", n);
      if (!ins[j].is_sequence() && !ins[j].is_tensor())
        fail(ctx.where(), ": ", ctx.input_name(j), " must be a sequence or a tensor, got ", ins[j].describe());
    }
    std::vector<std::vector<Tensor>> outs(out_types_.size());
    for (size_t i = 0; i < n; ++i) {
      std::vector<AnyValue> args;
      args.reserve(ins.size());
      for (const AnyValue& a : ins) args.push_back(a.is_sequence() ? AnyValue(a.sequence().at(i)) : a);
      std::vector<AnyValue> r = control::run_body_any(ctx, *body_, "body", std::move(args));
      for (size_t j = 0; j < r.size(); ++j) {
        if (!r[j].is_tensor())
          fail(ctx.where(), ": body output ", j, " is ", r[j].describe(), " in iteration ", i, ", not a tensor");
        outs[j].push_back(r[j].tensor());
      }
    }
    for (size_t j = 0; j < outs.size(); ++j) {
      const DType t = outs[j].empty() ? out_types_[j] : outs[j][0].dtype();
      for (size_t i = 0; i < outs[j].size(); ++i)
        if (outs[j][i].dtype() != t)
          fail(ctx.where(), ": body output ", j, " is ", dtype_name(outs[j][i].dtype()), " in iteration ", i, " but ",
               dtype_name(t), " in iteration 0");
      ctx.set_any_output(j, Sequence(t, std::move(outs[j])));
    }
  }

 private:
  std::shared_ptr<const ExecutionPlan> body_;
  std::vector<DType> out_types_;  // for an empty input sequence
};

}  // namespace

std::unique_ptr<OpKernel> make_sequence_map(const KernelInit& init) {
  return std::make_unique<SequenceMapKernel>(init);
}

}  // namespace pointrt::sequence
