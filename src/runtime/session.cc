// Model loading entry points, prepare (fold, fuse, check, build kernels, plan) and run.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "core/checked_size.h"
#include "core/file_io.h"
#include "graph/onnx_import.h"
#include "ops/kernel.h"
#include "runtime/buffer_pool.h"
#include "runtime/memory_pattern.h"
#include "runtime/observe.h"

namespace pointrt {

// ---------------------------------------------------------------- API boundary
namespace {
// Run `body`; whatever it throws leaves as one pointrt::Error that names `subject` (the file):
// std::bad_alloc, std::length_error from a library, oneDNN's and protobuf's exceptions alike.
template <typename F>
auto with_error_context(const std::string& subject, F&& body) -> decltype(body()) {
  auto prefixed = [&](const std::string& what) {
    return what.compare(0, subject.size(), subject) == 0 ? what : subject + ": " + what;
  };
  try {
    return body();
  } catch (const Error& e) {
    throw Error(prefixed(e.what()));
  } catch (const std::bad_alloc&) {
    throw Error(prefixed("out of memory"));
  } catch (const std::exception& e) {
    throw Error(prefixed(str_cat("internal error (", e.what(), ")")));
  } catch (...) {
    throw Error(prefixed("internal error (an exception that is not a std::exception)"));
  }
}
}  // namespace

// ---------------------------------------------------------------- Model
Model Model::load(const std::string& path, const LoadOptions& options) {
  return with_error_context(path, [&] {
    // Protobuf cannot parse more than 2 GiB; larger files must keep their weights external.
    std::string bytes = RegularFile(path).read_all(uint64_t(INT32_MAX));
    std::string dir = ".";
    auto slash = path.find_last_of('/');
    if (slash != std::string::npos) dir = path.substr(0, slash);
    if (dir.empty()) dir = "/";
    return load_from_bytes(bytes.data(), bytes.size(), dir, path, options);
  });
}

Model Model::load_from_bytes(const void* data, size_t size, const std::string& base_dir,
                             const std::string& display_name, const LoadOptions& options) {
  return with_error_context(display_name, [&] {
    Model m;
    m.impl_ = import_onnx(data, size, ExternalDataRoots(base_dir, options.external_data_dirs), display_name);
    return m;
  });
}

const std::vector<ValueInfo>& Model::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Model::outputs() const { return impl_->outputs; }
const std::map<std::string, int64_t>& Model::opsets() const { return impl_->graph.opsets; }
std::string Model::path() const { return impl_->path; }

// ---------------------------------------------------------------- Session internals
namespace detail {

struct PlannedNode {
  const Node* node;
  std::unique_ptr<OpKernel> kernel;
  std::vector<int> free_after;  // values whose last use is this node
};

struct SessionImpl {
  // The session keeps no reference to the Model: once the caller drops it, the only weights in
  // memory are the session's (and, where kernels packed them, only the packed copies).
  std::string path;
  SessionOptions options;
  Graph graph;  // optimised copy
  std::vector<PlannedNode> plan;
  std::vector<ValueInfo> inputs, outputs;
  std::shared_ptr<BufferPool> pool = std::make_shared<BufferPool>();
  MemoryPatterns patterns;
  MemoryCounters counters;
  std::vector<char> observed;  // per value id: RunHooks::on_value sees it (SessionOptions::observe)
  mutable std::mutex profile_mutex;
  mutable std::vector<NodeProfile> last_profile;
};

}  // namespace detail

namespace {

// Hand freed heap pages back to the system. Loading and preparing free the parsed protobuf and
// the plain weights that kernels packed, but malloc keeps such memory mapped (peak RSS counts it).
void return_free_heap_pages() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

class HeapAllocator : public Allocator {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
};

// Anything a kernel or its factory throws becomes a pointrt::Error that names the node.
template <typename F>
auto naming_node(const Node& node, F&& body) -> decltype(body()) {
  std::string who = node.describe();
  try {
    return body();
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.find(who) != std::string::npos) throw;
    throw Error(who + ": " + what);
  } catch (const std::bad_alloc&) {
    throw Error(who + ": out of memory");
  } catch (const std::exception& e) {
    throw Error(str_cat(who, ": internal error (", e.what(), ")"));
  }
}

// Run one node on the given input tensors; used by run() and by constant folding.
void execute_node(const Graph& graph, const Node& node, const OpKernel& kernel, const std::vector<Tensor>& slots,
                  std::vector<Tensor>& outs, Allocator& alloc, RunCache& cache, PhaseTimes* phases = nullptr) {
  std::vector<const Tensor*> ins;
  ins.reserve(node.inputs.size());
  for (int v : node.inputs) ins.push_back(v >= 0 ? &slots[v] : nullptr);
  outs.assign(node.outputs.size(), Tensor());
  KernelContext ctx(node, std::move(ins), outs, alloc, cache, phases);
  ctx.set_graph(&graph);
  naming_node(node, [&] { kernel.run(ctx); });
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (node.outputs[i] >= 0 && !outs[i].defined()) fail(node.describe(), ": kernel did not produce output ", i);
}

std::unique_ptr<OpKernel> make_kernel(const OpEntry& e, const Node& n, const Graph& g) {
  return naming_node(n, [&] { return e.factory(KernelInit{n, g}); });
}

std::string supported_range_text(const std::vector<const OpEntry*>& entries) {
  std::string s;
  for (auto* e : entries) s += str_cat(s.empty() ? "" : ", ", e->since, "-", e->until);
  return s;
}

bool dtype_allowed(const OpEntry& e, DType t) {
  return e.types.empty() || t == DType::kUndefined || std::find(e.types.begin(), e.types.end(), t) != e.types.end();
}

// Ops whose result must not be computed at prepare time even with constant inputs.
bool foldable(const Node& n) {
  static const std::set<std::string> never = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                              "RandomUniformLike", "Multinomial",   "Dropout"};
  return !never.count(n.op_type);
}

