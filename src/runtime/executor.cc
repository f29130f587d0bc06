#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <new>
#include <set>

namespace pointrt {

const Tensor* Frame::lookup(const std::string& name) const {
  for (const Frame* f = this; f; f = f->enclosing_) {
    int id = f->graph_.find_value(name);
    if (id >= 0) return f->slots_[id].defined() ? &f->slots_[id] : nullptr;
  }
  return nullptr;
}

const AnyValue* Frame::lookup_other(const std::string& name) const {
  for (const Frame* f = this; f; f = f->enclosing_) {
    int id = f->graph_.find_value(name);
    if (id >= 0)
      return id < static_cast<int>(f->others_.size()) && f->others_[id].defined() ? &f->others_[id] : nullptr;
  }
  return nullptr;
}

void Frame::set_other(int id, AnyValue v) {
  if (others_.empty()) others_.resize(slots_.size());
  others_[id] = std::move(v);
}

AnyValue Frame::any(int id) const {
  if (slots_[id].defined()) return slots_[id];
  if (id < static_cast<int>(others_.size())) return others_[id];
  return AnyValue();
}

namespace {

// Anything a kernel or its factory throws becomes a pointrt::Error that names the node.
// (The description is made only when something is thrown: this wraps every node of every run.)
template <typename F>
auto naming_node(const Node& node, F&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error& e) {
    std::string who = node.describe(), what = e.what();
    if (what.find(who) != std::string::npos) throw;
    throw Error(who + ": " + what);
  } catch (const std::bad_alloc&) {
    throw Error(node.describe() + ": out of memory");
  } catch (const std::exception& e) {
    throw Error(str_cat(node.describe(), ": internal error (", e.what(), ")"));
  }
}

}  // namespace

std::unique_ptr<OpKernel> make_kernel(const OpEntry& entry, const Node& node, const Graph& graph,
                                      const OpTable* table) {
  return naming_node(node, [&] { return entry.factory(KernelInit{node, graph, table}); });
}

void run_node(const Graph& graph, const Node& node, const OpKernel& kernel, const std::vector<Tensor>& slots,
              std::vector<Tensor>& outs, RunContext& rc, const Frame* frame, PhaseTimes* phases,
              const std::string* where, const std::vector<AnyValue>* others, std::vector<AnyValue>* other_outs) {
  std::vector<const Tensor*> ins;
  ins.reserve(node.inputs.size());
  for (int v : node.inputs) ins.push_back(v >= 0 ? &slots[v] : nullptr);
  // Sequence/none inputs only when the frame holds any (a tensor graph never builds this).
  std::vector<const AnyValue*> other_ins;
  if (others && !others->empty()) {
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const int v = node.inputs[i];
      if (v < 0 || slots[v].defined() || !(*others)[v].defined()) continue;
      if (other_ins.empty()) other_ins.resize(node.inputs.size(), nullptr);
      other_ins[i] = &(*others)[v];
    }
  }
  outs.assign(node.outputs.size(), Tensor());
  if (other_outs) other_outs->clear();
  KernelContext ctx(node, std::move(ins), outs, rc, frame, phases, &graph, where, std::move(other_ins), other_outs);
  naming_node(node, [&] { kernel.run(ctx); });
  const std::vector<AnyValue>& made = ctx.other_outputs();
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    if (node.outputs[i] < 0 || outs[i].defined()) continue;
    if (i < made.size() && made[i].defined()) {
      if (!other_outs) fail(node.describe(), ": output ", i, " is a sequence or optional, which cannot be kept here");
      continue;
    }
    fail(node.describe(), ": kernel did not produce output ", i);
  }
}

