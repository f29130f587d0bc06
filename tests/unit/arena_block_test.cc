// ArenaBlock's run-time lifetime check: a planned tensor is served from the block only when its
// bytes overlap no live tensor of that block, whatever the plan said.
#include <gtest/gtest.h>

#include <random>

#include "runtime/memory_pattern.h"

namespace pointrt {
namespace {

std::shared_ptr<MemoryPlan> plan_of(const std::vector<std::pair<size_t, size_t>>& offset_bytes) {
  auto plan = std::make_shared<MemoryPlan>();
  for (size_t i = 0; i < offset_bytes.size(); ++i) {
    PlannedAllocation e;
    e.node = static_cast<int>(i);
    e.offset = offset_bytes[i].first;
    e.bytes = offset_bytes[i].second;
    plan->entries.push_back(e);
    plan->total_bytes = std::max(plan->total_bytes, e.offset + e.bytes);
  }
  return plan;
}

TEST(ArenaBlock, ClaimsOnlyBytesNoLiveTensorHolds) {
  // 0: [0, 64)  1: [64, 128)  2: [32, 96) overlaps both  3: [0, 128) covers both  4: [128, 192)
  ArenaBlock block(plan_of({{0, 64}, {64, 64}, {32, 64}, {0, 128}, {128, 64}}));
  EXPECT_TRUE(block.try_claim(0));
  EXPECT_FALSE(block.try_claim(0));  // already live
  EXPECT_TRUE(block.try_claim(1));   // adjacent, not overlapping
  EXPECT_FALSE(block.try_claim(2));
  EXPECT_FALSE(block.try_claim(3));
  EXPECT_TRUE(block.try_claim(4));
  EXPECT_EQ(block.live_count.load(), 3);
  block.release(0);
  EXPECT_FALSE(block.try_claim(2));  // 1 still holds [64, 96)
  block.release(1);
  EXPECT_TRUE(block.try_claim(2));
  EXPECT_FALSE(block.try_claim(3));
  block.release(2);
  EXPECT_TRUE(block.try_claim(3));
  block.release(3);
  block.release(4);
  EXPECT_EQ(block.live_count.load(), 0);
  block.release(4);  // releasing what is not live changes nothing
  EXPECT_EQ(block.live_count.load(), 0);
}

TEST(ArenaBlock, AgreesWithABruteForceOverlapCheckOnRandomClaims) {
  std::mt19937 rng(7);
  std::vector<std::pair<size_t, size_t>> entries;
  for (int i = 0; i < 200; ++i) entries.emplace_back(rng() % 4096, 1 + rng() % 300);
  ArenaBlock block(plan_of(entries));
  std::vector<bool> live(entries.size(), false);
  for (int step = 0; step < 5000; ++step) {
    int i = static_cast<int>(rng() % entries.size());
    if (live[i]) {
      block.release(i);
      live[i] = false;
      continue;
    }
    bool overlaps = false;
    for (size_t j = 0; j < entries.size(); ++j)
      if (live[j] && entries[j].first < entries[i].first + entries[i].second &&
          entries[i].first < entries[j].first + entries[j].second)
        overlaps = true;
    ASSERT_EQ(block.try_claim(i), !overlaps) << "step " << step << " entry " << i;
    live[i] = !overlaps;
  }
}

}  // namespace
}  // namespace pointrt
