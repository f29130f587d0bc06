#include "runtime/buffer_pool.h"

#include <sys/mman.h>

#include <cstdlib>

#include "core/checked_size.h"
#include "core/common.h"

namespace pointrt {

namespace {
constexpr size_t kMaxCachedBytes = size_t(4) << 30;
constexpr size_t kMmapBytes = size_t(1) << 20;
constexpr size_t kHugePageBytes = size_t(4) << 20;
size_t round_capacity(size_t bytes) { return ((bytes + 4095) / 4096) * 4096; }
}  // namespace

void* alloc_buffer(size_t bytes) {
  if (bytes < kMmapBytes) return std::aligned_alloc(64, round_capacity(bytes ? bytes : 1));
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  // Large tensors in 2 MiB pages where the system allows them (THP "madvise" mode, as numpy
  // does for its arrays): streaming kernels then run without a TLB miss and a stopped hardware
  // prefetch every 4 KiB. A refusal only leaves 4 KiB pages.
  if (bytes >= kHugePageBytes) madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

void free_buffer(void* p, size_t bytes) {
  if (!p) return;
  if (bytes < kMmapBytes)
    std::free(p);
  else
    munmap(p, bytes);
}

Tensor BufferPool::allocate(const std::shared_ptr<BufferPool>& self, DType dtype, const Shape& shape) {
  size_t bytes = checked_nbytes(dtype, shape, "cannot allocate a tensor");
  size_t cap = round_capacity(bytes ? bytes : 1);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // Best fit within 2x, so a small request does not pin a huge buffer.
    auto it = free_.lower_bound(cap);
    if (it != free_.end() && it->first <= 2 * cap) {
      cap = it->first;
      p = it->second;
      cached_bytes_ -= cap;
      free_.erase(it);
    }
  }
  if (!p) {
    p = alloc_buffer(cap);
    if (!p)
      fail("out of memory allocating ", format_bytes(bytes), " for a ", dtype_name(dtype), " ", shape_to_string(shape),
           " tensor");
  }
  std::weak_ptr<BufferPool> weak = self;
  std::shared_ptr<void> owner(p, [weak, cap](void* q) {
    if (auto pool = weak.lock())
      pool->give_back(cap, q);
    else
      free_buffer(q, cap);
  });
  return Tensor::wrap_shared(dtype, shape, std::move(owner), p);
}

void BufferPool::give_back(size_t cap, void* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cached_bytes_ + cap > kMaxCachedBytes) {
    free_buffer(p, cap);
    return;
  }
  free_.emplace(cap, p);
  cached_bytes_ += cap;
}

void BufferPool::trim() {
  std::multimap<size_t, void*> drop;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    drop.swap(free_);
    cached_bytes_ = 0;
  }
  for (auto& [cap, p] : drop) free_buffer(p, cap);
}

BufferPool::~BufferPool() {
  for (auto& [cap, p] : free_) free_buffer(p, cap);
}

}  // namespace pointrt
