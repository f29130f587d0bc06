#include "ops/onnx/tensor/expand.h"

#include <cstring>

#include "core/checked_size.h"

namespace pointrt::tensor {

Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& where) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(where, ": shapes ", shape_to_string(a), " and ", shape_to_string(b), " do not broadcast (dimension ", i,
           ": ", da, " vs ", db, ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Strides broadcast_source_strides(const Shape& x, const Shape& out) {
  const size_t r = out.size(), pad = r - x.size();
  const Strides xs = contiguous_strides(x);
  Strides src(r, 0);
  for (size_t d = pad; d < r; ++d) src[d] = x[d - pad] == 1 ? 0 : xs[d - pad];
  return src;
}

void expand_cpu(const Tensor& x, Tensor& y) {
  strided_copy(x.data(), 0, y.shape(), broadcast_source_strides(x.shape(), y.shape()), y.data(), dtype_size(x.dtype()));
}

Shape tile_shape(const Shape& in, const std::vector<int64_t>& repeats, const std::string& where) {
  if (repeats.size() != in.size())
    fail(where, ": 'repeats' has ", repeats.size(), " values but the input ", shape_to_string(in), " has rank ",
         in.size());
  Shape out(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    if (repeats[d] < 0) fail(where, ": 'repeats' holds a negative value ", repeats[d], " for axis ", d);
    out[d] = checked_dim_product(in[d], repeats[d], where);
  }
  return out;
}

void tile_cpu(const Tensor& x, const std::vector<int64_t>& repeats, Tensor& y) {
  const Strides xs = contiguous_strides(x.shape());
  Shape shape;
  Strides src;
  for (size_t d = 0; d < x.rank(); ++d) {
    shape.push_back(repeats[d]);
    src.push_back(0);
    shape.push_back(x.dim(d));
    src.push_back(xs[d]);
  }
  strided_copy(x.data(), 0, shape, src, y.data(), dtype_size(x.dtype()));
}

// Naive references: per output element, index arithmetic from the definitions.
void expand_ref(const Tensor& x, Tensor& y) {
  const size_t es = dtype_size(x.dtype()), pad = y.rank() - x.rank();
  std::vector<int64_t> o(y.rank(), 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    int64_t off = 0;
    for (size_t d = 0; d < x.rank(); ++d) off = off * x.dim(d) + (x.dim(d) == 1 ? 0 : o[d + pad]);
    std::memcpy(static_cast<char*>(y.data()) + n * es, static_cast<const char*>(x.data()) + off * es, es);
    next_index(o, y.shape());
  }
}

void tile_ref(const Tensor& x, const std::vector<int64_t>& repeats, Tensor& y) {
  const size_t es = dtype_size(x.dtype());
  std::vector<int64_t> o(y.rank(), 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    int64_t off = 0;
    for (size_t d = 0; d < x.rank(); ++d) off = off * x.dim(d) + o[d] % x.dim(d);
    std::memcpy(static_cast<char*>(y.data()) + n * es, static_cast<const char*>(x.data()) + off * es, es);
    next_index(o, y.shape());
  }
}

}  // namespace pointrt::tensor
