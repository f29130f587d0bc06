// Offsets of intermediate tensors inside one arena block, planned from their sizes and
// lifetimes (ONNX Runtime's "memory pattern"): two tensors whose lifetimes intersect never share
// bytes; tensors that are never live together may.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace pointrt {

constexpr size_t kArenaAlignment = 64;

/// One tensor to place: its size and its lifetime as an inclusive range of execution steps
/// (the node that allocates it .. the node after which its last reader has run).
struct ArenaRequest {
  size_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct ArenaLayout {
  std::vector<size_t> offsets;  // one per request, multiples of the alignment
  size_t total_bytes = 0;       // size of the block that holds them all
};

/// Greedy best fit by size: requests are placed largest first, each in the smallest gap (between
/// already placed requests whose lifetimes intersect its own) that holds it, else above them all.
ArenaLayout plan_arena(const std::vector<ArenaRequest>& requests, size_t alignment = kArenaAlignment);

/// The plan's invariants: every offset aligned, every request inside the block, and no two
/// requests with intersecting lifetimes sharing a byte. Returns "" when they hold, else the first
/// violation in words.
std::string check_arena_layout(const std::vector<ArenaRequest>& requests, const ArenaLayout& layout,
                               size_t alignment = kArenaAlignment);

}  // namespace pointrt
