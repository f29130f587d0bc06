// ArgMax / ArgMin: contiguous rows (inner == 1) scan directly; otherwise rows of the reduced axis
// are walked with a block of running best values and indices (no strided reads).
#include "ops/onnx/reduce/argminmax.h"

#include <algorithm>

#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

using namespace detail;

// True when `v` should replace the current best `best`.
template <bool kMax, bool kLast, typename T>
inline bool better(T v, T best) {
  if constexpr (kMax)
    return kLast ? v >= best : v > best;
  else
    return kLast ? v <= best : v < best;
}

template <typename T, bool kMax, bool kLast>
void arg_typed(const T* x, int64_t outer, int64_t R, int64_t inner, int64_t* y) {
  const int64_t work = outer * R * inner;
  if (inner == 1) {
#pragma omp parallel for if (work > (1 << 15))
    for (int64_t o = 0; o < outer; ++o) {
      const T* row = x + o * R;
      // Vectorised extremum first, then the first (last) position holding it; rows with a NaN
      // take the sequential scan, whose rule the header states.
      T m = row[0];
      int nan = 0;
      if constexpr (kMax) {
#pragma omp simd reduction(max : m) reduction(| : nan)
        for (int64_t r = 0; r < R; ++r) {
          m = row[r] > m ? row[r] : m;
          nan |= row[r] != row[r];
        }
      } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
        for (int64_t r = 0; r < R; ++r) {
          m = row[r] < m ? row[r] : m;
          nan |= row[r] != row[r];
        }
      }
      int64_t idx = 0;
      if (!nan) {
        if (kLast) {
          idx = R - 1;
          while (row[idx] != m) --idx;
        } else {
          while (row[idx] != m) ++idx;
        }
      } else {
        T best = row[0];
        for (int64_t r = 1; r < R; ++r)
          if (better<kMax, kLast>(row[r], best)) {
            best = row[r];
            idx = r;
          }
      }
      y[o] = idx;
    }
    return;
  }
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
#pragma omp parallel for collapse(2) if (work > (1 << 15))
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t i0 = b * kBlock, n = std::min(kBlock, inner - i0);
      T best[kBlock];
      int64_t idx[kBlock];
      const T* base = x + o * R * inner + i0;
      for (int64_t j = 0; j < n; ++j) {
        best[j] = base[j];
        idx[j] = 0;
      }
      for (int64_t r = 1; r < R; ++r) {
        const T* row = base + r * inner;
        for (int64_t j = 0; j < n; ++j)
          if (better<kMax, kLast>(row[j], best[j])) {
            best[j] = row[j];
            idx[j] = r;
          }
      }
      std::copy(idx, idx + n, y + o * inner + i0);
    }
}

class ArgReduceKernel : public OpKernel {
 public:
  ArgReduceKernel(const KernelInit& init, bool is_max) : is_max_(is_max) {
    axis_ = init.attrs().get_int("axis", 0);
    keepdims_ = init.attrs().get_int("keepdims", 1) != 0;
    select_last_ = init.attrs().get_int("select_last_index", 0) != 0;
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(x.rank()), ctx.where());
    if (x.dim(axis) == 0)
      fail(ctx.where(), ": cannot take ", is_max_ ? "ArgMax" : "ArgMin", " over axis ", axis_,
           " of size 0 (input shape ", shape_to_string(x.shape()), ")");
    Shape out = x.shape();
    if (keepdims_)
      out[axis] = 1;
    else
      out.erase(out.begin() + axis);
    Tensor& y = ctx.output(0, DType::kInt64, out);
    arg_reduce_optimized(x, axis, is_max_, select_last_, y);
  }

 private:
  bool is_max_;
  int64_t axis_ = 0;
  bool keepdims_ = true, select_last_ = false;
};

}  // namespace

void arg_reduce_optimized(const Tensor& x, int64_t axis, bool is_max, bool select_last, Tensor& y) {
  AxisSplit s = split_at_axis(x.shape(), axis);
  if (y.numel() == 0) return;
  if (s.axis_dim == 0) fail("ArgMax/ArgMin: reduced axis has size 0");
  dispatch_numeric(x.dtype(), "ArgMax/ArgMin", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    int64_t* out = y.data_as<int64_t>();
    if (is_max) {
      if (select_last)
        arg_typed<T, true, true>(in, s.outer, s.axis_dim, s.inner, out);
      else
        arg_typed<T, true, false>(in, s.outer, s.axis_dim, s.inner, out);
    } else {
      if (select_last)
        arg_typed<T, false, true>(in, s.outer, s.axis_dim, s.inner, out);
      else
        arg_typed<T, false, false>(in, s.outer, s.axis_dim, s.inner, out);
    }
  });
}

void arg_reduce_reference(const Tensor& x, int64_t axis, bool is_max, bool select_last, Tensor& y) {
  AxisSplit s = split_at_axis(x.shape(), axis);
  dispatch_numeric(x.dtype(), "ArgMax/ArgMin", [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    int64_t* out = y.data_as<int64_t>();
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t best = 0;
        for (int64_t r = 1; r < s.axis_dim; ++r) {
          T v = in[(o * s.axis_dim + r) * s.inner + i], b = in[(o * s.axis_dim + best) * s.inner + i];
          bool take = is_max ? (v > b || (select_last && v == b)) : (v < b || (select_last && v == b));
          if (take) best = r;
        }
        out[o * s.inner + i] = best;
      }
  });
}

std::unique_ptr<OpKernel> make_arg_reduce_kernel(const KernelInit& init, bool is_max) {
  return std::make_unique<ArgReduceKernel>(init, is_max);
}

}  // namespace pointrt::reduce
