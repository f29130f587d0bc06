#include "ops/onnx/tensor/scatter.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "core/copy_row.h"
#include "ops/onnx/tensor/gather.h"
#include "ops/onnx/tensor/kernels.h"

namespace pointrt::tensor {

Reduction parse_reduction(const std::string& s, int levels, const std::string& where) {
  if (s == "none") return Reduction::kNone;
  if (levels >= 1 && s == "add") return Reduction::kAdd;
  if (levels >= 1 && s == "mul") return Reduction::kMul;
  if (levels >= 2 && s == "max") return Reduction::kMax;
  if (levels >= 2 && s == "min") return Reduction::kMin;
  fail(where, ": attribute 'reduction' is '", s, "', expected ",
       levels >= 2   ? "none, add, mul, max or min"
       : levels >= 1 ? "none, add or mul (max/min need opset 18)"
                     : "none");
}

namespace {
struct Half {
  uint16_t bits;
};

template <typename T>
inline T combine(T a, T b, Reduction r) {
  switch (r) {
    case Reduction::kAdd: return static_cast<T>(a + b);
    case Reduction::kMul: return static_cast<T>(a * b);
    case Reduction::kMax: return std::max(a, b);
    case Reduction::kMin: return std::min(a, b);
    default: return b;
  }
}
inline Half combine(Half a, Half b, Reduction r) {
  if (r == Reduction::kNone) return b;
  return Half{float_to_half(combine(half_to_float(a.bits), half_to_float(b.bits), r))};
}

// Calls f(T{}) with the arithmetic element type of `t` (Half for float16).
template <typename F>
void dispatch_scatter(DType t, const std::string& where, F&& f) {
  if (t == DType::kFloat16)
    f(Half{});
  else
    dispatch_all(t, where.c_str(), std::forward<F>(f));
}
}  // namespace

void scatter_elements_cpu(const Tensor& data, const Tensor& indices, const Tensor& updates, int64_t axis, Reduction red,
                          Tensor& y, const std::string& where, const std::string& label) {
  if (updates.shape() != indices.shape())
    fail(where, ": updates ", shape_to_string(updates.shape()), " must have the shape of indices ",
         shape_to_string(indices.shape()));
  if (updates.dtype() != data.dtype())
    fail(where, ": updates are ", dtype_name(updates.dtype()), " but data is ", dtype_name(data.dtype()));
  check_gather_elements(data, indices.shape(), axis, where);
  std::vector<int64_t> idx = normalized_indices(indices, axis, data.shape(), where, label);
  if (data.nbytes()) std::memcpy(y.data(), data.data(), data.nbytes());
  const Strides ds = contiguous_strides(data.shape());
  const Shape& is = indices.shape();
  const int rank = static_cast<int>(is.size());
  dispatch_scatter(data.dtype(), where, [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data_as<T>();
    const T* up = updates.data_as<T>();
    std::vector<int64_t> pos(rank, 0);
    for (int64_t n = 0; n < indices.numel(); ++n) {
      int64_t off = 0;
      for (int d = 0; d < rank; ++d) off += (d == axis ? idx[n] : pos[d]) * ds[d];
      out[off] = combine(out[off], up[n], red);
      next_index(pos, is);
    }
  });
}

void scatter_nd_cpu(const Tensor& data, const Tensor& indices, const Tensor& updates, Reduction red, Tensor& y,
                    const std::string& where, const std::string& label) {
  const Shape& ds = data.shape();
  if (indices.rank() < 1) fail(where, ": indices must have rank >= 1, got ", shape_to_string(indices.shape()));
  const int64_t k = indices.shape().back();
  if (k < 0 || k > static_cast<int64_t>(ds.size()))
    fail(where, ": the last dimension of indices ", shape_to_string(indices.shape()), " is ", k, ", must be in [0, ",
         ds.size(), "] for data ", shape_to_string(ds));
  Shape expect(indices.shape().begin(), indices.shape().end() - 1);
  expect.insert(expect.end(), ds.begin() + k, ds.end());
  if (updates.shape() != expect)
    fail(where, ": updates ", shape_to_string(updates.shape()), " must have shape ", shape_to_string(expect),
         " (indices.shape[:-1] + data.shape[k:])");
  if (updates.dtype() != data.dtype())
    fail(where, ": updates are ", dtype_name(updates.dtype()), " but data is ", dtype_name(data.dtype()));
  const Strides dstr = contiguous_strides(ds);
  const int64_t tuples = shape_numel(Shape(indices.shape().begin(), indices.shape().end() - 1));
  int64_t slice = 1;
  for (size_t d = k; d < ds.size(); ++d) slice *= ds[d];
  std::vector<int64_t> offset(tuples);
  auto offsets = [&](auto tag) {  // typed index reads (no per-element dtype test)
    using I = decltype(tag);
    const I* ix = indices.data_as<I>();
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t off = 0;
      for (int64_t c = 0; c < k; ++c) {
        const int64_t dim = ds[c];
        const int64_t v = static_cast<int64_t>(ix[t * k + c]);
        if (v < -dim || v >= dim)
          fail_index(where, label, v, t * k + c, dim,
                     str_cat("component ", c, " indexes dimension ", c, " of data ", shape_to_string(ds)));
        off += (v < 0 ? v + dim : v) * dstr[c];
      }
      offset[t] = off;
    }
  };
  if (indices.dtype() == DType::kInt32)
    offsets(int32_t{});
  else if (indices.dtype() == DType::kInt64)
    offsets(int64_t{});
  else
    fail(where, ": ", label, " must be int64 (or int32), got ", dtype_name(indices.dtype()));
  // Threads own slice-aligned ranges of the output (offsets are multiples of `slice`): each copies
  // its range of data and applies, in index order, the updates that land in it, so repeated
  // indices resolve as in one pass (the last assignment wins; reductions combine in order).
  const int64_t units = slice ? y.numel() / slice : 0;
  const bool parallel = units > 1 && data.nbytes() >= (int64_t(1) << 20);
  const bool copy = data.nbytes() && y.data() != data.data();
  dispatch_scatter(data.dtype(), where, [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data_as<T>();
    const T* up = updates.data_as<T>();
#pragma omp parallel if (parallel)
    {
      const int64_t nt = omp_get_num_threads(), th = omp_get_thread_num();
      const int64_t lo = units * th / nt * slice, hi = units * (th + 1) / nt * slice;
      if (copy && hi > lo) std::memcpy(out + lo, data.data_as<T>() + lo, static_cast<size_t>(hi - lo) * sizeof(T));
      if (red == Reduction::kNone && slice == 1) {  // element scatter (masked assignment): no memcpy per element
        for (int64_t t = 0; t < tuples; ++t)
          if (offset[t] >= lo && offset[t] < hi) out[offset[t]] = up[t];
      } else {
        for (int64_t t = 0; t < tuples; ++t) {
          if (offset[t] < lo || offset[t] >= hi) continue;
          T* o = out + offset[t];
          const T* u = up + t * slice;
          if (red == Reduction::kNone)
            copy_row_bytes(o, u, slice * static_cast<int64_t>(sizeof(T)));
          else
            for (int64_t j = 0; j < slice; ++j) o[j] = combine(o[j], u[j], red);
        }
      }
    }
  });
}

