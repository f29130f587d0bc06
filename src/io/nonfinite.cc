#include "io/nonfinite.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "core/common.h"

namespace pointrt {

NonfinitePolicy parse_nonfinite_policy(const std::string& text, const std::string& what) {
  if (text == "error") return NonfinitePolicy::kError;
  if (text == "warn") return NonfinitePolicy::kWarn;
  if (text == "allow") return NonfinitePolicy::kAllow;
  fail(what, ": '", text, "' is not one of error, warn, allow");
}

namespace {
// NaN and +-Inf are the values whose exponent bits are all set. Testing bits, not std::isfinite,
// keeps the check right under -ffast-math and lets the block test below vectorise, so the scan
// of a clean input runs at memory speed; a block is counted element by element only if it has one.
template <typename Bits>
bool is_nonfinite_bits(Bits b, Bits exponent) {
  return (b & exponent) == exponent;
}

template <typename Bits>
NonfiniteCount count_in(const void* data, int64_t n, Bits exponent) {
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  auto bits_at = [bytes](int64_t i) {
    Bits b;
    std::memcpy(&b, bytes + i * static_cast<int64_t>(sizeof(Bits)), sizeof(Bits));
    return b;
  };
  constexpr int64_t kBlock = 1024;
  NonfiniteCount c;
  for (int64_t start = 0; start < n; start += kBlock) {
    const int64_t end = std::min(n, start + kBlock);
    // (b & exponent) <= exponent, with equality only for NaN / Inf: a max reduction vectorises.
    Bits most = 0;
    for (int64_t i = start; i < end; ++i) most = std::max<Bits>(most, bits_at(i) & exponent);
    if (most != exponent) continue;
    for (int64_t i = start; i < end; ++i)
      if (is_nonfinite_bits(bits_at(i), exponent) && c.count++ == 0) c.first = i;
  }
  return c;
}
}  // namespace

NonfiniteCount count_nonfinite(const Tensor& t) {
  if (!t.data()) return {};
  switch (t.dtype()) {
    case DType::kFloat32: return count_in<uint32_t>(t.data(), t.numel(), 0x7f800000u);
    case DType::kFloat64: return count_in<uint64_t>(t.data(), t.numel(), 0x7ff0000000000000ull);
    case DType::kFloat16: return count_in<uint16_t>(t.data(), t.numel(), 0x7c00u);
    case DType::kBFloat16: return count_in<uint16_t>(t.data(), t.numel(), 0x7f80u);
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
