#include "io/tensor_compare.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>

#include "core/common.h"
#include "core/float8.h"
#include "core/subbyte.h"

namespace pointrt {

double element_as_double(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kFloat16) return half_to_float(t.data_as<uint16_t>()[i]);
  if (t.dtype() == DType::kBFloat16) return bfloat16_to_float(t.data_as<uint16_t>()[i]);
  if (is_float8_type(t.dtype())) return float8_to_float(t.data_as<uint8_t>()[i], t.dtype());
  if (t.dtype() == DType::kInt4) return t.data_as<int8_t>()[i];  // stored unpacked, sign-extended
  if (t.dtype() == DType::kUInt4) return t.data_as<uint8_t>()[i];
  double r = 0;
  dispatch_all(t.dtype(), "element_as_double", [&](auto tag) {
    using T = decltype(tag);
    r = static_cast<double>(t.data_as<T>()[i]);
  });
  return r;
}

std::string index_string(const Shape& s, int64_t flat) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? flat % s[d] : 0;
    flat = s[d] ? flat / s[d] : 0;
  }
  return shape_to_string(idx);
}

namespace {

// Digits that print a value of this type exactly enough to tell neighbours apart.
int full_digits(DType t) {
  if (t == DType::kFloat64) return std::numeric_limits<double>::max_digits10;
  if (t == DType::kFloat16) return 5;
  return std::numeric_limits<float>::max_digits10;
}

std::string type_problem(const Tensor& got, const Tensor& ref, const CompareOptions& o) {
  bool both_float = is_float_type(got.dtype()) && is_float_type(ref.dtype());
  if (got.dtype() != ref.dtype() && !(o.any_float_reference && both_float))
    return str_cat("element type ", dtype_name(got.dtype()), " but the reference is ", dtype_name(ref.dtype()));
  if (got.shape() != ref.shape())
    return str_cat("shape ", shape_to_string(got.shape()), " but the reference is ", shape_to_string(ref.shape()));
  return "";
}

// Error of one element pair: infinity when NaN or infinities disagree, 0 when they agree.
double element_error(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
  if (std::isinf(a) || std::isinf(b)) return a == b ? 0 : INFINITY;
  return std::fabs(a - b);
}

// Strings compare exactly, element by element.
CompareResult compare_strings(const Tensor& got, const Tensor& ref) {
  CompareResult r;
  const std::string *g = got.data_as<std::string>(), *e = ref.data_as<std::string>();
  int64_t first = -1;
  for (int64_t i = 0; i < got.numel(); ++i)
    if (g[i] != e[i]) {
      ++r.mismatches;
      if (first < 0) first = i;
    }
  r.ok = r.mismatches == 0;
  r.message = r.ok ? str_cat("all ", got.numel(), " strings equal")
                   : str_cat(r.mismatches, " of ", got.numel(), " strings differ, first at ",
                             index_string(got.shape(), first), " (got '", g[first], "', ref '", e[first], "')");
  return r;
}

}  // namespace

CompareResult compare_tensors(const Tensor& got, const Tensor& ref, const CompareOptions& o) {
  CompareResult r;
  r.message = type_problem(got, ref, o);
  if (!r.message.empty()) return r;
  if (got.dtype() == DType::kString) return compare_strings(got, ref);
  // float8 is exact too: one code apart is 6-25% of the value, beyond any float tolerance, and
  // the decoded values compare NaN with NaN, so the several NaN codes of E5M2 agree.
  const bool exact = !is_float_type(got.dtype()) && got.dtype() != DType::kBFloat16;
  const int64_t n = got.numel();
  // Pass 1: the magnitude, which the magnitude rule needs before judging elements.
  double dot = 0, norm_got = 0, norm_ref = 0;
  for (int64_t i = 0; i < n; ++i) {
    double a = element_as_double(got, i), b = element_as_double(ref, i);
    if (std::isfinite(b)) r.magnitude = std::max(r.magnitude, std::fabs(b));
    if (std::isfinite(a) && std::isfinite(b)) {
      dot += a * b;
      norm_got += a * a;
      norm_ref += b * b;
    }
  }
  const double magnitude_bound = o.atol + o.rtol * r.magnitude;
  for (int64_t i = 0; i < n; ++i) {
    double a = element_as_double(got, i), b = element_as_double(ref, i);
    double err = element_error(a, b);
    double bound = o.tolerance == Tolerance::kMagnitude ? magnitude_bound : o.atol + o.rtol * std::fabs(b);
    bool same = err == 0 || (!exact && err <= bound);
    if (std::isfinite(b) && b != 0) r.max_rel_error = std::max(r.max_rel_error, err / std::fabs(b));
    if (r.worst_index < 0 || err > r.max_abs_error) {
      r.max_abs_error = err;
      r.worst_index = i;
    }
    if (!same) ++r.mismatches;
  }
  if (r.magnitude > 0)
    r.error_to_magnitude = r.max_abs_error / r.magnitude;
  else if (r.max_abs_error > 0)
    r.error_to_magnitude = INFINITY;
  if (norm_got > 0 && norm_ref > 0)
    r.cosine = dot / (std::sqrt(norm_got) * std::sqrt(norm_ref));
  else if (norm_got != norm_ref)
    r.cosine = 0;  // one of them is all zeros, the other is not
  r.ok = r.mismatches == 0;
  std::ostringstream os;
  os << std::setprecision(3) << "max |err| " << r.max_abs_error;
  if (r.worst_index >= 0) {
    r.worst_at = index_string(got.shape(), r.worst_index);
    r.worst_got = element_as_double(got, r.worst_index);
    r.worst_ref = element_as_double(ref, r.worst_index);
    os << " at " << r.worst_at << std::setprecision(full_digits(got.dtype())) << " (got " << r.worst_got
       << std::setprecision(full_digits(ref.dtype())) << ", ref " << r.worst_ref << ")" << std::setprecision(3);
  }
  if (!exact)
    os << ", " << r.error_to_magnitude << " of max|ref| " << r.magnitude << ", cosine " << std::setprecision(9)
       << r.cosine << std::setprecision(3);
  os << ", " << r.mismatches << " of " << n;
  if (exact)
    os << " differ";
  else
    os << (o.tolerance == Tolerance::kMagnitude ? " over atol+rtol*max|ref|" : " over atol+rtol*|ref|") << " (atol "
       << o.atol << ", rtol " << o.rtol << ")";
  if (got.dtype() != ref.dtype()) os << " (reference " << dtype_name(ref.dtype()) << ", compared in float64)";
  r.message = os.str();
  return r;
}

CompareResult compare_tensors(const Tensor& got, const Tensor& ref, double atol, double rtol) {
  CompareOptions o;
  o.atol = atol;
  o.rtol = rtol;
  return compare_tensors(got, ref, o);
}
std::string summarize_tensor(const Tensor& t, int first) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << " " << shape_to_string(t.shape());
  int64_t n = t.numel();
  if (n == 0 || t.dtype() == DType::kString) return os.str();
  double mn = INFINITY, mx = -INFINITY, sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = element_as_double(t, i);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    sum += v;
  }
  os << std::setprecision(5) << " min " << mn << " max " << mx << " mean " << sum / n << " first [";
  for (int64_t i = 0; i < std::min<int64_t>(first, n); ++i) os << (i ? ", " : "") << element_as_double(t, i);
  os << (n > first ? ", ...]" : "]");
  return os.str();
}

}  // namespace pointrt
