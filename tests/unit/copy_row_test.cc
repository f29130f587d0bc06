// copy_row_bytes: every length from 0 to 300 bytes (each branch, its edges and memcpy beyond
// 256), at several misalignments, copies exactly the row and writes nothing around it.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/copy_row.h"

namespace {

TEST(CopyRow, EveryLengthCopiesExactlyTheRow) {
  constexpr int64_t kGuard = 80;
  for (int64_t bytes = 0; bytes <= 300; ++bytes)
    for (int64_t misalign = 0; misalign < 4; ++misalign) {
      std::vector<uint8_t> src(static_cast<size_t>(bytes + kGuard)), dst(static_cast<size_t>(bytes + 2 * kGuard), 0xAA);
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 37 + 11);
      pointrt::copy_row_bytes(dst.data() + kGuard + misalign, src.data() + misalign, bytes);
      int64_t wrong = 0;
      for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
        const int64_t at = i - kGuard - misalign;
        const uint8_t want = at >= 0 && at < bytes ? src[static_cast<size_t>(at + misalign)] : 0xAA;
        wrong += dst[static_cast<size_t>(i)] != want;
      }
      EXPECT_EQ(wrong, 0) << bytes << " bytes, misaligned by " << misalign;
    }
}

}  // namespace
