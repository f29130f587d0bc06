#include "core/checked_size.h"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>

#include "core/common.h"

namespace pointrt {

int64_t checked_numel(const Shape& shape, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0) fail(what, ": shape ", shape_to_string(shape), " has a negative dimension");
  for (int64_t d : shape)
    if (!checked_mul(n, d, &n)) {
      // A later zero makes the product 0, which is a valid (empty) tensor.
      for (int64_t z : shape)
        if (z == 0) return 0;
      fail(what, ": shape ", shape_to_string(shape), " has more elements than int64 can count");
    }
  return n;
}

size_t checked_nbytes(DType dtype, const Shape& shape, const std::string& what) {
  int64_t n = checked_numel(shape, what);
  size_t bytes = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(n), dtype_size(dtype), &bytes))
    fail(what, ": ", dtype_name(dtype), " ", shape_to_string(shape), " has more bytes than size_t can count");
  return bytes;
}

size_t check_tensor_size(DType dtype, const Shape& shape, size_t limit, const std::string& what) {
  size_t bytes = checked_nbytes(dtype, shape, what);
  if (bytes > limit)
    fail(what, ": ", dtype_name(dtype), " ", shape_to_string(shape), " needs ", format_bytes(bytes),
         ", above the limit of ", format_bytes(limit), " (max_tensor_bytes; --max-tensor-bytes in the CLI)");
  return bytes;
}

bool tensor_size_within(DType dtype, const Shape& shape, size_t limit) {
  int64_t n = 1;
  bool overflow = false, zero = false;
  for (int64_t d : shape) {
    if (d < 0) return false;
    zero |= d == 0;
    if (!overflow && !checked_mul(n, d, &n)) overflow = true;
  }
  if (zero) return true;  // an empty tensor, as checked_numel counts it
  size_t bytes = 0;
  if (overflow || __builtin_mul_overflow(static_cast<size_t>(n), dtype_size(dtype), &bytes)) return false;
  return bytes <= limit;
}

std::string format_bytes(size_t bytes) {
  if (bytes < 1024) return str_cat(bytes, " bytes");
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int u = -1;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %s", v, units[u]);
  return str_cat(bytes, " bytes (", buf, ")");
}

size_t usable_memory_bytes() {
  static const size_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t physical = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : size_t(1) << 34;
    // cgroup v2 (and v1) memory limits: a container may allow far less than the machine has.
    for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
      std::ifstream f(file);
      unsigned long long limit = 0;
      if (f >> limit && limit > 0 && limit < physical) physical = static_cast<size_t>(limit);
    }
    return physical;
  }();
  return bytes;
}

size_t parse_byte_count(const std::string& text, const std::string& what) {
  size_t pos = 0;
  while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) || text[pos] == '.')) ++pos;
  std::string number = text.substr(0, pos), unit = text.substr(pos);
  auto bad = [&]() { fail(what, ": '", text, "' is not a byte count (e.g. 1000000, 512M, 2G)"); };
  if (number.empty() || number == "." || number.find('.') != number.rfind('.')) bad();
  double value = std::strtod(number.c_str(), nullptr);
  static const std::pair<const char*, double> units[] = {
      {"", 1},         {"B", 1},       {"K", 0x1p10},   {"KB", 0x1p10}, {"KiB", 0x1p10},
      {"M", 0x1p20},   {"MB", 0x1p20}, {"MiB", 0x1p20}, {"G", 0x1p30},  {"GB", 0x1p30},
      {"GiB", 0x1p30}, {"T", 0x1p40},  {"TB", 0x1p40},  {"TiB", 0x1p40}};
  double scale = 0;
  for (const auto& [name, s] : units)
    if (unit == name) scale = s;
  if (scale == 0) bad();
  double bytes = std::floor(value * scale);
  if (!(bytes >= 1) || bytes >= 0x1p63) fail(what, ": '", text, "' must be between 1 byte and 8 EiB");
  return static_cast<size_t>(bytes);
}

int64_t parse_int64_strict(const std::string& text, const std::string& what, bool allow_negative) {
  size_t i = 0;
  bool negative = false;
  if (allow_negative && !text.empty() && text[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i == text.size()) fail(what, ": '", text, "' is not ", allow_negative ? "an integer" : "a non-negative integer");
  int64_t v = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9')
      fail(what, ": '", text, "' is not ", allow_negative ? "an integer" : "a non-negative integer");
    if (!checked_mul(v, 10, &v) || __builtin_add_overflow(v, c - '0', &v))
      fail(what, ": '", text, "' does not fit in 64 bits");
  }
  return negative ? -v : v;
}

size_t default_max_tensor_bytes() { return usable_memory_bytes() / 2; }

}  // namespace pointrt