std::string node_label(const Node& n) { return n.op_type + ":" + n.name; }

}  // namespace

static void check_supported(const Graph& g, const std::string& file) {
  std::vector<std::string> problems;
  for (const auto& n : g.nodes) {
    const OpEntry* e = op_table().find(n.domain, n.op_type, n.opset);
    std::string dom = n.domain.empty() ? "ai.onnx" : n.domain;
    if (!e) {
      auto all = op_table().find_all(n.domain, n.op_type);
      if (all.empty())
        problems.push_back(str_cat(n.describe(), ": operator ", dom, "::", n.op_type, " is not supported"));
      else
        problems.push_back(str_cat(n.describe(), ": ", dom, "::", n.op_type, " at opset ", n.opset,
                                   " is not supported (supported opsets: ", supported_range_text(all), ")"));
      continue;
    }
    int ti = e->typed_input;
    if (ti >= 0 && static_cast<size_t>(ti) < n.inputs.size() && n.inputs[ti] >= 0) {
      DType t = g.values[n.inputs[ti]].dtype;
      if (!dtype_allowed(*e, t))
        problems.push_back(str_cat(n.describe(), ": input '", g.values[n.inputs[ti]].name, "' has element type ",
                                   dtype_name(t), ", which this operator does not support"));
    }
  }
  if (!problems.empty()) {
    std::string msg = str_cat(file, ": ", problems.size(), " node(s) cannot run:");
    for (auto& p : problems) msg += "\n  " + p;
    throw Error(msg);
  }
}

// Replace nodes whose inputs are all constants by their results. The first run keeps
// DequantizeLinear (`keep_dequantize`): the quantization pass fuses DequantizeLinear of constant
// int8 weights into int8 kernels; the run after the passes folds whatever it left.
static void fold_constants(Graph& g, size_t max_tensor_bytes, bool keep_dequantize = false) {
  HeapAllocator heap;
  heap.set_max_tensor_bytes(max_tensor_bytes);
  RunCache cache;
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
    const OpEntry* e = op_table().find(n.domain, n.op_type, n.opset);
    if (!e) continue;
    std::vector<Tensor> slots(g.values.size());
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
    try {
      auto kernel = make_kernel(*e, n, g);
      execute_node(g, n, *kernel, slots, outs, heap, cache);
    } catch (const Error&) {
      continue;  // leave it to run time, where the error is reported with the real inputs
    }
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
  }
  g.compact();
}

