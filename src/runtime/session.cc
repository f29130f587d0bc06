// Session: prepare (runtime/prepare.h) and the executor's plan (runtime/executor.h) at
// construction; run() checks the feeds, picks the run's allocator (memory pattern) and executes.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "core/checked_size.h"
#include "graph/onnx_import.h"
#include "runtime/buffer_pool.h"
#include "runtime/error_context.h"
#include "runtime/executor.h"
#include "runtime/memory_pattern.h"
#include "runtime/observe.h"
#include "runtime/plugin.h"
#include "runtime/prepare.h"

namespace pointrt {

namespace detail {

struct SessionImpl {
  // The session keeps no reference to the Model: once the caller drops it, the only weights in
  // memory are the session's (and, where kernels packed them, only the packed copies).
  std::string path;
  SessionOptions options;
  std::shared_ptr<const OpTable> table;  // op_table(), or a copy with the plugins' rows
  Graph graph;                           // optimised copy
  std::unique_ptr<ExecutionPlan> plan;
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

// Check a feed against the declared input; symbolic dims must agree across inputs.
void check_feed(const std::string& file, const Value& v, const Tensor& t, std::map<std::string, int64_t>& symbols) {
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

// A feed of any kind against the declared input: the kind first, then as a tensor (each element
// of a sequence is checked against the declared element type and shape).
void check_feed(const std::string& file, const Value& v, const AnyValue& a, std::map<std::string, int64_t>& symbols) {
  const bool ok = a.is_tensor() ? !v.sequence : a.is_sequence() ? v.sequence : a.is_none() && v.optional;
  if (!ok) fail(file, ": input '", v.name, "' is declared ", value_type_string(v), " but gets ", a.describe());
  if (a.is_tensor()) return check_feed(file, v, a.tensor(), symbols);
  if (!a.is_sequence()) return;
  const Sequence& seq = a.sequence();
  if (v.dtype != DType::kUndefined && seq.elem_type() != v.dtype)
    fail(file, ": input '", v.name, "' expects a sequence of ", dtype_name(v.dtype), ", got one of ",
         dtype_name(seq.elem_type()));
  for (const Tensor& t : seq.items()) {
    std::map<std::string, int64_t> own;  // symbols may differ from element to element
    check_feed(file, v, t, own);
  }
}

// The feeds in the order of g.inputs; every input fed, no unknown name.
template <typename V>
std::vector<V> bind_feeds(const Graph& g, const std::string& file, const std::map<std::string, V>& feeds) {
  std::vector<V> bound;
  std::map<std::string, int64_t> symbols;
  for (int id : g.inputs) {
    const Value& v = g.values[id];
    auto it = feeds.find(v.name);
    if (it == feeds.end()) fail(file, ": input '", v.name, "' was not fed");
    check_feed(file, v, it->second, symbols);
    bound.push_back(it->second);
  }
  for (const auto& [name, t] : feeds) {
    int id = g.find_value(name);
    if (id < 0 || std::find(g.inputs.begin(), g.inputs.end(), id) == g.inputs.end()) {
      std::string names;
      for (int i : g.inputs) names += (names.empty() ? "" : ", ") + g.values[i].name;
      fail(file, ": '", name, "' is not an input of the model (inputs: ", names, ")");
    }
  }
  return bound;
}

void prepare_session(detail::SessionImpl& s, const Model& model, const SessionOptions& options) {
  s.path = model.impl()->path;
  s.options = options;
  s.graph = model.impl()->graph;
  s.inputs = model.impl()->inputs;
  s.outputs = model.impl()->outputs;
  // Kernels that build oneDNN primitives at prepare time fix their thread split then: prepare
  // under the thread count the runs will use.
  if (options.intra_op_threads > 0) omp_set_num_threads(options.intra_op_threads);
  // check-supported first; then the observed values become graph outputs for the other passes,
  // which keep graph outputs as the file defines them.
  s.table = session_op_table(options.plugins);
  std::vector<GraphPass> passes = prepare_passes(options, s.path, *s.table);
  run_passes(s.graph, {passes.front()});
  const size_t model_outputs = s.graph.outputs.size();
  const std::vector<int> observed_ids = add_observed_outputs(s.graph, options.observe, s.path);
  run_passes(s.graph, {passes.begin() + 1, passes.end()});
  s.observed = take_observed_outputs(s.graph, observed_ids, model_outputs);
  s.plan = std::make_unique<ExecutionPlan>(s.graph, *s.table, s.path);
  release_packed_constants(s.graph, *s.plan);
  return_free_heap_pages();
}

template <typename V>
std::vector<V> run_session(detail::SessionImpl& s, const std::map<std::string, V>& feeds, const RunHooks& hooks);

}  // namespace

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
  for (const auto& p : impl_->plan->nodes()) r.push_back(p.node->op_type + ":" + p.node->name);
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

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& feeds) const { return run(feeds, RunHooks{}); }

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& feeds, const RunHooks& hooks) const {
  return with_error_context(impl_->path, [&] { return run_session(*impl_, feeds, hooks); });
}

std::vector<AnyValue> Session::run_any(const std::map<std::string, AnyValue>& feeds) const {
  return with_error_context(impl_->path, [&] { return run_session(*impl_, feeds, RunHooks{}); });
}

namespace {

// A copy in a pooled buffer: a fresh allocation of a large output would be a new mmap whose
// pages fault in on every run (most of the cost of copying a fed 40 MB tensor back out). From
// 1 MiB on, the run's threads copy pieces of it: one thread reaches a fraction of the machine's
// bandwidth (a 40 MB Reshape output: 2.8 ms on one thread of this VM).
Tensor copy_from_pool(const std::shared_ptr<BufferPool>& pool, const Tensor& t) {
  if (t.dtype() == DType::kString) return t.clone();
  Tensor c = pool->allocate(pool, t.dtype(), t.shape());
  const size_t bytes = t.nbytes();
  char* dst = static_cast<char*>(c.data());
  const char* src = static_cast<const char*>(t.data());
  if (bytes < (size_t(1) << 20)) {  // no OpenMP region at all: it costs ~0.5 us even when serial
    if (bytes) std::memcpy(dst, src, bytes);
    return c;
  }
  constexpr size_t kPiece = size_t(256) << 10;
  const int64_t pieces = static_cast<int64_t>((bytes + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static)
  for (int64_t p = 0; p < pieces; ++p) {
    const size_t begin = static_cast<size_t>(p) * kPiece;
    std::memcpy(dst + begin, src + begin, std::min(kPiece, bytes - begin));
  }
  return c;
}

// What run_session does differently for tensors and for values of any kind.
void add_to_signature(InputSignature& sig, const Tensor& t) { sig.inputs.emplace_back(t.dtype(), t.shape()); }
void add_to_signature(InputSignature& sig, const AnyValue& v) {
  if (v.is_tensor()) return add_to_signature(sig, v.tensor());
  // A sequence: its length, then its elements; none: a marker no tensor has.
  const int64_t n = v.is_sequence() ? static_cast<int64_t>(v.sequence().size()) : -1;
  sig.inputs.emplace_back(DType::kUndefined, Shape{n});
  if (v.is_sequence())
    for (const Tensor& t : v.sequence().items()) add_to_signature(sig, t);
}

std::vector<Tensor> run_plan(const ExecutionPlan& plan, RunContext& rc, std::vector<Tensor> in) {
  return plan.run(rc, std::move(in));
}
std::vector<AnyValue> run_plan(const ExecutionPlan& plan, RunContext& rc, std::vector<AnyValue> in) {
  return plan.run_any(rc, std::move(in));
}

void copy_out(const std::shared_ptr<BufferPool>& pool, bool constant, Tensor& t) {
  if (constant || !t.owns_storage()) t = copy_from_pool(pool, t);
}
void copy_out(const std::shared_ptr<BufferPool>& pool, bool constant, AnyValue& v) {
  if (v.is_tensor()) {
    Tensor t = v.tensor();
    copy_out(pool, constant, t);
    v = AnyValue(std::move(t));
  } else if (v.is_sequence()) {
    // Every element is copied: an element may share a constant's storage (SequenceConstruct of an
    // initializer), which the caller must not be able to modify.
    std::vector<Tensor> items = v.sequence().items();
    for (Tensor& t : items) copy_out(pool, true, t);
    v = AnyValue(Sequence(v.sequence().elem_type(), std::move(items)));
  }
}

template <typename V>
std::vector<V> run_session(detail::SessionImpl& s, const std::map<std::string, V>& feeds, const RunHooks& hooks) {
  const Graph& g = s.graph;
  if (s.options.intra_op_threads > 0) omp_set_num_threads(s.options.intra_op_threads);
  std::vector<V> inputs = bind_feeds(g, s.path, feeds);

  // Memory pattern: serve this run from an arena block planned for its input signature, or
  // record the run so that the next one with this signature can be.
  RunAllocator alloc(s.pool, s.counters);
  alloc.set_max_tensor_bytes(s.options.max_tensor_bytes);
  InputSignature sig;
  std::shared_ptr<ArenaBlock> block;
  std::shared_ptr<AllocationRecorder> recorder;
  const int num_nodes = static_cast<int>(s.plan->nodes().size());
  if (s.options.memory_pattern && !hooks.on_value) {
    for (const V& t : inputs) add_to_signature(sig, t);
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
      recorder = std::make_shared<AllocationRecorder>(num_nodes);
      alloc.record_into(recorder);
    }
  }
  RunCache cache;
  std::vector<NodeProfile> profile;
  RunContext rc(alloc, cache, s.options.profile ? &profile : nullptr);
  ValueHook observe = [&](int id, const Tensor& produced) {
    if (!s.observed[id]) return Tensor();
    Tensor replacement = hooks.on_value(g.values[id].name, produced);
    if (replacement.defined()) check_replacement(s.path, g.values[id], produced, replacement);
    return replacement;
  };
  if (hooks.on_value) rc.set_value_hook(&observe);
  std::vector<V> result = run_plan(*s.plan, rc, std::move(inputs));
  cache.entries.clear();
  alloc.step()->store(num_nodes);  // releases from now on: escaped
  for (size_t i = 0; i < result.size(); ++i) {
    // An output that is a constant, or that views storage the session does not own (a fed
    // caller buffer, possibly through Reshape/Squeeze views), is returned as a copy: the caller
    // may modify it, and it must outlive the caller's buffer.
    copy_out(s.pool, g.values[g.outputs[i]].constant.has_value(), result[i]);
  }
  if (s.options.profile) {
    std::lock_guard<std::mutex> lock(s.profile_mutex);
    s.last_profile = std::move(profile);
  }
  if (recorder) s.patterns.add_plan(sig, recorder->make_plan());
  if (block) {
    alloc.serve_from(nullptr);
    s.patterns.release(sig, std::move(block));
  }
  return result;
}

}  // namespace

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
    if (r[i].dtype() == DType::kString)
      std::copy(r[i].data_as<std::string>(), r[i].data_as<std::string>() + r[i].numel(), dst.data_as<std::string>());
    else if (r[i].nbytes())
      std::memcpy(dst.data(), r[i].data(), r[i].nbytes());
  }
}

}  // namespace pointrt
