// Scoped OpenMP thread count of the calling thread.
#pragma once

#include <omp.h>

namespace pointrt {

/// Sets the calling thread's OpenMP thread count (a per-thread setting: other threads and
/// sessions are unaffected) for the scope's lifetime and restores it after; 0 changes nothing.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int threads) : saved_(omp_get_max_threads()), changed_(threads > 0) {
    if (changed_) omp_set_num_threads(threads);
  }
  ~ScopedOmpThreads() {
    if (changed_) omp_set_num_threads(saved_);
  }
  ScopedOmpThreads(const ScopedOmpThreads&) = delete;
  ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

 private:
  int saved_;
  bool changed_;
};

}  // namespace pointrt