// Drop nodes whose outputs nobody reads.
static void eliminate_dead_nodes(Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (int o : g.outputs) ++uses[o];
  for (auto& n : g.nodes)
    for (int v : n.inputs)
      if (v >= 0) ++uses[v];
  for (size_t i = g.nodes.size(); i-- > 0;) {
    Node& n = g.nodes[i];
    bool used = std::any_of(n.outputs.begin(), n.outputs.end(), [&](int o) { return o >= 0 && uses[o] > 0; });
    if (!used) {
      n.removed = true;
      for (int v : n.inputs)
        if (v >= 0) --uses[v];
    }
  }
  g.compact();
}

// A constant whose every reader keeps a packed copy (OpKernel::releases_constant_input), or that
// no node reads any more, is replaced by a data-less placeholder of the same dtype and shape: the
// plain weights then stay in memory only as long as the caller keeps the Model.
static void release_packed_constants(detail::SessionImpl& s) {
  Graph& g = s.graph;
  std::vector<char> releasable(g.values.size(), 1);
  for (int o : g.outputs) releasable[o] = 0;
  for (int i : g.inputs) releasable[i] = 0;  // an initializer that a feed may override
  for (const auto& p : s.plan)
    for (size_t i = 0; i < p.node->inputs.size(); ++i) {
      int v = p.node->inputs[i];
      if (v >= 0 && !p.kernel->releases_constant_input(i)) releasable[v] = 0;
    }
  for (size_t v = 0; v < g.values.size(); ++v) {
    auto& c = g.values[v].constant;
    // Constants nobody reads any more (folded into others, e.g. BatchNorm's into Conv's W) go too.
    if (c && releasable[v] && c->data()) c = Tensor::wrap(c->dtype(), c->shape(), nullptr);
  }
}

static void prepare_session(detail::SessionImpl& s, const Model& model, const SessionOptions& options) {
  s.path = model.impl()->path;
  s.options = options;
  s.graph = model.impl()->graph;
  s.inputs = model.impl()->inputs;
  s.outputs = model.impl()->outputs;
  Graph& g = s.graph;
  const std::string& file = s.path;
  op_table();  // families register their passes while building the table
  // Kernels that build oneDNN primitives at prepare time fix their thread split then: prepare
  // under the thread count the runs will use.
  if (options.intra_op_threads > 0) omp_set_num_threads(options.intra_op_threads);

  check_supported(g, file);
  const size_t model_outputs = g.outputs.size();
  const std::vector<int> observed_ids = add_observed_outputs(g, options.observe, file);
  if (options.optimize) {
    fold_constants(g, options.max_tensor_bytes, true);
    for (auto& p : graph_passes())
      if (p.pass(g)) g.compact();
    fold_constants(g, options.max_tensor_bytes);
  }
  eliminate_dead_nodes(g);
  s.observed = take_observed_outputs(g, observed_ids, model_outputs);

  // Build kernels.
  for (const auto& n : g.nodes) {
    const OpEntry* e = op_table().find(n.domain, n.op_type, n.opset);
    if (!e) fail(file, ": ", n.describe(), " has no kernel after optimisation");
    detail::PlannedNode pn;
    pn.node = &n;
    pn.kernel = make_kernel(*e, n, g);
    s.plan.push_back(std::move(pn));
  }
  // Liveness: free each intermediate after its last reader (an output nobody reads right
  // after its producer).
  std::vector<int> last_use(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (int v : g.nodes[i].inputs)
      if (v >= 0) last_use[v] = static_cast<int>(i);
    for (int v : g.nodes[i].outputs)
      if (v >= 0 && last_use[v] < 0) last_use[v] = static_cast<int>(i);
  }
  std::set<int> keep(g.outputs.begin(), g.outputs.end());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (last_use[v] >= 0 && !keep.count(static_cast<int>(v)) && !g.values[v].constant)
      s.plan[last_use[v]].free_after.push_back(static_cast<int>(v));
  release_packed_constants(s);
  return_free_heap_pages();
}

Session::Session(const Model& model, const SessionOptions& options) : impl_(std::make_unique<detail::SessionImpl>()) {
  if (!model.impl()) fail("Session: the model is empty (not loaded)");
  with_error_context(model.impl()->path, [&] { prepare_session(*impl_, model, options); });
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

const std::vector<ValueInfo>& Session::inputs() const { return impl_->inputs; }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->outputs; }

