#include "runtime/memory_pattern.h"

#include <algorithm>

#include "core/checked_size.h"

namespace pointrt {

int MemoryPlan::find(int node, int ordinal) const {
  if (node < 0 || node + 1 >= static_cast<int>(node_begin.size())) return -1;
  int i = node_begin[node] + ordinal;
  return i < node_begin[node + 1] ? i : -1;
}

ArenaBlock::ArenaBlock(std::shared_ptr<const MemoryPlan> p) : plan(std::move(p)) {
  base = static_cast<char*>(alloc_buffer(plan->total_bytes));
  if (!base) fail("out of memory allocating a ", plan->total_bytes, "-byte arena block");
  live.reset(new std::atomic<bool>[plan->entries.size()]);
  for (size_t i = 0; i < plan->entries.size(); ++i) live[i].store(false);
}

ArenaBlock::~ArenaBlock() { free_buffer(base, plan->total_bytes); }

int AllocationRecorder::add(int node, int ordinal, size_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_.push_back(Record{node, ordinal, bytes});
  return static_cast<int>(records_.size()) - 1;
}

void AllocationRecorder::released(int index, int step) {
  std::lock_guard<std::mutex> lock(mutex_);
  records_[index].released = true;
  records_[index].last = step;
}

std::shared_ptr<MemoryPlan> AllocationRecorder::make_plan() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const Record*> kept;
  for (const Record& r : records_)
    if (r.released && r.last < num_nodes_ && r.bytes > 0) kept.push_back(&r);
  std::sort(kept.begin(), kept.end(), [](const Record* a, const Record* b) {
    return a->node != b->node ? a->node < b->node : a->ordinal < b->ordinal;
  });
  auto plan = std::make_shared<MemoryPlan>();
  std::vector<ArenaRequest> requests;
  for (const Record* r : kept) {
    PlannedAllocation e;
    e.node = r->node;
    e.ordinal = r->ordinal;
    e.bytes = r->bytes;
    plan->entries.push_back(e);
    requests.push_back(ArenaRequest{r->bytes, r->node, std::max(r->node, r->last)});
  }
  // Entries must be addressable as node_begin[node] + ordinal: a node whose kept ordinals are
  // not 0..k-1 (one of its tensors escaped) keeps only its leading run of ordinals.
  std::vector<PlannedAllocation> dense;
  std::vector<ArenaRequest> dense_requests;
  plan->node_begin.assign(num_nodes_ + 1, 0);
  int node = -1, expected = 0;
  for (size_t i = 0; i < plan->entries.size(); ++i) {
    const auto& e = plan->entries[i];
    if (e.node != node) node = e.node, expected = 0;
    if (e.ordinal != expected) {
      expected = -1;
      continue;
    }
    ++expected;
    dense.push_back(e);
    dense_requests.push_back(requests[i]);
  }
  plan->entries = std::move(dense);
  for (const auto& e : plan->entries) ++plan->node_begin[e.node + 1];
  for (int i = 0; i < num_nodes_; ++i) plan->node_begin[i + 1] += plan->node_begin[i];
  ArenaLayout layout = plan_arena(dense_requests);
  plan->total_bytes = layout.total_bytes;
  for (size_t i = 0; i < plan->entries.size(); ++i) plan->entries[i].offset = layout.offsets[i];
  // Which entries share bytes (for the run-time check that the planned lifetimes still hold).
  std::vector<size_t> by_offset(plan->entries.size());
  for (size_t i = 0; i < by_offset.size(); ++i) by_offset[i] = i;
  std::sort(by_offset.begin(), by_offset.end(),
            [&](size_t a, size_t b) { return plan->entries[a].offset < plan->entries[b].offset; });
  for (size_t a = 0; a < by_offset.size(); ++a) {
    auto& ea = plan->entries[by_offset[a]];
    size_t end = ea.offset + ea.bytes;
    for (size_t b = a + 1; b < by_offset.size() && plan->entries[by_offset[b]].offset < end; ++b) {
      ea.shares_bytes_with.push_back(static_cast<int>(by_offset[b]));
      plan->entries[by_offset[b]].shares_bytes_with.push_back(static_cast<int>(by_offset[a]));
    }
  }
  return plan;
}

