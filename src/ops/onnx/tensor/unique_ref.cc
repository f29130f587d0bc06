#include "ops/onnx/tensor/unique.h"

#include <algorithm>
#include <numeric>

namespace pointrt::tensor {
namespace {

// -1, 0, 1: slice a against slice b, lexicographically over (outer, inner) positions.
template <typename T>
int compare_slices(const T* x, int64_t outer, int64_t dim, int64_t inner, int64_t a, int64_t b) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const T p = x[(o * dim + a) * inner + i], q = x[(o * dim + b) * inner + i];
      if (p < q) return -1;
      if (q < p) return 1;
    }
  return 0;
}

template <typename T>
UniqueResult unique_typed(const T* x, int64_t outer, int64_t dim, int64_t inner, bool sorted) {
  std::vector<int64_t> order(static_cast<size_t>(dim));
  std::iota(order.begin(), order.end(), 0);
  // Stable sort: equal slices stay in position order, so the first of a run is the first occurrence.
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return compare_slices(x, outer, dim, inner, a, b) < 0; });
  UniqueResult r;
  r.inverse.assign(static_cast<size_t>(dim), 0);
  std::vector<int64_t> group_of(static_cast<size_t>(dim));
  for (size_t k = 0; k < order.size(); ++k) {
    if (k == 0 || compare_slices(x, outer, dim, inner, order[k - 1], order[k]) != 0) {
      r.first.push_back(order[k]);
      r.counts.push_back(0);
    }
    r.counts.back()++;
    group_of[order[k]] = static_cast<int64_t>(r.first.size()) - 1;
  }
  std::vector<int64_t> rank_of(r.first.size());
  std::iota(rank_of.begin(), rank_of.end(), 0);
  if (!sorted) {  // renumber groups by first occurrence
    std::vector<int64_t> by_first(r.first.size());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return r.first[a] < r.first[b]; });
    UniqueResult s;
    for (size_t k = 0; k < by_first.size(); ++k) {
      rank_of[by_first[k]] = static_cast<int64_t>(k);
      s.first.push_back(r.first[by_first[k]]);
      s.counts.push_back(r.counts[by_first[k]]);
    }
    r.first = std::move(s.first);
    r.counts = std::move(s.counts);
  }
  for (int64_t p = 0; p < dim; ++p) r.inverse[p] = rank_of[group_of[p]];
  return r;
}

}  // namespace

UniqueResult unique_ref(const Tensor& x, int64_t outer, int64_t dim, int64_t inner, bool sorted) {
  if (x.dtype() == DType::kFloat16) {
    std::vector<float> f(static_cast<size_t>(x.numel()));
    for (size_t i = 0; i < f.size(); ++i) f[i] = half_to_float(x.data_as<uint16_t>()[i]);
    return unique_typed(f.data(), outer, dim, inner, sorted);
  }
  UniqueResult r;
  dispatch_all(x.dtype(), "Unique", [&](auto tag) {
    using T = decltype(tag);
    r = unique_typed(x.data_as<T>(), outer, dim, inner, sorted);
  });
  return r;
}

}  // namespace pointrt::tensor