ExecutionPlan::ExecutionPlan(const Graph& graph, const OpTable& table, std::string where)
    : graph_(graph), where_(std::move(where)) {
  const Graph& g = graph_;
  for (const auto& n : g.nodes) {
    const OpEntry* e = table.find(n.domain, n.op_type, n.opset);
    if (!e) fail(where_, ": ", n.describe(), " has no kernel after optimisation");
    nodes_.push_back(PlannedNode{&n, make_kernel(*e, n, g, &table), {}, n.describe()});
  }
  for (const std::string& name : outer_scope_names(g)) {
    int id = g.find_value(name);
    if (id >= 0) outer_.push_back(id);  // names missing here are read by nested subgraphs only
  }
  // Lifetimes: drop each value after its last reader (an output nobody reads right after its
  // producer); graph outputs and constants stay.
  std::vector<int> last_use(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int v : values_read_by(g, g.nodes[i])) last_use[v] = static_cast<int>(i);
    for (int v : g.nodes[i].outputs)
      if (v >= 0 && last_use[v] < 0) last_use[v] = static_cast<int>(i);
  }
  std::set<int> keep(g.outputs.begin(), g.outputs.end());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (last_use[v] >= 0 && !keep.count(static_cast<int>(v)) && !g.values[v].constant)
      nodes_[last_use[v]].free_after.push_back(static_cast<int>(v));
}

namespace {

// Named phases are reported as "Op:phase" rows and taken out of the node's own row.
void add_profile_rows(std::vector<NodeProfile>& rows, const std::string& scope, const Node& node, double ms,
                      const PhaseTimes& phases) {
  for (const auto& [phase, phase_ms] : phases.entries) {
    rows.push_back(NodeProfile{scope + node.name, node.op_type + ":" + phase, phase_ms});
    ms -= phase_ms;
  }
  rows.push_back(NodeProfile{scope + node.name, node.op_type, std::max(0.0, ms)});
}

}  // namespace

void ExecutionPlan::bind_inputs(Frame& frame, std::vector<AnyValue>& inputs) const {
  const Graph& g = graph_;
  if (inputs.size() != g.inputs.size())
    fail(where_, ": graph '", g.name, "' takes ", g.inputs.size(), " inputs, ", inputs.size(), " were bound");
  for (size_t i = 0; i < inputs.size(); ++i) {
    // A subgraph's inputs (Loop's carried values, Scan's elements) must have the declared kind and type.
    const Value& declared = g.values[g.inputs[i]];
    AnyValue& in = inputs[i];
    const bool untyped = declared.is_tensor() && declared.dtype == DType::kUndefined && !declared.has_shape;
    const bool kind_ok = in.is_tensor()     ? !declared.sequence
                         : in.is_sequence() ? declared.sequence || untyped
                                            : in.is_none() && declared.optional;
    if (!kind_ok)
      fail(where_, ": graph '", g.name, "' input '", declared.name, "' is declared ", value_type_string(declared),
           " but gets ", in.describe());
    const DType got = in.is_tensor()     ? in.tensor().dtype()
                      : in.is_sequence() ? in.sequence().elem_type()
                                         : DType::kUndefined;
    if (declared.dtype != DType::kUndefined && got != DType::kUndefined && got != declared.dtype)
      fail(where_, ": graph '", g.name, "' input '", declared.name, "' is declared ", value_type_string(declared),
           " but gets ", in.describe());
    if (in.is_tensor())
      frame.slots()[g.inputs[i]] = in.tensor();
    else
      frame.set_other(g.inputs[i], std::move(in));
  }
}

void ExecutionPlan::bind_common(Frame& frame, const Frame* enclosing) const {
  const Graph& g = graph_;
  std::vector<Tensor>& slots = frame.slots();
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) slots[v] = *g.values[v].constant;
  for (int v : outer_) {
    const Tensor* t = enclosing ? enclosing->lookup(g.values[v].name) : nullptr;
    if (t) {
      slots[v] = *t;
      continue;
    }
    const AnyValue* o = enclosing ? enclosing->lookup_other(g.values[v].name) : nullptr;
    if (!o)
      fail(where_, ": graph '", g.name, "' reads '", g.values[v].name,
           "' from an enclosing scope, but no enclosing graph defines it");
    frame.set_other(v, *o);
  }
}

