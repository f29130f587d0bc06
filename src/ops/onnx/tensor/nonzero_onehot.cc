// NonZero: int64 [rank, nnz] coordinates of the non-zero elements in row-major order (a scalar
// counts as rank 1, as ONNX Runtime does). float16 tests the bits (+-0 are zero).
// OneHot: y has rank r+1 (new axis at `axis`, default -1); y = on where the (possibly wrapped,
// +depth) index equals the position, off elsewhere. Indices outside [-depth, depth-1] give an
// all-off row (the spec's rule, not an error). Indices may be any numeric type (floats truncate).
#include <cstring>
#include <type_traits>

#include "ops/onnx/tensor/kernels.h"
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

namespace {

// Non-zero test per element type: float16 (kHalf) by its bits (+-0 are zero), bool by its byte.
template <bool kHalf, typename T>
inline bool is_nonzero(const T* p, int64_t i) {
  if constexpr (kHalf)
    return (p[i] & 0x7fffu) != 0;
  else
    return p[i] != T(0);
}

// Counts first (a vectorisable pass), then writes each non-zero's coordinates row by row of
// the last dimension: the outer coordinates are advanced once per row, not per element.
template <bool kHalf = false, typename T>
void nonzero_typed(KernelContext& ctx, const T* p, const Shape& shape) {
  const int64_t total = shape_numel(shape), rank = static_cast<int64_t>(shape.size());
  int64_t count = 0;
  for (int64_t i = 0; i < total; ++i) count += is_nonzero<kHalf>(p, i) ? 1 : 0;
  Tensor& y = ctx.output(0, DType::kInt64, {rank, count});
  if (count == 0) return;
  int64_t* out = y.data_as<int64_t>();
  const int64_t width = shape.back(), rows = total / width;
  std::vector<int64_t> outer(static_cast<size_t>(rank - 1), 0);
  int64_t col = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const T* row = p + r * width;
    for (int64_t w = 0; w < width; ++w) {
      if (!is_nonzero<kHalf>(row, w)) continue;
      for (int64_t d = 0; d + 1 < rank; ++d) out[d * count + col] = outer[d];
      out[(rank - 1) * count + col] = w;
      ++col;
    }
    for (int64_t d = rank - 2; d >= 0; --d) {  // next row
      if (++outer[d] < shape[d]) break;
      outer[d] = 0;
    }
  }
}

}  // namespace

std::unique_ptr<OpKernel> make_nonzero(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    if (shape_numel(shape) == 0) {
      ctx.output(0, DType::kInt64, {static_cast<int64_t>(shape.size()), 0});
      return;
    }
    if (x.dtype() == DType::kFloat16) return nonzero_typed<true>(ctx, x.data_as<uint16_t>(), shape);
    if (x.dtype() == DType::kBool) return nonzero_typed(ctx, x.data_as<uint8_t>(), shape);
    dispatch_numeric(x.dtype(), "NonZero input 0",
                     [&](auto tag) { nonzero_typed(ctx, x.data_as<decltype(tag)>(), shape); });
  });
}

std::unique_ptr<OpKernel> make_onehot(const KernelInit& init) {
  const int64_t axis_attr = init.attrs().get_int("axis", -1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor &indices = ctx.input(0), &depth_t = ctx.input(1), &values = ctx.input(2);
    const int64_t depth = read_int_scalar(depth_t, ctx.where(), "input 1 (depth)");
    if (depth < 1) fail(ctx.where(), ": input 1 (depth) is ", depth, ", must be >= 1");
    if (values.numel() != 2)
      fail(ctx.where(), ": input 2 (values) must hold [off_value, on_value], got shape ",
           shape_to_string(values.shape()));
    const int64_t out_rank = static_cast<int64_t>(indices.rank()) + 1;
    const int64_t axis = normalize_axis(axis_attr, out_rank, ctx.where());
    Shape out_shape = indices.shape();
    out_shape.insert(out_shape.begin() + axis, depth);
    // Indices as int64 (any numeric type; floats truncate toward zero).
    std::vector<int64_t> idx(static_cast<size_t>(indices.numel()));
    if (indices.dtype() == DType::kFloat16) {
      for (size_t i = 0; i < idx.size(); ++i)
        idx[i] = static_cast<int64_t>(half_to_float(indices.data_as<uint16_t>()[i]));
    } else {
      dispatch_numeric(indices.dtype(), ctx.where().c_str(), [&](auto tag) {
        using I = decltype(tag);
        for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(indices.data_as<I>()[i]);
      });
    }
    Tensor& y = ctx.output(0, values.dtype(), out_shape);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= indices.dim(d);
    for (size_t d = axis; d < indices.rank(); ++d) inner *= indices.dim(d);
    dispatch_by_size(values.dtype(), ctx.where().c_str(), [&](auto tag) {
      using E = decltype(tag);
      const E off = values.data_as<E>()[0], on = values.data_as<E>()[1];
      E* out = y.data_as<E>();
      std::fill(out, out + y.numel(), off);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t v = idx[o * inner + i];
          if (v < -depth || v >= depth) continue;
          if (v < 0) v += depth;
          out[(o * depth + v) * inner + i] = on;
        }
    });
  });
}

}  // namespace pointrt::tensor
