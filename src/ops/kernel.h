// The operator kernel interface and the operator table.
//
// A kernel is built once at prepare time by its factory (attributes parsed, weights packed),
// then run many times, possibly concurrently: OpKernel::run is const and must keep no mutable
// state. Output shapes are decided at run time by the kernel itself (ctx.output allocates), so
// symbolic and data-dependent sizes (voxel counts, NonZero) need no special path.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common.h"
#include "graph/ir.h"

namespace pointrt {

/// Allocates output storage; the session passes one backed by its buffer pool or arena.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual Tensor allocate(DType dtype, const Shape& shape) = 0;
  /// The executor is about to run node `index` of the main graph: allocations until the next
  /// call belong to it (memory planning). Subgraph runs do not call it.
  virtual void begin_node(int /*index*/) {}
  /// SessionOptions::max_tensor_bytes: KernelContext refuses larger outputs and temporaries
  /// before asking for memory.
  size_t max_tensor_bytes() const { return max_tensor_bytes_; }
  void set_max_tensor_bytes(size_t bytes) { max_tensor_bytes_ = bytes; }

 private:
  size_t max_tensor_bytes_ = default_max_tensor_bytes();
};

/// Per-run scratch shared by the kernels of one run (e.g. sparse rulebooks keyed by name).
struct RunCache {
  std::map<std::string, std::shared_ptr<void>> entries;
};

/// Named sub-phases of one node's run (e.g. SparseConv's rulebook building), for `bench --profile`.
struct PhaseTimes {
  std::vector<std::pair<std::string, double>> entries;  // (phase, milliseconds)
};

class Frame;  // the values of one plan execution (runtime/executor.h)

/// Called by the executor after each node of a main graph for each output value (by id) with
/// the tensor produced; returns a replacement that later nodes read, or an undefined Tensor to
/// keep it (SessionOptions::observe / RunHooks).
using ValueHook = std::function<Tensor(int value_id, const Tensor& produced)>;

/// State of one run, shared by its kernels and by the subgraphs they run (runtime/executor.h):
/// the allocator every tensor of the run comes from, the run's cache, the profile rows (when
/// profiling) and the scope that prefixes node names in them. Not thread-safe: one run uses it.
class RunContext {
 public:
  RunContext(Allocator& allocator, RunCache& cache, std::vector<NodeProfile>* profile = nullptr)
      : allocator_(&allocator), cache_(&cache), profile_(profile) {}
  Allocator& allocator() const { return *allocator_; }
  RunCache& cache() const { return *cache_; }
  /// Where profile rows go; null unless the session profiles.
  std::vector<NodeProfile>* profile() const { return profile_; }
  /// "" for a main graph, "loop_1/body/" inside a subgraph.
  const std::string& scope() const { return scope_; }
  /// True inside a subgraph run.
  bool is_nested() const { return depth_ > 0; }
  /// The main graph's value hook (null when none); not passed on to nested runs.
  const ValueHook* value_hook() const { return value_hook_; }
  void set_value_hook(const ValueHook* hook) { value_hook_ = hook; }
  /// The context of a subgraph run inside this one: same allocator and profile rows, the
  /// subgraph's own `cache` (a body run must not see rulebooks of another iteration), scope
  /// extended by `name` + "/".
  RunContext nested(RunCache& cache, const std::string& name) const {
    RunContext c(*allocator_, cache, profile_);
    c.scope_ = scope_ + name + "/";
    c.depth_ = depth_ + 1;
    return c;
  }

 private:
  Allocator* allocator_;
  RunCache* cache_;
  std::vector<NodeProfile>* profile_;
  std::string scope_;
  int depth_ = 0;
  const ValueHook* value_hook_ = nullptr;
};

/// What a kernel sees while it runs.
class KernelContext {
 public:
  /// For the executor: `frame` holds the running plan's values (the enclosing scope of any
  /// subgraph this kernel runs). `run` must outlive the context.
  /// `graph` (the node's graph, optional) names values in messages.
  KernelContext(const Node& node, std::vector<const Tensor*> inputs, std::vector<Tensor>& outputs,
                const RunContext& run, const Frame* frame, PhaseTimes* phases, const Graph* graph = nullptr,
                const std::string* where = nullptr, std::vector<const AnyValue*> other_inputs = {},
                std::vector<AnyValue>* other_outputs = nullptr)
      : node_(node),
        inputs_(std::move(inputs)),
        outputs_(outputs),
        run_(&run),
        frame_(frame),
        phases_(phases),
        graph_(graph),
        where_(where),
        other_inputs_(std::move(other_inputs)),
        other_outputs_(other_outputs) {}
  /// For tests and tools that run one kernel by hand.
  KernelContext(const Node& node, std::vector<const Tensor*> inputs, std::vector<Tensor>& outputs, Allocator& allocator,
                RunCache& cache, PhaseTimes* phases = nullptr)
      : node_(node),
        inputs_(std::move(inputs)),
        outputs_(outputs),
        own_run_(std::in_place, allocator, cache),
        run_(&*own_run_),
        frame_(nullptr),
        phases_(phases) {}
  KernelContext(const KernelContext&) = delete;
  KernelContext& operator=(const KernelContext&) = delete;

