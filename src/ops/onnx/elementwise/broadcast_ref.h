// Naive reference of the broadcasting engine, the test oracle: every output element's input
// positions are recomputed from its multi-index with no collapsing, no fast paths, no threads.
#pragma once

#include <vector>

#include "core/common.h"

namespace pointrt::elementwise::bcast_ref {

/// Flat position in `in_shape` of the output element with multi-index `out_index` (numpy rules).
inline int64_t source_offset(const Shape& in_shape, const std::vector<int64_t>& out_index) {
  const size_t off = out_index.size() - in_shape.size();
  int64_t pos = 0;
  for (size_t d = 0; d < in_shape.size(); ++d) {
    const int64_t i = in_shape[d] == 1 ? 0 : out_index[off + d];
    pos = pos * in_shape[d] + i;
  }
  return pos;
}

inline std::vector<int64_t> unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

template <typename O, typename A, typename B, typename F>
void binary(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, O* out, const Shape& out_shape, F f) {
  const int64_t n = shape_numel(out_shape);
  for (int64_t i = 0; i < n; ++i) {
    const auto idx = unravel(i, out_shape);
    out[i] = f(a[source_offset(a_shape, idx)], b[source_offset(b_shape, idx)]);
  }
}

template <typename O, typename A, typename B, typename C, typename F>
void ternary(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, const C* c, const Shape& c_shape,
             O* out, const Shape& out_shape, F f) {
  const int64_t n = shape_numel(out_shape);
  for (int64_t i = 0; i < n; ++i) {
    const auto idx = unravel(i, out_shape);
    out[i] = f(a[source_offset(a_shape, idx)], b[source_offset(b_shape, idx)], c[source_offset(c_shape, idx)]);
  }
}

}  // namespace pointrt::elementwise::bcast_ref
