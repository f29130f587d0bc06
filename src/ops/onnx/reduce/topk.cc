// TopK: per line (outer, inner), the line is copied into a per-thread buffer of
// (value, index) pairs and partially sorted (O(R log k)); lines run in parallel.
#include "ops/onnx/reduce/topk.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt {
namespace {

using namespace reduce_detail;

template <typename T>
inline bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value)
    return v != v;
  else
    return false;
}

// A strict weak order (NaN is the largest value), ties by the lower index.
template <typename T, bool kLargest>
struct TopKBefore {
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    const bool an = is_nan(a.first), bn = is_nan(b.first);
    if (an != bn) return kLargest ? an : bn;
    if (!an && a.first != b.first) return kLargest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  }
};

template <typename T, bool kLargest>
void topk_typed(const T* x, T* values, int64_t* indices, int64_t outer, int64_t R, int64_t inner, int64_t k) {
  const int64_t lines = outer * inner;
#pragma omp parallel if (lines > 1 && lines * R > (1 << 14))
  {
    std::vector<std::pair<T, int64_t>> buf(static_cast<size_t>(R));
#pragma omp for
    for (int64_t line = 0; line < lines; ++line) {
      const int64_t o = line / inner, i = line % inner;
      const T* in = x + o * R * inner + i;
      for (int64_t r = 0; r < R; ++r) buf[r] = {in[r * inner], r};
      TopKBefore<T, kLargest> before;
      if (k < R)
        std::partial_sort(buf.begin(), buf.begin() + k, buf.end(), before);
      else
        std::sort(buf.begin(), buf.end(), before);
      T* v = values + o * k * inner + i;
      int64_t* ix = indices + o * k * inner + i;
      for (int64_t j = 0; j < k; ++j) {
        v[j * inner] = buf[j].first;
        ix[j * inner] = buf[j].second;
      }
    }
  }
}

class TopKKernel : public OpKernel {
 public:
  TopKKernel(const KernelInit& init, bool k_from_input, bool has_largest) : k_from_input_(k_from_input) {
    axis_ = init.attrs().get_int("axis", -1);
    if (!k_from_input) k_attr_ = init.attrs().get_int("k");
    if (has_largest) largest_ = init.attrs().get_int("largest", 1) != 0;
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t axis = normalize_axis(axis_, static_cast<int64_t>(x.rank()), ctx.where());
    int64_t k = k_attr_;
    if (k_from_input_) {
      const Tensor& kt = ctx.input(1);
      if (kt.numel() != 1)
        fail(ctx.where(), ": input 'K' must hold exactly one value, got shape ", shape_to_string(kt.shape()));
      k = read_int_list(kt, ctx.where(), "K")[0];
    }
    if (k < 0 || k > x.dim(axis))
      fail(ctx.where(), ": K = ", k, " is out of range for axis ", axis_, " of size ", x.dim(axis), " (input shape ",
           shape_to_string(x.shape()), ")");
    Shape out = x.shape();
    out[axis] = k;
    Tensor& values = ctx.output(0, x.dtype(), out);
    Tensor& indices = ctx.output(1, DType::kInt64, out);
    topk_optimized(x, axis, k, largest_, values, indices);
  }

 private:
  bool k_from_input_;
  int64_t axis_ = -1, k_attr_ = 0;
  bool largest_ = true;
};

}  // namespace

void topk_optimized(const Tensor& x, int64_t axis, int64_t k, bool largest, Tensor& values, Tensor& indices) {
  if (values.numel() == 0) return;
  AxisSplit s = split_at_axis(x.shape(), axis);
  dispatch_numeric(x.dtype(), "TopK", [&](auto tag) {
    using T = decltype(tag);
    if (largest)
      topk_typed<T, true>(x.data_as<T>(), values.data_as<T>(), indices.data_as<int64_t>(), s.outer, s.axis_dim, s.inner,
                          k);
    else
      topk_typed<T, false>(x.data_as<T>(), values.data_as<T>(), indices.data_as<int64_t>(), s.outer, s.axis_dim,
                           s.inner, k);
  });
}

std::unique_ptr<OpKernel> make_topk_kernel(const KernelInit& init, bool k_from_input, bool has_largest) {
  return std::make_unique<TopKKernel>(init, k_from_input, has_largest);
}

}  // namespace pointrt