  const Node& node() const { return node_; }
  /// "node 'name' (Op)" for error messages: the executor's (constructor argument `where`, made
  /// once per planned node, must outlive the context), else computed once per context.
  const std::string& where() const {
    if (where_) return *where_;
    if (where_cache_.empty()) where_cache_ = node_.describe();
    return where_cache_;
  }
  size_t num_inputs() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  /// Input i; an error naming the node if it is absent.
  const Tensor& input(size_t i) const;
  /// Name of input i in the graph (for messages).
  std::string input_name(size_t i) const;
  /// Input i of any kind: a tensor, a sequence, or none (an empty optional); undefined when absent.
  /// Tensors stay in input(); a sequence or none comes from the executor's side table.
  AnyValue any_input(size_t i) const;
  /// True when input i is a tensor (false for a sequence, none or an absent input).
  bool input_tensor_defined(size_t i) const { return has_input(i) && inputs_[i]->defined(); }
  /// Input i as a sequence; an Error naming the node and the input when it holds anything else.
  const Sequence& sequence_input(size_t i) const;
  /// Set output i to a value of any kind (a tensor goes where set_output puts it).
  void set_any_output(size_t i, AnyValue v);
  /// For the executor: the sequence/none inputs (one per input, null for tensors; empty when the
  /// node reads none) and where sequence/none outputs go (resized to num_outputs() on first use).
  void set_other_values(std::vector<const AnyValue*> inputs, std::vector<AnyValue>* outputs) {
    other_inputs_ = std::move(inputs);
    other_outputs_ = outputs;
  }
  /// The sequence/none outputs set so far (empty when none was).
  const std::vector<AnyValue>& other_outputs() const { return *other_outs(); }
  /// "output i 'name'" (the name when the graph is known, see set_graph).
  std::string output_name(size_t i) const;
  /// The graph the node belongs to, for value names in messages (optional).
  void set_graph(const Graph* graph) { graph_ = graph; }
  size_t num_outputs() const { return outputs_.size(); }
  /// Allocate output i with the given dtype and shape and return it. The element and byte counts
  /// are checked (overflow, Allocator::max_tensor_bytes) before any memory is asked for: an
  /// Error naming the node, the output and the shape.
  Tensor& output(size_t i, DType dtype, const Shape& shape);
  /// Set output i to an existing tensor (aliasing, e.g. Reshape or Identity without a copy).
  void set_output(size_t i, Tensor t);
  /// A temporary buffer of `bytes` for this node's run (e.g. a oneDNN scratchpad), from the
  /// run's allocator: in an arena run it shares memory with tensors that are already dead.
  /// Free it by dropping the tensor (at the latest when run() returns).
  Tensor temporary(size_t bytes);
  RunCache& cache() { return run_->cache(); }
  /// The run this node belongs to; pass run_context().nested(...) to a subgraph's plan.
  const RunContext& run_context() const { return *run_; }
  /// The values of the running plan (the enclosing scope of a subgraph); null outside the executor.
  const Frame* frame() const { return frame_; }
  /// This context with other input tensors (same node, outputs, run and frame): lets a kernel of
  /// an older operator version run the newer version's kernel on adapted inputs. Must not
  /// outlive this context.
  KernelContext with_inputs(std::vector<const Tensor*> inputs) const {
    return KernelContext(node_, std::move(inputs), outputs_, *run_, frame_, phases_, graph_, where_, other_inputs_,
                         other_outs());
  }
  /// True when the session profiles; kernels may then time their phases.
  bool profiling() const { return phases_ != nullptr; }
  /// Record `ms` spent in `phase` of this node (no-op unless profiling).
  void record_phase(const std::string& phase, double ms) {
    if (phases_) phases_->entries.emplace_back(phase, ms);
  }

