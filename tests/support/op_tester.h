// The operator tests' shared checks: an optimised kernel's result against its reference within an
// explicit tolerance, and the awkward sizes around a kernel's tile. Seeded random tensors are in
// random.h, error expectations in expect_error.h.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/common.h"
#include "io/tensor_compare.h"
#include "pointrt/pointrt.h"

namespace pointrt::test {

/// How close got must be to want, element by element. Float types (float32/64/16, bfloat16):
/// |got - want| <= atol + rtol * |want|; every other type (integers, bool, float8 codes):
/// |got - want| <= int_atol (0: exact). A NaN matches a NaN and an infinity the same infinity,
/// unless `finite`: then every got element must be finite.
struct Tol {
  double atol = 0;
  double rtol = 0;
  double int_atol = 0;
  bool finite = false;

  /// Integer results may be off by `v` (e.g. truncation of x.9999 against x.0).
  Tol with_int_atol(double v) const {
    Tol t = *this;
    t.int_atol = v;
    return t;
  }
  /// NaN or an infinity in got never matches, not even the same value in want.
  Tol finite_only() const {
    Tol t = *this;
    t.finite = true;
    return t;
  }
};

namespace detail {

// Whether got matches want under `tol`; `exact`: the type compares with int_atol.
inline bool values_close(double got, double want, const Tol& tol, bool exact) {
  if (tol.finite && !std::isfinite(got)) return false;
  if (!tol.finite && ((std::isnan(got) && std::isnan(want)) || got == want)) return true;
  const double bound = exact ? tol.int_atol : tol.atol + tol.rtol * std::fabs(want);
  return std::fabs(got - want) <= bound;
}

// Checks n elements read through got(i) and want(i) (doubles), naming the first failures.
template <typename Got, typename Want>
void expect_values_close(int64_t n, Got got, Want want, const Tol& tol, bool exact, const std::string& what,
                         const Shape& shape) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double g = got(i), w = want(i);
    if (values_close(g, w, tol, exact)) continue;
    if (++bad <= 5) {
      std::ostringstream os;
      os.precision(std::numeric_limits<double>::max_digits10);
      os << what << ": element " << i << " " << index_string(shape, i) << " got " << g << " want " << w << " (atol "
         << tol.atol << ", rtol " << tol.rtol << ", int_atol " << tol.int_atol << (tol.finite ? ", finite" : "") << ")";
      ADD_FAILURE() << os.str();
    }
  }
  if (bad > 5) ADD_FAILURE() << what << ": " << bad << " of " << n << " elements differ";
}

}  // namespace detail

/// Expects got (the optimised result) to match want (the reference): the same dtype and shape,
/// every element within `tol`; the first five failing elements are reported with `what`.
inline void expect_close(const Tensor& got, const Tensor& want, const Tol& tol, const std::string& what = "") {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const DType d = got.dtype();
  if (d == DType::kString) {
    for (int64_t i = 0; i < got.numel(); ++i)
      EXPECT_EQ(got.data_as<std::string>()[i], want.data_as<std::string>()[i]) << what << ": element " << i;
    return;
  }
  const bool exact = !is_float_type(d) && d != DType::kBFloat16;
  detail::expect_values_close(
      got.numel(), [&](int64_t i) { return element_as_double(got, i); },
      [&](int64_t i) { return element_as_double(want, i); }, tol, exact, what, got.shape());
}

/// The same for float vectors (float rules of `tol`).
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, const Tol& tol,
                         const std::string& what = "") {
  ASSERT_EQ(got.size(), want.size()) << what;
  const int64_t n = static_cast<int64_t>(got.size());
  detail::expect_values_close(
      n, [&](int64_t i) { return double(got[static_cast<size_t>(i)]); },
      [&](int64_t i) { return double(want[static_cast<size_t>(i)]); }, tol, false, what, Shape{n});
}

/// The sizes where a kernel working in tiles of `tile` tends to break: 0, 1, a small odd size,
/// tile - 1, tile and tile + 1 (ascending, without repeats).
inline std::vector<int64_t> awkward_sizes(int64_t tile) {
  std::vector<int64_t> s = {0, 1, 3, tile - 1, tile, tile + 1};
  s.erase(std::remove_if(s.begin(), s.end(), [](int64_t v) { return v < 0; }), s.end());
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

}  // namespace pointrt::test