Tensor RunAllocator::allocate(DType dtype, const Shape& shape) {
  int ordinal = ordinal_++;
  size_t bytes = checked_nbytes(dtype, shape, "cannot allocate a tensor");
  if (block_) {
    int i = block_->plan->find(node_, ordinal);
    if (i >= 0 && block_->plan->entries[i].bytes == bytes && !block_->live[i].load()) {
      const PlannedAllocation& e = block_->plan->entries[i];
      bool clear = std::none_of(e.shares_bytes_with.begin(), e.shares_bytes_with.end(),
                                [&](int j) { return block_->live[j].load(); });
      if (clear) {
        block_->live[i].store(true);
        block_->live_count.fetch_add(1);
        counters_.arena_allocations.fetch_add(1, std::memory_order_relaxed);
        std::shared_ptr<ArenaBlock> block = block_;
        void* p = block->base + e.offset;
        std::shared_ptr<void> owner(p, [block, i](void*) {
          block->live[i].store(false);
          block->live_count.fetch_sub(1);
        });
        return Tensor::wrap_shared(dtype, shape, std::move(owner), p);
      }
    }
  }
  counters_.pool_allocations.fetch_add(1, std::memory_order_relaxed);
  if (!recorder_) return pool_->allocate(pool_, dtype, shape);
  // Recording: each buffer straight from the system and back when its last handle goes (noting
  // the node running at that moment), so the recording run's footprint is its live set, not
  // the pool's collection of every size it met.
  int index = recorder_->add(node_, ordinal, bytes);
  size_t cap = bytes ? bytes : 1;
  void* p = alloc_buffer(cap);
  if (!p)
    fail("out of memory allocating ", bytes, " bytes for a ", dtype_name(dtype), " ", shape_to_string(shape),
         " tensor");
  std::shared_ptr<void> owner(p, [rec = recorder_, step = step_, index, cap](void* q) {
    rec->released(index, step->load());
    free_buffer(q, cap);
  });
  return Tensor::wrap_shared(dtype, shape, std::move(owner), p);
}

bool MemoryPatterns::should_record() {
  std::lock_guard<std::mutex> lock(mutex_);
  return plans_.size() < kMaxPlans;
}

std::shared_ptr<ArenaBlock> MemoryPatterns::acquire(const InputSignature& sig, bool* first_use) {
  std::shared_ptr<const MemoryPlan> plan;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = plans_.find(sig);
    if (it == plans_.end()) return nullptr;
    Entry& e = it->second;
    *first_use = !e.used;
    e.used = true;
    if (!e.free_blocks.empty()) {
      auto b = std::move(e.free_blocks.back());
      e.free_blocks.pop_back();
      return b;
    }
    plan = e.plan;
  }
  return std::make_shared<ArenaBlock>(plan);  // allocated outside the lock
}

void MemoryPatterns::release(const InputSignature& sig, std::shared_ptr<ArenaBlock> block) {
  if (!block || block->live_count.load() != 0) return;  // escaped tensors keep it; it frees itself
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(sig);
  if (it == plans_.end() || it->second.plan != block->plan || it->second.free_blocks.size() >= kMaxFreeBlocks) return;
  it->second.free_blocks.push_back(std::move(block));
}

void MemoryPatterns::add_plan(const InputSignature& sig, std::shared_ptr<const MemoryPlan> plan) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A concurrent first run planned it already, or shapes vary from run to run (point clouds of
  // different sizes): past kMaxPlans signatures the pool serves new ones.
  if (plans_.count(sig) || plans_.size() >= kMaxPlans) return;
  Entry e;
  e.plan = std::move(plan);
  plans_.emplace(sig, std::move(e));
}

size_t MemoryPatterns::num_plans() {
  std::lock_guard<std::mutex> lock(mutex_);
  return plans_.size();
}

size_t MemoryPatterns::largest_plan_bytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t m = 0;
  for (const auto& [sig, e] : plans_) m = std::max(m, e.plan->total_bytes);
  return m;
}

}  // namespace pointrt
