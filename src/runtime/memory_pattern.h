// The session's memory pattern: the first run with a given input signature (dtypes and shapes
// of the feeds) records every intermediate's size and lifetime; from those an arena plan is made
// (arena_plan.h) and later runs with the same signature get their intermediates from one arena
// block at the planned offsets.
//
// Allocations are identified by (node index, n-th allocation of that node). A run serves an
// allocation from the arena only when the plan has it with the same byte size and no other
// planned tensor sharing its bytes is still alive in this block (a data-dependent shape or an
// unusual alias can change sizes and lifetimes); anything else comes from the buffer pool, so a
// plan is a fast path, never a correctness assumption. Tensors alive when the recording run
// ended (graph outputs, which the caller keeps) are not planned.
//
// Concurrency: each run takes its own block from the plan's free list (or a new one) and gives
// it back at the end when none of its tensors is alive any more; a block whose tensors escaped
// (still referenced) is left to be freed by its last tensor.
//
// A recording run takes each buffer from the system (not the pool) and frees it when its last
// handle goes, so its footprint is its live set. Sessions whose input shapes keep changing stop
// recording after kMaxPlans signatures and use the pool for new ones.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ops/kernel.h"
#include "runtime/arena_plan.h"
#include "runtime/buffer_pool.h"

namespace pointrt {

struct InputSignature {
  std::vector<std::pair<DType, Shape>> inputs;
  bool operator<(const InputSignature& o) const { return inputs < o.inputs; }
};

struct PlannedAllocation {
  int node = 0, ordinal = 0;
  size_t bytes = 0, offset = 0;
  std::vector<int> shares_bytes_with;  // other entries whose byte ranges overlap this one
};

struct MemoryPlan {
  std::vector<PlannedAllocation> entries;  // sorted by (node, ordinal)
  std::vector<int> node_begin;             // entries of node i: [node_begin[i], node_begin[i + 1])
  size_t total_bytes = 0;
  int find(int node, int ordinal) const;  // entry index, or -1
};

/// One arena block: the planned tensors of one run live in it.
struct ArenaBlock {
  ArenaBlock(std::shared_ptr<const MemoryPlan> p);
  ~ArenaBlock();
  std::shared_ptr<const MemoryPlan> plan;
  char* base = nullptr;
  std::unique_ptr<std::atomic<bool>[]> live;
  std::atomic<int> live_count{0};
};

/// What one recording run saw: per allocation its identity, size and lifetime in node steps.
class AllocationRecorder {
 public:
  explicit AllocationRecorder(int num_nodes) : num_nodes_(num_nodes) {}
  int add(int node, int ordinal, size_t bytes);  // returns the record index
  void released(int index, int step);
  /// Plan from the records of a finished run (tensors still alive are left out).
  std::shared_ptr<MemoryPlan> make_plan();

 private:
  struct Record {
    int node, ordinal;
    size_t bytes;
    int last = -1;
    bool released = false;
  };
  int num_nodes_;
  std::mutex mutex_;
  std::vector<Record> records_;
};

/// Counters shared by a session's runs.
struct MemoryCounters {
  std::atomic<size_t> arena_allocations{0}, pool_allocations{0};
};

/// The allocator of one run: pool only, pool while recording, or arena with pool fallback.
class RunAllocator : public Allocator {
 public:
  RunAllocator(std::shared_ptr<BufferPool> pool, MemoryCounters& counters)
      : pool_(std::move(pool)), counters_(counters) {}
  void record_into(std::shared_ptr<AllocationRecorder> r) { recorder_ = std::move(r); }
  void serve_from(std::shared_ptr<ArenaBlock> b) { block_ = std::move(b); }
  /// The node about to run; allocations are attributed to it.
  void begin_node(int node) override {
    node_ = node;
    ordinal_ = 0;
    if (recorder_) step_->store(node);
  }
  /// Step counter read by recording deleters (node index; num_nodes once the run is over).
  std::shared_ptr<std::atomic<int>> step() { return step_; }
  Tensor allocate(DType dtype, const Shape& shape) override;

 private:
  std::shared_ptr<BufferPool> pool_;
  MemoryCounters& counters_;
  std::shared_ptr<AllocationRecorder> recorder_;
  std::shared_ptr<ArenaBlock> block_;
  std::shared_ptr<std::atomic<int>> step_ = std::make_shared<std::atomic<int>>(0);
  int node_ = 0, ordinal_ = 0;
};

/// Plans per input signature and their free blocks (behind one mutex, touched twice per run).
class MemoryPatterns {
 public:
  /// Whether a run with an unplanned signature should record (false once kMaxPlans are made).
  bool should_record();
  /// A block for a run with this signature, or null when there is no plan yet.
  std::shared_ptr<ArenaBlock> acquire(const InputSignature& sig, bool* first_use);
  void release(const InputSignature& sig, std::shared_ptr<ArenaBlock> block);
  void add_plan(const InputSignature& sig, std::shared_ptr<const MemoryPlan> plan);
  size_t num_plans();
  size_t largest_plan_bytes();

 private:
  struct Entry {
    std::shared_ptr<const MemoryPlan> plan;
    std::vector<std::shared_ptr<ArenaBlock>> free_blocks;
    bool used = false;
  };
  static constexpr size_t kMaxPlans = 8, kMaxFreeBlocks = 2;
  std::mutex mutex_;
  std::map<InputSignature, Entry> plans_;
};

}  // namespace pointrt