std::vector<std::string> Session::execution_plan() const {
  std::vector<std::string> r;
  for (const auto& p : impl_->plan) r.push_back(node_label(*p.node));
  return r;
}

MemoryStats Session::memory_stats() const {
  auto& s = *impl_;
  MemoryStats m;
  m.planned_signatures = s.patterns.num_plans();
  m.arena_bytes = s.patterns.largest_plan_bytes();
  m.arena_allocations = s.counters.arena_allocations.load();
  m.pool_allocations = s.counters.pool_allocations.load();
  return m;
}

std::vector<NodeProfile> Session::last_profile() const {
  std::lock_guard<std::mutex> lock(impl_->profile_mutex);
  return impl_->last_profile;
}

// Check a feed against the declared input; symbolic dims must agree across inputs.
static void check_feed(const std::string& file, const Value& v, const Tensor& t,
                       std::map<std::string, int64_t>& symbols) {
  // A caller's handle may claim any shape (Tensor::wrap): its size must at least be countable.
  checked_nbytes(t.dtype(), t.shape(), str_cat(file, ": input '", v.name, "'"));
  if (v.dtype != DType::kUndefined && t.dtype() != v.dtype)
    fail(file, ": input '", v.name, "' expects element type ", dtype_name(v.dtype), ", got ", dtype_name(t.dtype()));
  if (!v.has_shape) return;
  if (t.rank() != v.shape.size())
    fail(file, ": input '", v.name, "' expects rank ", v.shape.size(), ", got rank ", t.rank(), " (shape ",
         shape_to_string(t.shape()), ")");
  for (size_t i = 0; i < v.shape.size(); ++i) {
    const Dim& d = v.shape[i];
    if (d.is_fixed() && d.value != t.dim(i))
      fail(file, ": input '", v.name, "' dimension ", i, " must be ", d.value, ", got ", t.dim(i), " (shape ",
           shape_to_string(t.shape()), ")");
    if (!d.symbol.empty()) {
      auto [it, inserted] = symbols.emplace(d.symbol, t.dim(i));
      if (!inserted && it->second != t.dim(i))
        fail(file, ": input '", v.name, "' dimension ", i, " ('", d.symbol, "') is ", t.dim(i),
             " but another input set '", d.symbol, "' = ", it->second);
    }
  }
}

