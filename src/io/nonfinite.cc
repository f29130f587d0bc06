#include "io/nonfinite.h"

#include <cmath>

#include "core/common.h"

namespace pointrt {

NonfinitePolicy parse_nonfinite_policy(const std::string& text, const std::string& what) {
  if (text == "error") return NonfinitePolicy::kError;
  if (text == "warn") return NonfinitePolicy::kWarn;
  if (text == "allow") return NonfinitePolicy::kAllow;
  fail(what, ": '", text, "' is not one of error, warn, allow");
}

namespace {
template <typename T, typename ToFloat>
NonfiniteCount count_in(const T* p, int64_t n, ToFloat to_float) {
  NonfiniteCount c;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(to_float(p[i]))) {
      if (c.count++ == 0) c.first = i;
    }
  return c;
}
}  // namespace

NonfiniteCount count_nonfinite(const Tensor& t) {
  if (!t.data()) return {};
  switch (t.dtype()) {
    case DType::kFloat32: return count_in(t.data_as<float>(), t.numel(), [](float v) { return v; });
    case DType::kFloat64: return count_in(t.data_as<double>(), t.numel(), [](double v) { return v; });
    case DType::kFloat16: return count_in(t.data_as<uint16_t>(), t.numel(), half_to_float);
    default: return {};
  }
}

std::string multi_index(const Shape& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    int64_t d = std::max<int64_t>(shape[k], 1);
    idx[k] = flat % d;
    flat /= d;
  }
  return shape_to_string(idx);
}

std::string check_nonfinite(NonfinitePolicy policy, const std::string& name, const std::string& source,
                            const Tensor& t) {
  if (policy == NonfinitePolicy::kAllow) return "";
  NonfiniteCount c = count_nonfinite(t);
  if (c.count == 0) return "";
  std::string what = str_cat("input '", name, "'", source.empty() ? "" : " (" + source + ")", ": ", c.count, " of ",
                             t.numel(), " values are NaN or infinite, the first at ", multi_index(t.shape(), c.first));
  if (policy == NonfinitePolicy::kError) fail(what, " (nonfinite policy 'error')");
  return what + "; the results may be meaningless (policy 'error' refuses such inputs, 'allow' silences this)";
}

}  // namespace pointrt
