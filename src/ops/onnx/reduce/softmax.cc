// Softmax / LogSoftmax: contiguous rows (inner == 1) in three sweeps (max, exp+sum, scale);
// strided axes process a block of `inner` columns row by row so every read is contiguous.
#include "ops/onnx/reduce/softmax.h"

#include <algorithm>
#include <cmath>

#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt {
namespace {

using namespace reduce_detail;

template <typename T>
void softmax_rows(const T* x, T* y, int64_t outer, int64_t R, bool log) {
#pragma omp parallel for if (outer * R > (1 << 14))
  for (int64_t o = 0; o < outer; ++o) {
    const T* in = x + o * R;
    T* out = y + o * R;
    T mx = in[0];
    for (int64_t r = 1; r < R; ++r) mx = max_nan(mx, in[r]);
    double sum = 0;
    if (log) {
      for (int64_t r = 0; r < R; ++r) sum += std::exp(static_cast<double>(in[r] - mx));
      // (x - max) is exact-ish; subtracting a combined (max + log sum) would round at max's scale.
      const T log_sum = static_cast<T>(std::log(sum));
      for (int64_t r = 0; r < R; ++r) out[r] = (in[r] - mx) - log_sum;
    } else {
      for (int64_t r = 0; r < R; ++r) {
        T e = std::exp(in[r] - mx);
        out[r] = e;
        sum += e;
      }
      const T scale = static_cast<T>(1.0 / sum);
      for (int64_t r = 0; r < R; ++r) out[r] *= scale;
    }
  }
}

template <typename T>
void softmax_strided(const T* x, T* y, int64_t outer, int64_t R, int64_t inner, bool log) {
  constexpr int64_t kBlock = 128;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
#pragma omp parallel for collapse(2) if (outer * R * inner > (1 << 14))
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < blocks; ++b) {
      const int64_t i0 = b * kBlock, n = std::min(kBlock, inner - i0);
      const T* in = x + o * R * inner + i0;
      T* out = y + o * R * inner + i0;
      T mx[kBlock];
      double sum[kBlock];
      for (int64_t j = 0; j < n; ++j) { mx[j] = in[j]; sum[j] = 0; }
      for (int64_t r = 1; r < R; ++r)
        for (int64_t j = 0; j < n; ++j) mx[j] = max_nan(mx[j], in[r * inner + j]);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t j = 0; j < n; ++j) {
          T e = std::exp(in[r * inner + j] - mx[j]);
          if (!log) out[r * inner + j] = e;
          sum[j] += e;
        }
      if (log) {
        T log_sum[kBlock];
        for (int64_t j = 0; j < n; ++j) log_sum[j] = static_cast<T>(std::log(sum[j]));
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < n; ++j) out[r * inner + j] = (in[r * inner + j] - mx[j]) - log_sum[j];
      } else {
        T scale[kBlock];
        for (int64_t j = 0; j < n; ++j) scale[j] = static_cast<T>(1.0 / sum[j]);
        for (int64_t r = 0; r < R; ++r)
          for (int64_t j = 0; j < n; ++j) out[r * inner + j] *= scale[j];
      }
    }
}

class SoftmaxKernel : public OpKernel {
 public:
  SoftmaxKernel(const KernelInit& init, bool log, bool flatten_2d) : log_(log), flatten_2d_(flatten_2d) {
    axis_ = init.attrs().get_int("axis", flatten_2d ? 1 : -1);
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (!is_float_type(x.dtype()) || x.dtype() == DType::kFloat16)
      fail(ctx.where(), ": input 0 has element type ", dtype_name(x.dtype()), ", expected float32 or float64");
    const int64_t rank = static_cast<int64_t>(x.rank());
    int64_t outer, R, inner = 1;
    if (flatten_2d_) {
      // Opset < 13 accepts axis in [-rank, rank]; axis == rank makes rows of one element.
      if (axis_ < -rank || axis_ > rank)
        fail(ctx.where(), ": axis ", axis_, " is out of range for a tensor of rank ", rank);
      const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
      outer = 1;
      R = 1;
      for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : R) *= x.dim(i);
    } else {
      const int64_t axis = normalize_axis(axis_, rank, ctx.where());
      reduce_detail::AxisSplit s = reduce_detail::split_at_axis(x.shape(), axis);
      outer = s.outer;
      R = s.axis_dim;
      inner = s.inner;
    }
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    softmax_optimized(x, outer, R, inner, log_, y);
  }

 private:
  bool log_, flatten_2d_;
  int64_t axis_;
};

}  // namespace

void softmax_optimized(const Tensor& x, int64_t outer, int64_t R, int64_t inner, bool log, Tensor& y) {
  if (x.numel() == 0) return;
  dispatch_float(x.dtype(), "Softmax", [&](auto tag) {
    using T = decltype(tag);
    if (inner == 1) softmax_rows<T>(x.data_as<T>(), y.data_as<T>(), outer, R, log);
    else softmax_strided<T>(x.data_as<T>(), y.data_as<T>(), outer, R, inner, log);
  });
}

std::unique_ptr<OpKernel> make_softmax_kernel(const KernelInit& init, bool log, bool flatten_2d) {
  return std::make_unique<SoftmaxKernel>(init, log, flatten_2d);
}

}  // namespace pointrt
