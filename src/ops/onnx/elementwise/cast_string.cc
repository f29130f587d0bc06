#include "ops/onnx/elementwise/cast_string.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>

namespace pointrt::elementwise {

std::string float_to_text(double v, bool single) {
  if (v != v) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto res = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v), std::chars_format::scientific)
                          : std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  const std::string sci(buf, res.ptr);  // "-d.ddde+XX"
  const size_t e = sci.find('e');
  const int exp = std::atoi(sci.c_str() + e + 1);
  std::string mant = sci.substr(0, e), sign;
  if (mant[0] == '-') {
    sign = "-";
    mant.erase(0, 1);
  }
  std::string digits = mant.substr(0, 1) + (mant.size() > 2 ? mant.substr(2) : "");
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    } else {
      if (digits.size() <= static_cast<size_t>(exp) + 1)
        digits.append(static_cast<size_t>(exp) + 1 - digits.size(), '0');
      out = digits.substr(0, exp + 1) + "." +
            (digits.size() > static_cast<size_t>(exp) + 1 ? digits.substr(exp + 1) : "0");
    }
    return sign + out;
  }
  const std::string m = digits.size() > 1 ? digits.substr(0, 1) + "." + digits.substr(1) : digits;
  const int a = exp < 0 ? -exp : exp;
  return sign + m + (exp < 0 ? "e-" : "e+") + (a < 10 ? "0" : "") + std::to_string(a);
}

void cast_to_string(KernelContext& ctx, const Tensor& x) {
  Tensor& y = ctx.output(0, DType::kString, x.shape());
  std::string* out = y.data_as<std::string>();
  const int64_t n = x.numel();
  if (is_half_type(x.dtype()) || x.dtype() == DType::kFloat32 || x.dtype() == DType::kFloat64) {
    const Tensor f = to_float32(x);
    for (int64_t i = 0; i < n; ++i)
      out[i] = f.dtype() == DType::kFloat64 ? float_to_text(f.data_as<double>()[i], false)
                                            : float_to_text(f.data_as<float>()[i], true);
    return;
  }
  if (x.dtype() == DType::kBool) {
    for (int64_t i = 0; i < n; ++i) out[i] = x.data_as<uint8_t>()[i] ? "True" : "False";
    return;
  }
  dispatch_numeric(x.dtype(), ctx.where().c_str(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) out[i] = std::to_string(x.data_as<T>()[i]);
  });
}

namespace {

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n\r\f\v"), e = s.find_last_not_of(" \t\n\r\f\v");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

[[noreturn]] void bad_text(KernelContext& ctx, const std::string& s, int64_t i, DType to) {
  fail(ctx.where(), ": element ", i, " '", s, "' is not a ", dtype_name(to), " value");
}

double parse_float(KernelContext& ctx, const std::string& raw, int64_t i, DType to) {
  const std::string s = trimmed(raw);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) bad_text(ctx, raw, i, to);
  return v;
}

}  // namespace

void cast_from_string(KernelContext& ctx, const Tensor& x, DType to) {
  const std::string* in = x.data_as<std::string>();
  const int64_t n = x.numel();
  Tensor& y = ctx.output(0, to, x.shape());
  if (is_half_type(to)) {
    Tensor f = Tensor::allocate(DType::kFloat32, x.shape());
    for (int64_t i = 0; i < n; ++i) f.data_as<float>()[i] = static_cast<float>(parse_float(ctx, in[i], i, to));
    float32_to_half(f, y);
    return;
  }
  if (to == DType::kBool) {
    for (int64_t i = 0; i < n; ++i) {
      const std::string s = trimmed(in[i]);
      if (s != "True" && s != "False" && s != "1" && s != "0") bad_text(ctx, in[i], i, to);
      y.data_as<uint8_t>()[i] = s == "True" || s == "1";
    }
    return;
  }
  dispatch_numeric(to, ctx.where().c_str(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        y.data_as<T>()[i] = static_cast<T>(parse_float(ctx, in[i], i, to));
      } else {
        const std::string s = trimmed(in[i]);
        T v{};
        const auto r = std::from_chars(s.data() + (s.size() && s[0] == '+'), s.data() + s.size(), v);
        if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) bad_text(ctx, in[i], i, to);
        y.data_as<T>()[i] = v;
      }
    }
  });
}

}  // namespace pointrt::elementwise
