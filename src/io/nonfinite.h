// NaN/Inf in inputs: a point cloud with NaN coordinates runs and gives confident nonsense, so
// inputs are scanned and, by policy, refused, reported or allowed (`--nonfinite`, Python's
// Session.run(nonfinite=...)).
#pragma once

#include <string>

#include "pointrt/pointrt.h"

namespace pointrt {

enum class NonfinitePolicy { kError, kWarn, kAllow };

/// "error", "warn" or "allow"; Error naming `what` otherwise.
NonfinitePolicy parse_nonfinite_policy(const std::string& text, const std::string& what);

struct NonfiniteCount {
  int64_t count = 0;   // NaN or +-Inf elements
  int64_t first = -1;  // flat index of the first, -1 if none
};
/// Counts in float32/float64/float16/bfloat16 tensors (other dtypes: none).
NonfiniteCount count_nonfinite(const Tensor& t);

/// "[0, 4, 1]": the multi-index of flat element `flat` in `shape`.
std::string multi_index(const Shape& shape, int64_t flat);

/// Apply `policy` to the input `name` (`source` says where it came from, may be ""): throws Error
/// (kError) or returns the warning text (kWarn; "" when every value is finite or on kAllow).
std::string check_nonfinite(NonfinitePolicy policy, const std::string& name, const std::string& source,
                            const Tensor& t);

}  // namespace pointrt
