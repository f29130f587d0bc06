// NonZero: int64 [rank, nnz] coordinates of the non-zero elements in row-major order (a scalar
// counts as rank 1, as ONNX Runtime does). float16 tests the bits (+-0 are zero).
// OneHot: y has rank r+1 (new axis at `axis`, default -1); y = on where the (possibly wrapped,
// +depth) index equals the position, off elsewhere. Indices outside [-depth, depth-1] give an
// all-off row (the spec's rule, not an error). Indices may be any numeric type (floats truncate).
#include <cstring>

#include "ops/onnx/tensor/kernels.h"
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt {
namespace tensor_ops {

std::unique_ptr<OpKernel> make_nonzero(const KernelInit&) {
  return make_function_kernel([](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const int64_t total = x.numel();
    std::vector<uint8_t> nz(static_cast<size_t>(total));
    auto scan = [&](auto tag) {
      using T = decltype(tag);
      const T* p = x.data_as<T>();
      for (int64_t i = 0; i < total; ++i) nz[i] = p[i] != T(0);
    };
    if (x.dtype() == DType::kFloat16) {
      const uint16_t* p = x.data_as<uint16_t>();
      for (int64_t i = 0; i < total; ++i) nz[i] = (p[i] & 0x7fffu) != 0;
    } else {
      dispatch_all(x.dtype(), ctx.where().c_str(), scan);
    }
    int64_t count = 0;
    for (uint8_t v : nz) count += v;
    const int64_t rank = x.rank() == 0 ? 1 : static_cast<int64_t>(x.rank());
    Tensor& y = ctx.output(0, DType::kInt64, {rank, count});
    int64_t* out = y.data_as<int64_t>();
    const Shape shape = x.rank() == 0 ? Shape{1} : x.shape();
    std::vector<int64_t> idx(rank, 0);
    int64_t col = 0;
    for (int64_t i = 0; i < total; ++i) {
      if (nz[i]) {
        for (int64_t d = 0; d < rank; ++d) out[d * count + col] = idx[d];
        ++col;
      }
      next_index(idx, shape);
    }
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

}  // namespace tensor_ops
}  // namespace pointrt