static std::vector<Tensor> run_session(detail::SessionImpl& s, const std::map<std::string, Tensor>& feeds,
                                       const RunHooks& hooks) {
  const Graph& g = s.graph;
  const std::string& file = s.path;
  if (s.options.intra_op_threads > 0) omp_set_num_threads(s.options.intra_op_threads);

  std::vector<Tensor> slots(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) slots[v] = *g.values[v].constant;
  std::map<std::string, int64_t> symbols;
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    auto it = feeds.find(v.name);
    if (it == feeds.end()) fail(file, ": input '", v.name, "' was not fed");
    check_feed(file, v, it->second, symbols);
    slots[id] = it->second;
  }
  for (const auto& [name, t] : feeds) {
    int id = g.find_value(name);
    if (id < 0 || std::find(g.inputs.begin(), g.inputs.end(), id) == g.inputs.end()) {
      std::string names;
      for (int i : g.inputs) names += (names.empty() ? "" : ", ") + g.values[i].name;
      fail(file, ": '", name, "' is not an input of the model (inputs: ", names, ")");
    }
  }

  // Memory pattern: serve this run from an arena block planned for its input signature, or
  // record the run so that the next one with this signature can be.
  RunAllocator alloc(s.pool, s.counters);
  alloc.set_max_tensor_bytes(s.options.max_tensor_bytes);
  InputSignature sig;
  std::shared_ptr<ArenaBlock> block;
  std::shared_ptr<AllocationRecorder> recorder;
  if (s.options.memory_pattern && !hooks.on_value) {
    for (int id : g.inputs) sig.inputs.emplace_back(slots[id].dtype(), slots[id].shape());
    bool first_use = false;
    block = s.patterns.acquire(sig, &first_use);
    // From now on this signature's intermediates live in arena blocks: the pool's buffers from
    // the recording run would only add to the footprint.
    if (block && first_use) {
      s.pool->trim();
      return_free_heap_pages();  // and what the caller freed since prepare (e.g. the Model)
    }
    if (block)
      alloc.serve_from(block);
    else if (s.patterns.should_record()) {
      recorder = std::make_shared<AllocationRecorder>(static_cast<int>(s.plan.size()));
      alloc.record_into(recorder);
    }
  }
  RunCache cache;
  std::vector<Tensor> outs;
  std::vector<NodeProfile> profile;
  PhaseTimes phases;
  for (size_t node_index = 0; node_index < s.plan.size(); ++node_index) {
    const auto& p = s.plan[node_index];
    auto t0 = std::chrono::steady_clock::now();
    phases.entries.clear();
    alloc.begin_node(static_cast<int>(node_index));
    execute_node(g, *p.node, *p.kernel, slots, outs, alloc, cache, s.options.profile ? &phases : nullptr);
    for (size_t i = 0; i < p.node->outputs.size(); ++i)
      if (p.node->outputs[i] >= 0) slots[p.node->outputs[i]] = std::move(outs[i]);
    if (hooks.on_value)
      for (int o : p.node->outputs) {
        if (o < 0 || !s.observed[o]) continue;
        Tensor replacement = hooks.on_value(g.values[o].name, slots[o]);
        if (!replacement.defined()) continue;
        check_replacement(file, g.values[o], slots[o], replacement);
        slots[o] = std::move(replacement);
      }
    for (int v : p.free_after) slots[v] = Tensor();
    if (s.options.profile) {
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      // Named phases are reported as "Op:phase" rows and taken out of the node's own row.
      for (const auto& [phase, phase_ms] : phases.entries) {
        profile.push_back(NodeProfile{p.node->name, p.node->op_type + ":" + phase, phase_ms});
        ms -= phase_ms;
      }
      profile.push_back(NodeProfile{p.node->name, p.node->op_type, std::max(0.0, ms)});
    }
  }
  outs.clear();
  cache.entries.clear();
  alloc.step()->store(static_cast<int>(s.plan.size()));  // releases from now on: escaped
  std::vector<Tensor> result;
  for (int id : g.outputs) {
    if (!slots[id].defined()) fail(file, ": output '", g.values[id].name, "' was not computed");
    // An output that is a constant, or that views storage the session does not own (a fed
    // caller buffer, possibly through Reshape/Squeeze views), is returned as a copy: the caller
    // may modify it, and it must outlive the caller's buffer.
    bool borrowed = g.values[id].constant || !slots[id].owns_storage();
    result.push_back(borrowed ? slots[id].clone() : slots[id]);
  }
  if (s.options.profile) {
    std::lock_guard<std::mutex> lock(s.profile_mutex);
    s.last_profile = std::move(profile);
  }
  // Intermediates still in slots (graph inputs, constants, outputs) are not planned; drop the
  // slots before planning so that nothing else counts as escaped.
  slots.clear();
  if (recorder) s.patterns.add_plan(sig, recorder->make_plan());
  if (block) {
    alloc.serve_from(nullptr);
    s.patterns.release(sig, std::move(block));
  }
  return result;
}

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& feeds) const { return run(feeds, RunHooks{}); }

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& feeds, const RunHooks& hooks) const {
  return with_error_context(impl_->path, [&] { return run_session(*impl_, feeds, hooks); });
}

void Session::run(const std::map<std::string, Tensor>& feeds, std::vector<Tensor>& outputs_into) const {
  std::vector<Tensor> r = run(feeds);
  if (outputs_into.size() != r.size())
    fail(impl_->path, ": ", r.size(), " outputs, but ", outputs_into.size(), " output buffers were given");
  for (size_t i = 0; i < r.size(); ++i) {
    Tensor& dst = outputs_into[i];
    if (dst.dtype() != r[i].dtype() || dst.shape() != r[i].shape())
      fail(impl_->path, ": output '", impl_->outputs[i].name, "' is ", dtype_name(r[i].dtype()), " ",
           shape_to_string(r[i].shape()), ", but the buffer given is ", dtype_name(dst.dtype()), " ",
           shape_to_string(dst.shape()));
    if (r[i].nbytes()) std::memcpy(dst.data(), r[i].data(), r[i].nbytes());
  }
}

}  // namespace pointrt
