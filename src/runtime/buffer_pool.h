// A pool of aligned buffers reused across runs, so steady-state runs do not go back to the
// system allocator (large mallocs are mmaps whose pages fault in on every run).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "pointrt/pointrt.h"

namespace pointrt {

/// 64-byte aligned storage. Buffers of 1 MiB and more are their own mmap, so freeing one gives
/// its pages back to the system at once (malloc may keep freed heap memory mapped, and peak RSS
/// counts it). free_buffer needs the size given to alloc_buffer. Null on failure.
void* alloc_buffer(size_t bytes);
void free_buffer(void* p, size_t bytes);

class BufferPool {
 public:
  /// A tensor whose storage returns to `self` when its last handle is dropped. The storage
  /// outlives the pool safely (freed directly if the pool is gone).
  Tensor allocate(const std::shared_ptr<BufferPool>& self, DType dtype, const Shape& shape);
  /// Free every cached (unused) buffer, e.g. once the runs are served from an arena block.
  void trim();
  ~BufferPool();

 private:
  void give_back(size_t bytes, void* p);
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // capacity -> buffer
  size_t cached_bytes_ = 0;
};

}  // namespace pointrt
