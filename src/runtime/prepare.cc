#include "runtime/prepare.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "ops/registry.h"
#include "runtime/common_subexpressions.h"
#include "runtime/low_precision.h"

namespace pointrt {

namespace {

class HeapAllocator : public Allocator {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
};

std::string supported_range_text(const std::vector<const OpEntry*>& entries) {
  std::string s;
  for (auto* e : entries) s += str_cat(s.empty() ? "" : ", ", e->since, "-", e->until);
  return s;
}

// Ops whose result must not be computed at prepare time even with constant inputs.
bool foldable(const Node& n) { return !is_nondeterministic(n); }

// For an operator of a domain pointrt does not serve itself: where such operators come from, and
// which plugins the session loaded (their rows' notes name them).
std::string custom_domain_hint(const std::string& domain, const OpTable& table) {
  if (domain.empty() || domain == "ai.onnx" || domain == "pointrt" || domain == "com.microsoft") return "";
  std::set<std::string> plugins;
  for (const OpEntry& e : table.entries())
    if (e.note.rfind("plugin '", 0) == 0) plugins.insert(e.note);
  if (plugins.empty())
    return " (a custom operator: load the plugin that provides it, --plugin / SessionOptions::plugins)";
  std::string loaded;
  for (const std::string& p : plugins) loaded += (loaded.empty() ? "" : ", ") + p;
  return str_cat(" (none of the loaded plugins provides it: ", loaded, ")");
}

// The problems of every node of `g` that cannot run (unknown operator, opset or input type), and
// of the nodes of its subgraphs (prefixed by the subgraph and the node owning it).
void collect_unsupported(const Graph& g, const OpTable& table, const std::string& prefix,
                         std::vector<std::string>& problems) {
  for (const auto& n : g.nodes) {
    for (const auto& [key, a] : n.attrs.items)
      if (a.kind == Attribute::Kind::kGraph && a.g)
        collect_unsupported(*a.g, table, str_cat(prefix, "subgraph '", key, "' of ", n.describe(), ": "), problems);
    const OpEntry* e = table.find(n.domain, n.op_type, n.opset);
    std::string dom = n.domain.empty() ? "ai.onnx" : n.domain;
    if (!e) {
      auto all = table.find_all(n.domain, n.op_type);
      if (all.empty())
        problems.push_back(str_cat(prefix, n.describe(), ": operator ", dom, "::", n.op_type, " is not supported",
                                   custom_domain_hint(n.domain, table)));
      else
        problems.push_back(str_cat(prefix, n.describe(), ": ", dom, "::", n.op_type, " at opset ", n.opset,
                                   " is not supported (supported opsets: ", supported_range_text(all), ")"));
      continue;
    }
    int ti = e->typed_input;
    if (ti >= 0 && static_cast<size_t>(ti) < n.inputs.size() && n.inputs[ti] >= 0) {
      DType t = g.values[n.inputs[ti]].dtype;
      if (!runs_element_type(*e, t))
        problems.push_back(str_cat(prefix, n.describe(), ": input '", g.values[n.inputs[ti]].name,
                                   "' has element type ", dtype_name(t), ", which this operator does not support"));
    }
  }
}

// Every node that cannot run, subgraphs included, reported in one Error.
void check_supported(const Graph& g, const std::string& file, const OpTable& table) {
  std::vector<std::string> problems;
  collect_unsupported(g, table, "", problems);
  if (!problems.empty()) {
    std::string msg = str_cat(file, ": ", problems.size(), " node(s) cannot run:");
    for (auto& p : problems) msg += "\n  " + p;
    throw Error(msg);
  }
}

// Replace nodes whose inputs are all constants by their results. The run before the family passes
// keeps DequantizeLinear (`keep_dequantize`): the QDQ pass fuses DequantizeLinear of constant int8
// weights into int8 kernels; the run after the passes folds whatever it left.
bool fold_constants(Graph& g, const OpTable& table, size_t max_tensor_bytes, bool keep_dequantize) {
  HeapAllocator heap;
  heap.set_max_tensor_bytes(max_tensor_bytes);
  RunCache cache;
  RunContext rc(heap, cache);
  bool changed = false;
  // One slot per value, made once: run_node reads a node's inputs by value id (a fresh vector per
  // folded node made this pass quadratic: 1.9 s of the 48k-node yanx27 file's prepare).
  std::vector<Tensor> slots(g.values.size());
  for (auto& n : g.nodes) {
    if (n.removed || !foldable(n)) continue;
    if (keep_dequantize && n.domain.empty() && n.op_type == "DequantizeLinear") continue;
    bool all_const = true;
    for (int v : n.inputs)
      if (v >= 0 && !g.values[v].constant) {
        all_const = false;
        break;
      }
    // Shape/Size of a value whose shape is fully known folds too.
    bool shape_of_static = false;
    if ((n.op_type == "Shape" || n.op_type == "Size") && n.domain.empty() && !n.inputs.empty() && n.inputs[0] >= 0) {
      const Value& v = g.values[n.inputs[0]];
      shape_of_static =
          v.has_shape && std::all_of(v.shape.begin(), v.shape.end(), [](const Dim& d) { return d.is_fixed(); });
    }
    if (!all_const && !shape_of_static) continue;
    const OpEntry* e = table.find(n.domain, n.op_type, n.opset);
    if (!e) continue;
    if (slots.size() < g.values.size()) slots.resize(g.values.size());
    for (int v : n.inputs)
      if (v >= 0) {
        if (g.values[v].constant)
          slots[v] = *g.values[v].constant;
        else {  // static-shape value: a placeholder with the right shape is all Shape/Size read
          Shape s;
          for (const Dim& d : g.values[v].shape) s.push_back(d.value);
          slots[v] =
              Tensor::wrap(g.values[v].dtype == DType::kUndefined ? DType::kFloat32 : g.values[v].dtype, s, nullptr);
        }
      }
    std::vector<Tensor> outs;
    bool folded = true;
    try {
      auto kernel = make_kernel(*e, n, g, &table);
      run_node(g, n, *kernel, slots, outs, rc);
    } catch (const Error&) {
      folded = false;  // leave it to run time, where the error is reported with the real inputs
    }
    for (int v : n.inputs)
      if (v >= 0) slots[v] = Tensor();
    if (!folded) continue;
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] < 0) continue;
      Value& v = g.values[n.outputs[i]];
      // A result aliasing a borrowed placeholder must be materialised.
      v.constant = outs[i].owns_storage() ? outs[i] : outs[i].clone();
      v.dtype = outs[i].dtype();
      v.has_shape = true;
      v.shape.clear();
      for (int64_t d : outs[i].shape()) v.shape.push_back(Dim{d, ""});
    }
    n.removed = true;
    changed = true;
  }
  g.compact();
  return changed;
}

