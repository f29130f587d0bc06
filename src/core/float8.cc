#include "core/float8.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace pointrt {
namespace {

struct Format {
  int man_bits, bias;
  bool ieee_specials;  // E5M2: exponent all ones is inf / NaN
  bool unsigned_zero;  // FNUZ: 0x80 is the only NaN
};

Format format_of(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FN: return {3, 7, false, false};
    case DType::kFloat8E4M3FNUZ: return {3, 8, false, true};
    case DType::kFloat8E5M2: return {2, 15, true, false};
    default: return {2, 16, false, true};  // kFloat8E5M2FNUZ
  }
}

bool is_nan_code(uint8_t c, const Format& f) {
  if (f.unsigned_zero) return c == 0x80;
  const int mag = c & 0x7f, exp_bits = 7 - f.man_bits, emax = (1 << exp_bits) - 1;
  const int e = mag >> f.man_bits, m = mag & ((1 << f.man_bits) - 1);
  if (f.ieee_specials) return e == emax && m != 0;
  return mag == 0x7f;  // E4M3FN: S.1111.111
}

bool is_inf_code(uint8_t c, const Format& f) { return f.ieee_specials && (c & 0x7f) == 0x7c; }

// The magnitude of a finite non-negative code 0 .. 0x7f.
double magnitude(int mag, const Format& f) {
  const int e = mag >> f.man_bits, m = mag & ((1 << f.man_bits) - 1);
  const double frac = static_cast<double>(m) / (1 << f.man_bits);
  return e == 0 ? std::ldexp(frac, 1 - f.bias) : std::ldexp(1 + frac, e - f.bias);
}

// Finite non-negative magnitudes, ascending by code (they increase with the code).
struct Table {
  std::array<double, 128> value{};
  int count = 0;  // codes 0 .. count-1 are finite
};

const Table& table_of(DType t) {
  static const auto make = [](DType d) {
    const Format f = format_of(d);
    Table tb;
    for (int c = 0; c < 128; ++c) {
      if (is_nan_code(static_cast<uint8_t>(c), f) || is_inf_code(static_cast<uint8_t>(c), f)) break;
      tb.value[c] = magnitude(c, f);
      tb.count = c + 1;
    }
    return tb;
  };
  static const Table tables[4] = {make(DType::kFloat8E4M3FN), make(DType::kFloat8E4M3FNUZ), make(DType::kFloat8E5M2),
                                  make(DType::kFloat8E5M2FNUZ)};
  return tables[static_cast<int>(t) - static_cast<int>(DType::kFloat8E4M3FN)];
}

uint8_t nan_code(const Format& f, uint8_t sign) { return f.unsigned_zero ? 0x80 : static_cast<uint8_t>(sign | 0x7f); }

}  // namespace

float float8_to_float(uint8_t code, DType t) {
  const Format f = format_of(t);
  if (is_nan_code(code, f)) return std::numeric_limits<float>::quiet_NaN();
  const bool neg = (code & 0x80) != 0;
  if (is_inf_code(code, f))
    return neg ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  const float v = static_cast<float>(magnitude(code & 0x7f, f));
  return neg ? -v : v;
}

uint8_t float_to_float8(float v, DType t, bool saturate) {
  const Format f = format_of(t);
  const Table& tb = table_of(t);
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  if (std::isnan(v)) return nan_code(f, sign);
  const uint8_t max_code = static_cast<uint8_t>(tb.count - 1);
  auto overflow = [&]() -> uint8_t {
    if (saturate) return static_cast<uint8_t>(sign | max_code);
    return f.ieee_specials ? static_cast<uint8_t>(sign | 0x7c) : nan_code(f, sign);
  };
  if (std::isinf(v)) return overflow();
  const double a = std::fabs(static_cast<double>(v));
  // The first code whose magnitude is >= a; the code after max stands for "overflow".
  const int hi =
      static_cast<int>(std::lower_bound(tb.value.begin(), tb.value.begin() + tb.count, a) - tb.value.begin());
  int code;
  if (hi < tb.count && tb.value[hi] == a) {
    code = hi;
  } else if (hi == 0) {
    code = 0;
  } else {
    const double lo_v = tb.value[hi - 1];
    const double hi_v = hi < tb.count ? tb.value[hi] : 2 * tb.value[max_code] - tb.value[max_code - 1];
    const double mid = (lo_v + hi_v) / 2;
    code = a < mid ? hi - 1 : (a > mid ? hi : ((hi - 1) % 2 == 0 ? hi - 1 : hi));
  }
  if (code >= tb.count) return overflow();
  if (code == 0 && f.unsigned_zero) return 0;  // no -0
  return static_cast<uint8_t>(sign | code);
}

}  // namespace pointrt
