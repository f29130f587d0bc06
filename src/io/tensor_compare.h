// Comparing a result with a reference, and one-line summaries, shared by the CLI, the
// conformance runner and the tests.
#pragma once

#include <string>

#include "pointrt/pointrt.h"

namespace pointrt {

struct CompareResult {
  bool ok = false;
  double max_abs_error = 0;
  double max_rel_error = 0;
  int64_t mismatches = 0;
  std::string message;  // one line: "max |err| 1.2e-06 at [0, 3], 0 of 1000 outside atol+rtol*|ref|"
};

/// |got - ref| <= atol + rtol*|ref| elementwise (NaN equal to NaN, same-signed infinities equal).
/// Integer and bool tensors must match exactly. dtype and shape must agree.
CompareResult compare_tensors(const Tensor& got, const Tensor& ref, double atol, double rtol);

/// "float32 [1, 40] min -3.2 max 7.1 mean 0.4 first [0.1, 0.2, ...]"
std::string summarize_tensor(const Tensor& t, int first = 6);

/// Element i converted to double (any numeric dtype; float16 decoded).
double element_as_double(const Tensor& t, int64_t i);

}  // namespace pointrt