// Drop nodes whose outputs nobody reads.
bool eliminate_dead_nodes(Graph& g) {
  std::vector<int> uses = reader_counts(g);
  bool changed = false;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = g.nodes[i];
    if (n.removed) continue;  // reader_counts left its reads out
    bool used = std::any_of(n.outputs.begin(), n.outputs.end(), [&](int o) { return o >= 0 && uses[o] > 0; });
    if (!used) {
      n.removed = true;
      changed = true;
      for (int v : values_read_by(g, n)) --uses[v];
    }
  }
  g.compact();
  return changed;
}

// Each subgraph (If/Loop/Scan body) becomes the session's own copy (the Model's graph shares
// them) and goes through the same passes, check-supported excepted (it recursed already).
bool prepare_subgraphs(Graph& g, const SessionOptions& options, const std::string& file, const OpTable& table) {
  bool any = false;
  for (auto& n : g.nodes)
    for (auto& [key, a] : n.attrs.items) {
      if (a.kind != Attribute::Kind::kGraph || !a.g) continue;
      a.g = std::make_shared<Graph>(*a.g);
      std::vector<GraphPass> passes = prepare_passes(options, file, table);
      run_passes(*a.g, {passes.begin() + 1, passes.end()});
      any = true;
    }
  return any;
}

}  // namespace

std::vector<GraphPass> prepare_passes(const SessionOptions& options, const std::string& file, const OpTable& table) {
  std::vector<GraphPass> passes;
  const OpTable* t = &table;
  passes.push_back(
      {"check-supported", "every node has a kernel for its opset and input element type", [file, t](Graph& g) {
         check_supported(g, file, *t);
         return false;
       }});
  passes.push_back({"float16-via-float32",
                    "float16/bfloat16 inputs of float32-only kernels are cast; their results rounded back",
                    [t](Graph& g) { return compute_low_precision_in_float32(g, *t); }});
  passes.push_back({"prepare-subgraphs", "every If/Loop/Scan body, copied, goes through these passes",
                    [options, file, t](Graph& g) { return prepare_subgraphs(g, options, file, *t); }});
  if (options.optimize) {
    const char* what = "nodes whose inputs are all constant (or Shape/Size of a static shape) become constants";
    const size_t max_bytes = options.max_tensor_bytes;
    passes.push_back({"fold-constants", str_cat(what, "; DequantizeLinear kept for the QDQ pass"),
                      [t, max_bytes](Graph& g) { return fold_constants(g, *t, max_bytes, true); }});
    passes.push_back({"eliminate-common-subexpressions",
                      "a node computing what an earlier node computed (same operator, inputs, attributes) is removed",
                      eliminate_common_subexpressions});
    for (const GraphPass& p : registry().passes) passes.push_back(p);
    passes.push_back(
        {"fold-constants", what, [t, max_bytes](Graph& g) { return fold_constants(g, *t, max_bytes, false); }});
  }
  passes.push_back({"eliminate-dead-nodes", "nodes whose outputs nobody reads are removed", eliminate_dead_nodes});
  return passes;
}

void run_passes(Graph& g, const std::vector<GraphPass>& passes, std::vector<PassReport>* reports) {
  for (const GraphPass& p : passes) {
    auto t0 = std::chrono::steady_clock::now();
    bool changed = p.run(g);
    if (changed) g.compact();
    if (reports) {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      reports->push_back(PassReport{p.name, changed, g.nodes.size(), ms});
    }
  }
}

void release_packed_constants(Graph& g, const ExecutionPlan& plan) {
  std::vector<char> releasable(g.values.size(), 1);
  for (int o : g.outputs) releasable[o] = 0;
  for (int i : g.inputs) releasable[i] = 0;  // an initializer that a feed may override
  for (const auto& p : plan.nodes()) {
    for (size_t i = 0; i < p.node->inputs.size(); ++i) {
      int v = p.node->inputs[i];
      if (v >= 0 && !p.kernel->releases_constant_input(i)) releasable[v] = 0;
    }
    for (int v : values_read_by(g, *p.node))  // read by a subgraph: not through an input slot
      if (std::find(p.node->inputs.begin(), p.node->inputs.end(), v) == p.node->inputs.end()) releasable[v] = 0;
  }
  for (size_t v = 0; v < g.values.size(); ++v) {
    auto& c = g.values[v].constant;
    // Constants nobody reads any more (folded into others, e.g. BatchNorm's into Conv's W) go too.
    if (c && releasable[v] && c->data()) c = Tensor::wrap(c->dtype(), c->shape(), nullptr);
  }
}

}  // namespace pointrt
