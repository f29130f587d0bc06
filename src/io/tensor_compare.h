// Comparing a result with a reference, and one-line summaries, shared by the CLI, the
// conformance runner and the tests.
#pragma once

#include <string>

#include "pointrt/pointrt.h"

namespace pointrt {

/// How a float tensor's tolerance is judged.
///  - kElementwise: every element within atol + rtol * |ref[i]| (numpy.allclose's rule).
///  - kMagnitude: every element within atol + rtol * max|ref| (the tensor's magnitude), which
///    does not fail float32 rounding noise on elements near zero of a large-valued tensor.
enum class Tolerance { kElementwise, kMagnitude };

struct CompareOptions {
  double atol = 1e-5;
  double rtol = 1e-3;
  Tolerance tolerance = Tolerance::kElementwise;
  /// Accept a reference of another float type (e.g. float64 against a float32 result); values
  /// are always compared in float64. Off: the element types must agree (conformance tests).
  bool any_float_reference = false;
};

struct CompareResult {
  bool ok = false;
  double max_abs_error = 0;       // max |got - ref| (infinity for NaN/inf mismatches)
  double max_rel_error = 0;       // max |got - ref| / |ref| over elements with ref != 0
  double magnitude = 0;           // max |ref| over finite elements
  double error_to_magnitude = 0;  // max_abs_error / magnitude (0 when both are 0)
  double cosine = 1;              // cosine similarity of got and ref as vectors (1 when both are 0)
  int64_t mismatches = 0;         // elements over the tolerance (or different, for exact types)
  int64_t worst_index = -1;       // flat index of the largest error, -1 when none
  std::string worst_at;           // "[0, 3]"
  double worst_got = 0, worst_ref = 0;
  std::string message;  // one line: "max |err| 1.2e-06 (3.1e-07 of max|ref| 3.9) at [0, 3] ..., 0 of 1000 over ..."
};

/// Compare elementwise (NaN equal to NaN, same-signed infinities equal). Integer and bool
/// tensors must match exactly. The shape must agree, and the dtype (see any_float_reference).
CompareResult compare_tensors(const Tensor& got, const Tensor& ref, const CompareOptions& options);
/// Same, with the elementwise rule |got - ref| <= atol + rtol*|ref| and equal dtypes.
CompareResult compare_tensors(const Tensor& got, const Tensor& ref, double atol, double rtol);

/// "float32 [1, 40] min -3.2 max 7.1 mean 0.4 first [0.1, 0.2, ...]"
std::string summarize_tensor(const Tensor& t, int first = 6);

/// Element i converted to double (any numeric dtype; float16 decoded).
double element_as_double(const Tensor& t, int64_t i);

/// "[1, 2, 3]": the multi-index of flat element `flat` in row-major `shape`.
std::string index_string(const Shape& shape, int64_t flat);

}  // namespace pointrt
