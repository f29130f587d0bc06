// The executor: a plan built once for one Graph (a kernel per node, value lifetimes), run many
// times. The same executor runs a session's main graph and every subgraph (If/Loop/Scan bodies):
//
//   prepare:  ExecutionPlan plan(graph, op_table(), file);          // kernels built, weights packed
//   run:      RunCache cache;
//             RunContext rc(allocator, cache, profiling ? &rows : nullptr);
//             std::vector<Tensor> outs = plan.run(rc, inputs);     // inputs[i] binds graph.inputs[i]
//
// A kernel that runs a subgraph (say If) builds the body's plan in its factory, from the graph
// attribute (`Attribute::g`), and runs it from OpKernel::run with a nested context and its own
// frame as the enclosing scope:
//
//   // factory:  then_plan = std::make_shared<ExecutionPlan>(*init.attrs().items.at("then_branch").g,
//   //                                                         op_table(), init.where());
//   // run:      RunCache cache;                              // a fresh rulebook cache per body run
//   //           RunContext body = ctx.run_context().nested(cache, ctx.node().name + "/then_branch");
//   //           auto outs = then_plan->run(body, {}, ctx.frame());
//
// Outer-scope values: a value that a graph's nodes (or its outputs) read but that the graph
// neither produces, holds as a constant nor takes as an input is an outer-scope reference (ONNX
// subgraph semantics). It is resolved by name when the run starts, in the enclosing frame passed
// to run() and then in that frame's own enclosing frames; a name none of them defines is an error
// naming the graph and the value. The enclosing plan keeps such values alive until the node whose
// subgraph reads them has run (values_read_by() in graph/ir.h).
//
// Threads: a plan is immutable after construction; run() may be called concurrently with
// different RunContexts. Memory: every tensor of a run comes from the RunContext's allocator, so a
// subgraph's tensors count toward the run that executes it (the outermost run attributes them to
// the node that runs the subgraph). Profiling: with a profile sink in the context, each node adds a
// NodeProfile row (name prefixed by the context's scope, "loop/body/conv1") and a row per named
// phase ("SparseConv:rulebook"); a node that runs subgraphs keeps in its own row only the time
// its subgraphs' rows do not account for.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "ops/kernel.h"

namespace pointrt {

/// One node of a plan: its kernel and the values whose last reader it is.
struct PlannedNode {
  const Node* node;
  std::unique_ptr<OpKernel> kernel;
  std::vector<int> free_after;  // values dropped right after this node ran
  std::string where;            // node->describe(), made once for the kernels' messages
};

/// The values of one execution of a plan: one slot per value of its graph, and the enclosing
/// frame (null for a main graph). Kernels see it through KernelContext::frame().
/// Sequences and empty optionals live in a side table, `others()`, sized on first use: a graph
/// without them pays nothing, and tensor slots stay plain Tensors (a value is in exactly one of
/// the two; an optional holding a tensor is a tensor slot).
class Frame {
 public:
  Frame(const Graph& graph, const Frame* enclosing)
      : graph_(graph), enclosing_(enclosing), slots_(graph.values.size()) {}
  /// The value named `name` in this frame or, failing that, in the enclosing frames; null when none
  /// defines it (or it is not computed yet / already freed).
  const Tensor* lookup(const std::string& name) const;
  /// The same for a sequence or none value.
  const AnyValue* lookup_other(const std::string& name) const;
  const Graph& graph() const { return graph_; }
  const Frame* enclosing() const { return enclosing_; }
  std::vector<Tensor>& slots() { return slots_; }
  const std::vector<Tensor>& slots() const { return slots_; }
  /// Sequence/none values by value id: empty until one is stored, then one per value.
  std::vector<AnyValue>& others() { return others_; }
  const std::vector<AnyValue>& others() const { return others_; }
  /// Stores a sequence/none value (sizing the side table).
  void set_other(int id, AnyValue v);
  /// Value `id` of any kind (undefined when not computed).
  AnyValue any(int id) const;

 private:
  const Graph& graph_;
  const Frame* enclosing_;
  std::vector<Tensor> slots_;
  std::vector<AnyValue> others_;
};

class ExecutionPlan {
 public:
  /// Builds a kernel for every node of `graph` from `table` (attributes parsed, weights packed)
  /// and the lifetimes (each intermediate is dropped after its last reader). `graph` must outlive
  /// the plan and stay unchanged; `where` (the file name) starts error messages. Throws Error for a
  /// node without a kernel in `table`.
  ExecutionPlan(const Graph& graph, const OpTable& table, std::string where);

  const Graph& graph() const { return graph_; }
  const std::vector<PlannedNode>& nodes() const { return nodes_; }
  /// Values of graph() that are outer-scope references (see the file comment), by value id.
  const std::vector<int>& outer_scope_values() const { return outer_; }

  /// Runs every node in order. `inputs[i]` binds graph().inputs[i] without copying (their count
  /// must match, and their element type where the graph declares one); `enclosing` resolves outer-scope references
  /// (null for a main graph). Returns graph().outputs in order; a result may alias an input, a constant or an outer
  /// value (the caller copies where it must). Errors name the node; a graph output left undefined is one too.
  std::vector<Tensor> run(RunContext& rc, std::vector<Tensor> inputs, const Frame* enclosing = nullptr) const;
  /// The same with values of any kind (sequences, empty optionals) in and out: for graphs whose
  /// inputs or outputs are sequences or optionals (Loop/If bodies, Session::run_any). An input of
  /// the wrong kind is an error naming the graph and the input.
  std::vector<AnyValue> run_any(RunContext& rc, std::vector<AnyValue> inputs, const Frame* enclosing = nullptr) const;

 private:
  void bind_inputs(Frame& frame, std::vector<AnyValue>& inputs) const;
  void bind_common(Frame& frame, const Frame* enclosing) const;
  void execute(RunContext& rc, Frame& frame) const;
  const Graph& graph_;
  std::string where_;
  std::vector<PlannedNode> nodes_;
  std::vector<int> outer_;
};

/// Runs one node of `graph` on the values in `slots` (indexed by value id; -1 inputs are absent)
/// and leaves its results in `outs` (one per node output). For the executor and constant folding.
/// Whatever the kernel throws becomes an Error naming the node. `where`: the node's description,
/// when the caller made it once already (the kernel's messages use it).
/// `others`/`other_outs` (optional): the sequence/none values by value id (see Frame) and where the
/// node's sequence/none outputs go (one per node output, undefined for tensors); without them a
/// node that makes a sequence or none is an error.
void run_node(const Graph& graph, const Node& node, const OpKernel& kernel, const std::vector<Tensor>& slots,
              std::vector<Tensor>& outs, RunContext& rc, const Frame* frame = nullptr, PhaseTimes* phases = nullptr,
              const std::string* where = nullptr, const std::vector<AnyValue>* others = nullptr,
              std::vector<AnyValue>* other_outs = nullptr);

/// The kernel of `node` from its table row; whatever the factory throws becomes an Error naming the node.
std::unique_ptr<OpKernel> make_kernel(const OpEntry& entry, const Node& node, const Graph& graph,
                                      const OpTable* table = nullptr);

}  // namespace pointrt