std::unique_ptr<OpKernel> make_scatter_elements(const KernelInit& init, int levels) {
  const int64_t axis_attr = init.attrs().get_int("axis", 0);
  const Reduction red =
      levels ? parse_reduction(init.attrs().get_string("reduction", "none"), levels, init.where()) : Reduction::kNone;
  const std::string label = input_label(init, 1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor &data = ctx.input(0), &indices = ctx.input(1), &updates = ctx.input(2);
    const int64_t axis = normalize_axis(axis_attr, static_cast<int64_t>(data.rank()), ctx.where());
    Tensor& y = ctx.output(0, data.dtype(), data.shape());
    scatter_elements_cpu(data, indices, updates, axis, red, y, ctx.where(), label);
  });
}

std::unique_ptr<OpKernel> make_scatter_nd(const KernelInit& init, int levels) {
  const Reduction red =
      levels ? parse_reduction(init.attrs().get_string("reduction", "none"), levels, init.where()) : Reduction::kNone;
  const std::string label = input_label(init, 1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor &data = ctx.input(0), &indices = ctx.input(1), &updates = ctx.input(2);
    Tensor& y = ctx.output(0, data.dtype(), data.shape());
    scatter_nd_cpu(data, indices, updates, red, y, ctx.where(), label);
  });
}

}  // namespace pointrt::tensor
