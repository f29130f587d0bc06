#include "io/tensor_compare.h"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "core/common.h"

namespace pointrt {

double element_as_double(const Tensor& t, int64_t i) {
  if (t.dtype() == DType::kFloat16) return half_to_float(t.data_as<uint16_t>()[i]);
  if (t.dtype() == DType::kBFloat16) return bfloat16_to_float(t.data_as<uint16_t>()[i]);
  double r = 0;
  dispatch_all(t.dtype(), "element_as_double", [&](auto tag) {
    using T = decltype(tag);
    r = static_cast<double>(t.data_as<T>()[i]);
  });
  return r;
}

static std::string index_string(const Shape& s, int64_t flat) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? flat % s[d] : 0;
    flat = s[d] ? flat / s[d] : 0;
  }
  return shape_to_string(idx);
}

CompareResult compare_tensors(const Tensor& got, const Tensor& ref, double atol, double rtol) {
  CompareResult r;
  if (got.dtype() != ref.dtype()) {
    r.message = str_cat("element type ", dtype_name(got.dtype()), " but the reference is ", dtype_name(ref.dtype()));
    return r;
  }
  if (got.shape() != ref.shape()) {
    r.message = str_cat("shape ", shape_to_string(got.shape()), " but the reference is ", shape_to_string(ref.shape()));
    return r;
  }
  if (got.dtype() == DType::kString) {  // exact, element by element
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
  bool exact = !is_float_type(got.dtype()) && got.dtype() != DType::kBFloat16;
  int64_t worst = -1;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = element_as_double(got, i), b = element_as_double(ref, i);
    bool same;
    double err;
    if (std::isnan(a) || std::isnan(b)) {
      same = std::isnan(a) && std::isnan(b);
      err = same ? 0 : INFINITY;
    } else if (std::isinf(a) || std::isinf(b)) {
      same = a == b;
      err = same ? 0 : INFINITY;
    } else {
      err = std::fabs(a - b);
      same = exact ? a == b : err <= atol + rtol * std::fabs(b);
      if (std::fabs(b) > 0) r.max_rel_error = std::max(r.max_rel_error, err / std::fabs(b));
    }
    if (err > r.max_abs_error || worst < 0) {
      if (err >= r.max_abs_error) {
        r.max_abs_error = err;
        worst = i;
      }
    }
    if (!same) ++r.mismatches;
  }
  r.ok = r.mismatches == 0;
  std::ostringstream os;
  os << std::setprecision(3) << "max |err| " << r.max_abs_error;
  if (worst >= 0 && got.numel())
    os << " at " << index_string(got.shape(), worst) << " (got " << element_as_double(got, worst) << ", ref "
       << element_as_double(ref, worst) << ")";
  os << ", " << r.mismatches << " of " << got.numel() << (exact ? " differ" : " outside atol+rtol*|ref|");
  if (!exact) os << " (atol " << atol << ", rtol " << rtol << ")";
  r.message = os.str();
  return r;
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
