// A pool of aligned buffers reused across runs, so steady-state runs do not go back to the
// system allocator (large mallocs are mmaps whose pages fault in on every run).
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "pointrt/pointrt.h"

namespace pointrt {

class BufferPool {
 public:
  /// A tensor whose storage returns to `self` when its last handle is dropped. The storage
  /// outlives the pool safely (freed directly if the pool is gone).
  Tensor allocate(const std::shared_ptr<BufferPool>& self, DType dtype, const Shape& shape);
  ~BufferPool();

 private:
  void give_back(size_t bytes, void* p);
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;  // capacity -> buffer
  size_t cached_bytes_ = 0;
};

}  // namespace pointrt
