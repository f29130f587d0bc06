#include "runtime/arena_plan.h"

#include <algorithm>
#include <numeric>

#include "core/common.h"

namespace pointrt {

namespace {
size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
bool lifetimes_intersect(const ArenaRequest& a, const ArenaRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}
}  // namespace

ArenaLayout plan_arena(const std::vector<ArenaRequest>& requests, size_t alignment) {
  const size_t n = requests.size();
  ArenaLayout layout;
  layout.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Largest first (ties: earlier first), so big tensors get the low, reusable offsets.
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return requests[a].bytes > requests[b].bytes; });
  std::vector<size_t> placed;  // indices placed so far, kept sorted by offset
  std::vector<size_t> neighbours;
  for (size_t i : order) {
    const size_t size = align_up(std::max<size_t>(requests[i].bytes, 1), alignment);
    neighbours.clear();
    for (size_t j : placed)
      if (lifetimes_intersect(requests[i], requests[j])) neighbours.push_back(j);  // sorted by offset
    size_t cursor = 0, best = SIZE_MAX, best_gap = SIZE_MAX;
    for (size_t j : neighbours) {
      size_t start = layout.offsets[j];
      if (start > cursor && start - cursor >= size && start - cursor < best_gap) {
        best_gap = start - cursor;
        best = cursor;
      }
      cursor = std::max(cursor, align_up(start + std::max<size_t>(requests[j].bytes, 1), alignment));
    }
    size_t offset = best != SIZE_MAX ? best : cursor;
    layout.offsets[i] = offset;
    layout.total_bytes = std::max(layout.total_bytes, offset + size);
    auto pos = std::upper_bound(placed.begin(), placed.end(), offset,
                                [&](size_t off, size_t j) { return off < layout.offsets[j]; });
    placed.insert(pos, i);
  }
  return layout;
}

std::string check_arena_layout(const std::vector<ArenaRequest>& requests, const ArenaLayout& layout, size_t alignment) {
  if (layout.offsets.size() != requests.size())
    return str_cat("layout has ", layout.offsets.size(), " offsets for ", requests.size(), " requests");
  for (size_t i = 0; i < requests.size(); ++i) {
    if (layout.offsets[i] % alignment)
      return str_cat("request ", i, " at offset ", layout.offsets[i], " is not aligned to ", alignment);
    if (layout.offsets[i] + requests[i].bytes > layout.total_bytes)
      return str_cat("request ", i, " [", layout.offsets[i], ", +", requests[i].bytes, ") ends past the block (",
                     layout.total_bytes, " bytes)");
  }
  for (size_t i = 0; i < requests.size(); ++i)
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (!lifetimes_intersect(requests[i], requests[j]) || !requests[i].bytes || !requests[j].bytes) continue;
      size_t a0 = layout.offsets[i], a1 = a0 + requests[i].bytes, b0 = layout.offsets[j], b1 = b0 + requests[j].bytes;
      if (a0 < b1 && b0 < a1)
        return str_cat("requests ", i, " (steps ", requests[i].first, "-", requests[i].last, ", bytes [", a0, ", ", a1,
                       ")) and ", j, " (steps ", requests[j].first, "-", requests[j].last, ", bytes [", b0, ", ", b1,
                       ")) are live together and overlap");
    }
  return "";
}

}  // namespace pointrt
