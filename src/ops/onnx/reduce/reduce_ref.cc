// Naive reference reductions (the test oracle): for every output element, enumerate every
// reduced index with an odometer and accumulate sequentially in long double / 64-bit integers.
#include <cmath>
#include <limits>

#include "ops/onnx/reduce/reduce.h"
#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

// Offsets into X by odometer over the kept axes (one output each) and the reduced axes (the
// elements of one output's set).
struct ReduceIndexer {
  Shape s;
  std::vector<int64_t> stride;
  std::vector<size_t> kept_axes, red_axes;

  ReduceIndexer(const Shape& shape, const std::vector<bool>& reduced) : s(shape), stride(shape.size(), 1) {
    for (size_t i = s.size(); i-- > 1;) stride[i - 1] = stride[i] * s[i];
    for (size_t i = 0; i < s.size(); ++i) (reduced[i] ? red_axes : kept_axes).push_back(i);
  }
  int64_t outputs() const { return product(kept_axes); }
  int64_t count() const { return product(red_axes); }
  // Offset of the first element of output o's set.
  int64_t base(int64_t o) const { return offset(0, o, kept_axes); }
  // Offset of element r of the set starting at `base`.
  int64_t element(int64_t base, int64_t r) const { return offset(base, r, red_axes); }

 private:
  int64_t product(const std::vector<size_t>& axes) const {
    int64_t n = 1;
    for (size_t a : axes) n *= s[a];
    return n;
  }
  int64_t offset(int64_t off, int64_t rem, const std::vector<size_t>& axes) const {
    for (size_t k = axes.size(); k-- > 0;) {
      off += (rem % s[axes[k]]) * stride[axes[k]];
      rem /= s[axes[k]];
    }
    return off;
  }
};

// LogSumExp of one set, given its maximum: a second sweep summing exp(x - max).
template <typename T>
T log_sum_exp(const T* x, const ReduceIndexer& ix, int64_t base, int64_t count, T mx, bool nan) {
  if (nan) return std::numeric_limits<T>::quiet_NaN();
  if (count == 0 || mx == -std::numeric_limits<T>::infinity()) return mx;
  if (mx == std::numeric_limits<T>::infinity()) return mx;
  long double se = 0;
  for (int64_t r = 0; r < count; ++r)
    se += std::exp(static_cast<long double>(x[ix.element(base, r)]) - static_cast<long double>(mx));
  return T(static_cast<long double>(mx) + std::log(se));
}

template <typename T>
void reduce_ref_typed(ReduceKind kind, const Tensor& xt, const std::vector<bool>& reduced, Tensor& yt) {
  const T* x = xt.data_as<T>();
  T* y = yt.data_as<T>();
  const ReduceIndexer ix(xt.shape(), reduced);
  const int64_t out_n = ix.outputs(), count = ix.count();
  constexpr bool is_float = std::is_floating_point<T>::value;
  using Wide =
      std::conditional_t<is_float, long double, std::conditional_t<std::is_signed<T>::value, int64_t, uint64_t>>;
  for (int64_t o = 0; o < out_n; ++o) {
    const int64_t base = ix.base(o);
    Wide sum = 0, prod = 1;
    T mx = std::is_floating_point<T>::value ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
    T mn = std::is_floating_point<T>::value ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    bool nan = false;
    for (int64_t r = 0; r < count; ++r) {
      const T v = x[ix.element(base, r)];
      if (v != v) nan = true;
      if (v > mx) mx = v;
      if (v < mn) mn = v;
      switch (kind) {
        case ReduceKind::kSumSquare:
        case ReduceKind::kL2: sum = detail::wadd(sum, detail::wmul(Wide(v), Wide(v))); break;
        case ReduceKind::kL1: sum = detail::wadd(sum, (v < T(0)) ? detail::wsub(Wide(0), Wide(v)) : Wide(v)); break;
        default: sum = detail::wadd(sum, Wide(v)); break;
      }
      prod = detail::wmul(prod, Wide(v));
    }
    T out{};
    switch (kind) {
      case ReduceKind::kSum:
      case ReduceKind::kSumSquare:
      case ReduceKind::kL1: out = T(sum); break;
      case ReduceKind::kL2: out = T(std::sqrt(static_cast<double>(sum))); break;
      case ReduceKind::kLogSum: out = T(std::log(static_cast<double>(sum))); break;
      case ReduceKind::kLogSumExp:
        if constexpr (is_float) out = log_sum_exp(x, ix, base, count, mx, nan);
        break;
      case ReduceKind::kMean:
        if (count == 0)
          out = T(0);
        else if (is_float)
          out = T(static_cast<double>(sum) / static_cast<double>(count));
        else
          out = T(sum / Wide(count));
        break;
      case ReduceKind::kProd: out = T(prod); break;
      case ReduceKind::kMax: out = nan ? std::numeric_limits<T>::quiet_NaN() : mx; break;
      case ReduceKind::kMin: out = nan ? std::numeric_limits<T>::quiet_NaN() : mn; break;
    }
    y[o] = out;
  }
}

}  // namespace

void reduce_reference(ReduceKind kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  if (!reduce_kind_accepts(kind, x.dtype())) fail("reduce_reference: unsupported element type ", dtype_name(x.dtype()));
  switch (x.dtype()) {
    case DType::kFloat32: reduce_ref_typed<float>(kind, x, reduced, y); return;
    case DType::kFloat64: reduce_ref_typed<double>(kind, x, reduced, y); return;
    case DType::kInt32: reduce_ref_typed<int32_t>(kind, x, reduced, y); return;
    case DType::kInt64: reduce_ref_typed<int64_t>(kind, x, reduced, y); return;
    case DType::kUInt32: reduce_ref_typed<uint32_t>(kind, x, reduced, y); return;
    case DType::kUInt64: reduce_ref_typed<uint64_t>(kind, x, reduced, y); return;
    case DType::kInt8: reduce_ref_typed<int8_t>(kind, x, reduced, y); return;
    case DType::kUInt8: reduce_ref_typed<uint8_t>(kind, x, reduced, y); return;
    case DType::kBool: reduce_ref_typed<bool>(kind, x, reduced, y); return;
    default: fail("reduce_reference: unsupported element type ", dtype_name(x.dtype()));
  }
}

}  // namespace pointrt::reduce
