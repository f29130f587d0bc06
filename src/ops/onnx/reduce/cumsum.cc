// CumSum: inner == 1 scans each contiguous row; otherwise a running row of `inner` sums is
// added to each successive row (contiguous, vectorises).
#include "ops/onnx/reduce/cumsum.h"

#include <algorithm>

#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

using namespace detail;

class CumSumKernel : public OpKernel {
 public:
  explicit CumSumKernel(const KernelInit& init) {
    exclusive_ = init.attrs().get_int("exclusive", 0) != 0;
    reverse_ = init.attrs().get_int("reverse", 0) != 0;
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& axis_t = ctx.input(1);
    if (axis_t.numel() != 1)
      fail(ctx.where(), ": input 'axis' must hold exactly one value, got shape ", shape_to_string(axis_t.shape()));
    const int64_t axis_value = read_int_list(axis_t, ctx.where(), "axis")[0];
    const int64_t axis = normalize_axis(axis_value, static_cast<int64_t>(x.rank()), ctx.where());
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    cumsum_optimized(x, axis, exclusive_, reverse_, y);
  }

 private:
  bool exclusive_ = false, reverse_ = false;
};

template <typename T>
void cumsum_typed(const T* x, T* y, int64_t outer, int64_t R, int64_t inner, bool exclusive, bool reverse) {
  // Walk the axis forwards or backwards through a signed step.
  const int64_t work = outer * R * inner;
  const int64_t first = reverse ? R - 1 : 0, step = reverse ? -1 : 1;
  if (inner == 1) {
#pragma omp parallel for if (work > (1 << 15))
    for (int64_t o = 0; o < outer; ++o) {
      const T* in = x + o * R;
      T* out = y + o * R;
      T sum = T(0);
      for (int64_t k = 0, r = first; k < R; ++k, r += step) {
        if (exclusive) {
          out[r] = sum;
          sum = wadd(sum, in[r]);
        } else {
          sum = wadd(sum, in[r]);
          out[r] = sum;
        }
      }
    }
    return;
  }
  constexpr int64_t kBlock = 512;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
#pragma omp parallel for collapse(2) if (work > (1 << 15))
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t i0 = b * kBlock, n = std::min(kBlock, inner - i0);
      T sum[kBlock];
      std::fill(sum, sum + n, T(0));
      for (int64_t k = 0, r = first; k < R; ++k, r += step) {
        const T* in = x + (o * R + r) * inner + i0;
        T* out = y + (o * R + r) * inner + i0;
        if (exclusive)
          for (int64_t j = 0; j < n; ++j) {
            out[j] = sum[j];
            sum[j] = wadd(sum[j], in[j]);
          }
        else
          for (int64_t j = 0; j < n; ++j) {
            sum[j] = wadd(sum[j], in[j]);
            out[j] = sum[j];
          }
      }
    }
}

}  // namespace

void cumsum_optimized(const Tensor& x, int64_t axis, bool exclusive, bool reverse, Tensor& y) {
  if (x.numel() == 0) return;
  AxisSplit s = split_at_axis(x.shape(), axis);
  dispatch_numeric(x.dtype(), "CumSum", [&](auto tag) {
    using T = decltype(tag);
    cumsum_typed<T>(x.data_as<T>(), y.data_as<T>(), s.outer, s.axis_dim, s.inner, exclusive, reverse);
  });
}

void cumsum_reference(const Tensor& x, int64_t axis, bool exclusive, bool reverse, Tensor& y) {
  AxisSplit s = split_at_axis(x.shape(), axis);
  dispatch_numeric(x.dtype(), "CumSum", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    T* out = y.data_as<T>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i)
        for (int64_t r = 0; r < s.axis_dim; ++r) {
          T sum = T(0);
          // Sum of the elements that precede r in the scan direction (and r itself unless exclusive).
          for (int64_t q = 0; q < s.axis_dim; ++q) {
            bool before = reverse ? q > r : q < r;
            if (before || (!exclusive && q == r)) sum = wadd(sum, in[(o * s.axis_dim + q) * s.inner + i]);
          }
          out[(o * s.axis_dim + r) * s.inner + i] = sum;
        }
  });
}

std::unique_ptr<OpKernel> make_cumsum_kernel(const KernelInit& init) { return std::make_unique<CumSumKernel>(init); }

}  // namespace pointrt::reduce
