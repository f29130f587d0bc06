// Non-temporal (streaming) stores for large outputs: a store that bypasses the caches does not
// read the destination line first, so an output larger than the last-level cache share is written
// at the memory's write bandwidth instead of read and written.
#pragma once

#include <cstdint>

namespace pointrt {

/// Outputs larger than this (bytes) are worth streaming; smaller ones are read again soon from
/// the cache by their reader.
constexpr int64_t kStreamOutputBytes = 24 << 20;

}  // namespace pointrt