std::vector<Tensor> ExecutionPlan::run(RunContext& rc, std::vector<Tensor> inputs, const Frame* enclosing) const {
  const Graph& g = graph_;
  if (inputs.size() != g.inputs.size())
    fail(where_, ": graph '", g.name, "' takes ", g.inputs.size(), " inputs, ", inputs.size(), " were bound");
  Frame frame(g, enclosing);
  std::vector<Tensor>& slots = frame.slots();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& declared = g.values[g.inputs[i]];
    if (declared.sequence)
      fail(where_, ": graph '", g.name, "' input '", declared.name, "' is declared ", value_type_string(declared),
           " but gets a tensor");
    if (declared.dtype != DType::kUndefined && inputs[i].dtype() != declared.dtype)
      fail(where_, ": graph '", g.name, "' input '", declared.name, "' is declared ", dtype_name(declared.dtype),
           " but gets ", dtype_name(inputs[i].dtype()));
    slots[g.inputs[i]] = std::move(inputs[i]);
  }
  bind_common(frame, enclosing);
  execute(rc, frame);
  std::vector<Tensor> result;
  result.reserve(g.outputs.size());
  for (int id : g.outputs) {
    if (!slots[id].defined()) {
      if (frame.any(id).defined())
        fail(where_, ": output '", g.values[id].name, "' is ", frame.any(id).describe(),
             ", not a tensor (run it with run_any)");
      fail(where_, ": output '", g.values[id].name, "' was not computed");
    }
    result.push_back(slots[id]);
  }
  return result;
}

std::vector<AnyValue> ExecutionPlan::run_any(RunContext& rc, std::vector<AnyValue> inputs,
                                             const Frame* enclosing) const {
  const Graph& g = graph_;
  Frame frame(g, enclosing);
  bind_inputs(frame, inputs);
  bind_common(frame, enclosing);
  execute(rc, frame);
  std::vector<AnyValue> result;
  result.reserve(g.outputs.size());
  for (int id : g.outputs) {
    AnyValue v = frame.any(id);
    if (!v.defined()) fail(where_, ": output '", g.values[id].name, "' was not computed");
    result.push_back(std::move(v));
  }
  return result;
}

void ExecutionPlan::execute(RunContext& rc, Frame& frame) const {
  const Graph& g = graph_;
  std::vector<Tensor>& slots = frame.slots();
  std::vector<NodeProfile>* profile = rc.profile();
  std::vector<Tensor> outs;
  std::vector<AnyValue> other_outs;
  PhaseTimes phases;
  for (size_t node_index = 0; node_index < nodes_.size(); ++node_index) {
    const PlannedNode& p = nodes_[node_index];
    auto t0 = std::chrono::steady_clock::now();
    const size_t rows_before = profile ? profile->size() : 0;
    phases.entries.clear();
    if (!rc.is_nested()) rc.allocator().begin_node(static_cast<int>(node_index));
    run_node(g, *p.node, *p.kernel, slots, outs, rc, &frame, profile ? &phases : nullptr, &p.where, &frame.others(),
             &other_outs);
    for (size_t i = 0; i < p.node->outputs.size(); ++i)
      if (p.node->outputs[i] >= 0) {
        if (outs[i].defined())
          slots[p.node->outputs[i]] = std::move(outs[i]);
        else
          frame.set_other(p.node->outputs[i], std::move(other_outs[i]));
      }
    if (const ValueHook* hook = rc.value_hook())
      for (int o : p.node->outputs)
        if (o >= 0 && slots[o].defined())
          if (Tensor replacement = (*hook)(o, slots[o]); replacement.defined()) slots[o] = std::move(replacement);
    for (int v : p.free_after) {
      slots[v] = Tensor();
      if (!frame.others().empty()) frame.others()[v] = AnyValue();
    }
    if (profile) {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      // Rows added meanwhile are the node's subgraph runs ("if_1/then_branch/..."): their time is
      // theirs, the node's own row keeps the rest (so that the rows add up to the run).
      for (size_t r = rows_before; r < profile->size(); ++r) ms -= (*profile)[r].milliseconds;
      add_profile_rows(*profile, rc.scope(), *p.node, ms, phases);
    }
  }
}

}  // namespace pointrt