 private:
  const Node& node_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor>& outputs_;
  std::optional<RunContext> own_run_;  // set by the hand-run constructor only
  const RunContext* run_;
  const Frame* frame_;
  PhaseTimes* phases_;
  const Graph* graph_ = nullptr;
  const std::string* where_ = nullptr;
  mutable std::string where_cache_;
  std::vector<const AnyValue*> other_inputs_;       // empty unless an input is a sequence or none
  std::vector<AnyValue>* other_outputs_ = nullptr;  // null: own_other_outputs_
  mutable std::vector<AnyValue> own_other_outputs_;
  std::vector<AnyValue>* other_outs() const { return other_outputs_ ? other_outputs_ : &own_other_outputs_; }
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual void run(KernelContext& ctx) const = 0;
  /// True when the kernel keeps its own packed copy of constant input `i` (made at prepare time)
  /// and never reads that input's data at run time (only its dtype and shape). When every reader
  /// of a constant says so, the session replaces it by a data-less placeholder, so the plain
  /// copy does not stay in memory next to the packed one.
  virtual bool releases_constant_input(size_t /*i*/) const { return false; }
};

class OpTable;

/// What a factory sees at prepare time.
struct KernelInit {
  const Node& node;
  const Graph& graph;
  /// The session's operator table (op_table() plus its plugins' rows) when known; kernels that build
  /// plans of subgraphs (If/Loop/Scan) take their kernels from kernels().
  const OpTable* table = nullptr;
  const OpTable& kernels() const;
  std::string where() const { return node.describe(); }
  const Attributes& attrs() const { return node.attrs; }
  int64_t opset() const { return node.opset; }
  size_t num_inputs() const { return node.inputs.size(); }
  bool has_input(size_t i) const { return i < node.inputs.size() && node.inputs[i] >= 0; }
  /// Constant value of input i (initializer or folded), nullptr if it varies per run.
  const Tensor* constant_input(size_t i) const {
    if (!has_input(i)) return nullptr;
    const auto& v = graph.values[node.inputs[i]];
    return v.constant ? &*v.constant : nullptr;
  }
  /// Declared or inferred value of input i (dtype may be undefined).
  const Value* input_value(size_t i) const { return has_input(i) ? &graph.values[node.inputs[i]] : nullptr; }
  /// "'role' (value 'name')" for messages about input i ("'role'" alone when the input is absent).
  std::string input_label(size_t i, const char* role) const {
    std::string s = str_cat("'", role, "'");
    if (has_input(i)) s += str_cat(" (value '", graph.values[node.inputs[i]].name, "')");
    return s;
  }
};

using KernelFactory = std::function<std::unique_ptr<OpKernel>(const KernelInit&)>;

/// A kernel from a plain function (for stateless operators).
class FunctionKernel : public OpKernel {
 public:
  explicit FunctionKernel(std::function<void(KernelContext&)> fn) : fn_(std::move(fn)) {}
  void run(KernelContext& ctx) const override { fn_(ctx); }

 private:
  std::function<void(KernelContext&)> fn_;
};
inline std::unique_ptr<OpKernel> make_function_kernel(std::function<void(KernelContext&)> fn) {
  return std::make_unique<FunctionKernel>(std::move(fn));
}

/// The domain of the nodes that pointrt's own passes make (FusedConv, QConv, ...); never in a file.
inline constexpr const char* kInternalDomain = "pointrt.internal";

/// One row of the operator table: (domain, op, opset range) -> factory.
struct OpEntry {
  std::string domain;
  std::string op_type;
  int since = 1;
  int until = 1;
  std::vector<DType> types;  // element types of the main ("T") input; empty = any
  KernelFactory factory;
  std::string note;
  /// Index of the input whose dtype `types` constrains (usually 0).
  int typed_input = 0;
};

class OpTable {
 public:
  void add(OpEntry e);
  /// The entry serving (domain, op) at `opset`, or nullptr.
  const OpEntry* find(const std::string& domain, const std::string& op_type, int64_t opset) const;
  /// Any entry for (domain, op), regardless of opset (for messages).
  std::vector<const OpEntry*> find_all(const std::string& domain, const std::string& op_type) const;
  const std::vector<OpEntry>& entries() const { return entries_; }

 private:
  std::vector<OpEntry> entries_;
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> index_;
};

/// The one operator table: every family's rows (registry() in ops/registry.h builds it on first use).
const OpTable& op_table();

inline const OpTable& KernelInit::kernels() const { return table ? *table : op_table(); }

// Common dtype sets for table rows.
extern const std::vector<DType> kFloatTypes;  // float32, float64
extern const std::vector<DType> kFloat32Only;
extern const std::vector<DType> kNumericTypes;  // all ints and floats
extern const std::vector<DType> kSignedNumericTypes;
extern const std::vector<DType> kAllTypes;  // numeric + bool
extern const std::vector<DType> kIntTypes;
extern const std::vector<DType> kBoolOnly;

}  // namespace pointrt
