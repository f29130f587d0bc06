// Naive Gather / GatherElements / GatherND on multi-indices (indices assumed valid).
#include "ops/onnx/tensor/gather.h"

namespace pointrt::tensor {

namespace {
int64_t wrap(int64_t v, int64_t n) { return v < 0 ? v + n : v; }
void copy_one(Tensor& y, int64_t yi, const Tensor& x, int64_t xi) {
  const size_t es = dtype_size(x.dtype());
  std::memcpy(static_cast<char*>(y.data()) + yi * es, static_cast<const char*>(x.data()) + xi * es, es);
}
int64_t flat(const std::vector<int64_t>& i, const Shape& s) {
  int64_t off = 0;
  for (size_t d = 0; d < s.size(); ++d) off = off * s[d] + i[d];
  return off;
}
}  // namespace

void gather_ref(const Tensor& data, const Tensor& indices, int64_t axis, Tensor& y) {
  const size_t q = indices.rank();
  std::vector<int64_t> o(y.rank(), 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    std::vector<int64_t> qi(o.begin() + axis, o.begin() + axis + q), xi;
    xi.insert(xi.end(), o.begin(), o.begin() + axis);
    xi.push_back(wrap(index_at(indices, flat(qi, indices.shape())), data.dim(axis)));
    xi.insert(xi.end(), o.begin() + axis + q, o.end());
    copy_one(y, n, data, flat(xi, data.shape()));
    next_index(o, y.shape());
  }
}

void gather_elements_ref(const Tensor& data, const Tensor& indices, int64_t axis, Tensor& y) {
  std::vector<int64_t> o(y.rank(), 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    std::vector<int64_t> xi = o;
    xi[axis] = wrap(index_at(indices, n), data.dim(axis));
    copy_one(y, n, data, flat(xi, data.shape()));
    next_index(o, y.shape());
  }
}

void gather_nd_ref(const Tensor& data, const Tensor& indices, int64_t batch_dims, Tensor& y) {
  const int64_t k = indices.shape().back();
  const size_t q = indices.rank();
  std::vector<int64_t> o(y.rank(), 0);
  for (int64_t n = 0; n < y.numel(); ++n) {
    // o = (batch..., tuple position..., slice...)
    std::vector<int64_t> tuple_pos(o.begin(), o.begin() + (q - 1));
    int64_t t = flat(tuple_pos, Shape(indices.shape().begin(), indices.shape().end() - 1));
    std::vector<int64_t> xi(o.begin(), o.begin() + batch_dims);
    for (int64_t c = 0; c < k; ++c) xi.push_back(wrap(index_at(indices, t * k + c), data.dim(batch_dims + c)));
    xi.insert(xi.end(), o.begin() + (q - 1), o.end());
    copy_one(y, n, data, flat(xi, data.shape()));
    next_index(o, y.shape());
  }
}

}  // namespace pointrt::tensor
