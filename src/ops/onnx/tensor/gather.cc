#include "ops/onnx/tensor/gather.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/copy_row.h"
#include "ops/onnx/tensor/expand.h"

namespace pointrt::tensor {

Shape gather_shape(const Shape& data, const Shape& indices, int64_t axis) {
  Shape s(data.begin(), data.begin() + axis);
  s.insert(s.end(), indices.begin(), indices.end());
  s.insert(s.end(), data.begin() + axis + 1, data.end());
  return s;
}

namespace {
// How far ahead GatherND requests its source rows when the data is far larger than the cache
// (prefetches never fault, so an index not yet validated is harmless), and the request: the
// cache lines of the row's first 256 bytes. Rows at random places of a large tensor each miss
// the cache; one at a time the loop waited for each in turn (rows3/1e7: 0.93 -> 0.84 of ORT).
// With the data in cache the second decoding of each index only costs (rows3/1e5: 0.58 -> 0.93).
constexpr int64_t kPrefetchAhead = 16;
constexpr int64_t kPrefetchDataBytes = int64_t(16) << 20;
inline void prefetch_row(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  for (int64_t at = 0; at < std::min<int64_t>(bytes, 256); at += 64) __builtin_prefetch(c + at, 0, 3);
}

template <typename E>
void gather_rows(const E* src, const std::vector<int64_t>& idx, int64_t outer, int64_t n, int64_t inner, E* dst) {
  const int64_t count = static_cast<int64_t>(idx.size());
  const bool parallel = worth_parallel(outer * count * inner * static_cast<int64_t>(sizeof(E)));
  if (inner == 1) {  // element gather
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outer; ++o) {
      const E* s = src + o * n;
      E* d = dst + o * count;
      for (int64_t q = 0; q < count; ++q) d[q] = s[idx[q]];
    }
    return;
  }
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t q = 0; q < count; ++q) {
      copy_row_bytes(dst + (o * count + q) * inner, src + (o * n + idx[q]) * inner,
                     inner * static_cast<int64_t>(sizeof(E)));
    }
}
}  // namespace

void gather_cpu(const Tensor& data, const Tensor& indices, int64_t axis, Tensor& y, const std::string& where,
                const std::string& label) {
  const int64_t n = data.dim(axis);
  std::vector<int64_t> idx = normalized_indices(indices, axis, data.shape(), where, label);
  if (y.numel() == 0) return;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.dim(d);
  for (size_t d = axis + 1; d < data.rank(); ++d) inner *= data.dim(d);
  dispatch_by_size(data.dtype(), where.c_str(), [&](auto tag) {
    using E = decltype(tag);
    gather_rows(data.data_as<E>(), idx, outer, n, inner, y.data_as<E>());
  });
}

void check_gather_elements(const Tensor& data, const Shape& index_shape, int64_t axis, const std::string& where) {
  if (index_shape.size() != data.rank())
    fail(where, ": indices ", shape_to_string(index_shape), " must have the rank of data ",
         shape_to_string(data.shape()));
  for (size_t d = 0; d < data.rank(); ++d)
    if (static_cast<int64_t>(d) != axis && index_shape[d] > data.dim(d))
      fail(where, ": indices ", shape_to_string(index_shape), " exceed data ", shape_to_string(data.shape()),
           " on dimension ", d);
}

namespace {

// GatherElements over rows of `inner` output elements, indices of type I read in place (no
// normalised copy). The index of output position c is idx[sum c[d] * istr[d]]: contiguous
// strides for a plain GatherElements, 0 on the dims an Expand folded into the node broadcasts.
// A row whose indices are all equal, off the last axis (torch.gather on an expanded index: kNN
// grouping), is one contiguous copy. Returns the flat output position of the first row holding an
// out-of-range index, or -1; the caller reports it (no throwing inside the parallel loop).
template <typename E, typename I>
int64_t gather_elements_rows(const E* src, const I* idx, E* dst, const Shape& os, const Strides& ds,
                             const Strides& istr, int64_t axis, int64_t n) {
  const int rank = static_cast<int>(os.size());
  const int64_t inner = os[rank - 1], rows = shape_numel(os) / inner, axis_stride = ds[axis];
  const bool axis_last = axis == rank - 1, index_row_broadcast = istr[rank - 1] == 0;
  int64_t first_bad = -1;
#pragma omp parallel for schedule(static) if (worth_parallel(rows * inner * static_cast <int64_t>(sizeof(E))))
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = 0, ibase = 0, rem = r;
    for (int d = rank - 2; d >= 0; --d) {  // row bases in data (axis coordinate left out) and indices
      const int64_t c = rem % os[d];
      rem /= os[d];
      if (d != axis) base += c * ds[d];
      ibase += c * istr[d];
    }
    const I* ix = idx + ibase;
    E* o = dst + r * inner;
    bool bad = false, uniform = index_row_broadcast || !axis_last;
    if (index_row_broadcast) {
      const int64_t v = static_cast<int64_t>(ix[0]);
      bad = v < -n || v >= n;
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t v = static_cast<int64_t>(ix[j]);
        bad |= v < -n || v >= n;
        uniform &= ix[j] == ix[0];
      }
    }
    if (bad) {
#pragma omp critical(gather_elements_bad)
      if (first_bad < 0 || r * inner < first_bad) first_bad = r * inner;
      continue;
    }
    if (uniform) {
      const int64_t v = static_cast<int64_t>(ix[0]), k = v < 0 ? v + n : v;
      if (axis_last)
        std::fill(o, o + inner, src[base + k]);
      else
        std::memcpy(o, src + base + k * axis_stride, static_cast<size_t>(inner) * sizeof(E));
    } else if (axis_last) {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t v = static_cast<int64_t>(ix[j]);
        o[j] = src[base + (v < 0 ? v + n : v)];
      }
    } else {
      for (int64_t j = 0; j < inner; ++j) {
        const int64_t v = static_cast<int64_t>(ix[j]);
        o[j] = src[base + j + (v < 0 ? v + n : v) * axis_stride];
      }
    }
  }
  return first_bad;
}

}  // namespace

void gather_elements_cpu(const Tensor& data, const Tensor& indices, const Shape& index_shape, int64_t axis, Tensor& y,
                         const std::string& where, const std::string& label) {
  check_gather_elements(data, index_shape, axis, where);
  if (indices.dtype() != DType::kInt64 && indices.dtype() != DType::kInt32)
    fail(where, ": ", label, " must be int32 or int64, got ", dtype_name(indices.dtype()));
  const int64_t n = data.dim(axis);
  if (shape_numel(index_shape) == 0) return;
  if (data.rank() == 0) fail(where, ": GatherElements needs data of rank >= 1");
  const Strides ds = contiguous_strides(data.shape());
  const Strides istr = broadcast_source_strides(indices.shape(), index_shape);
  int64_t bad = -1;
  dispatch_by_size(data.dtype(), where.c_str(), [&](auto tag) {
    using E = decltype(tag);
    if (indices.dtype() == DType::kInt64)
      bad = gather_elements_rows(data.data_as<E>(), indices.data_as<int64_t>(), y.data_as<E>(), index_shape, ds, istr,
                                 axis, n);
    else
      bad = gather_elements_rows(data.data_as<E>(), indices.data_as<int32_t>(), y.data_as<E>(), index_shape, ds, istr,
                                 axis, n);
  });
  if (bad < 0) return;
  // The first bad index of the first bad row, at its position in the (expanded) indices.
  const int rank = static_cast<int>(index_shape.size());
  for (int64_t i = bad;; ++i) {
    int64_t off = 0, rem = i;
    for (int d = rank - 1; d >= 0; --d) {
      off += (rem % index_shape[d]) * istr[d];
      rem /= index_shape[d];
    }
    const int64_t v = index_at(indices, off);
    if (v < -n || v >= n)
      fail_index(where, label, v, i, n, str_cat("axis ", axis, " of data ", shape_to_string(data.shape())));
  }
}

Shape gather_nd_shape(const Shape& data, const Shape& indices, int64_t batch_dims, const std::string& where) {
  const int64_t r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(indices.size());
  if (r < 1 || q < 1)
    fail(where, ": data and indices must have rank >= 1, got ", shape_to_string(data), " and ",
         shape_to_string(indices));
  if (batch_dims < 0 || batch_dims >= std::min(r, q))
    fail(where, ": batch_dims ", batch_dims, " must be in [0, ", std::min(r, q) - 1, "] for data ",
         shape_to_string(data), " and indices ", shape_to_string(indices));
  for (int64_t d = 0; d < batch_dims; ++d)
    if (data[d] != indices[d])
      fail(where, ": batch dimension ", d, " differs: data ", shape_to_string(data), ", indices ",
           shape_to_string(indices));
  const int64_t k = indices.back();
  if (k < 1 || k > r - batch_dims)
    fail(where, ": the last dimension of indices ", shape_to_string(indices), " is ", k, ", must be in [1, ",
         r - batch_dims, "] for data ", shape_to_string(data), " with batch_dims ", batch_dims);
  Shape s(indices.begin(), indices.end() - 1);
  s.insert(s.end(), data.begin() + batch_dims + k, data.end());
  return s;
}

void gather_nd_cpu(const Tensor& data, const Tensor& indices, int64_t batch_dims, Tensor& y, const std::string& where,
                   const std::string& label) {
  const Shape& ds = data.shape();
  const int64_t k = indices.shape().back();
  int64_t batch = 1, slice = 1, per_batch_data = 1;
  for (int64_t d = 0; d < batch_dims; ++d) batch *= ds[d];
  for (size_t d = batch_dims; d < ds.size(); ++d) per_batch_data *= ds[d];
  for (size_t d = batch_dims + k; d < ds.size(); ++d) slice *= ds[d];
  const int64_t tuples = indices.numel() / k;
  const int64_t tuples_per_batch = batch ? tuples / batch : 0;
  const Strides dstr = contiguous_strides(ds);
  // The element offset of tuple t within its batch, or -1 - (the flat position of its first
  // out-of-range component).
  auto tuple_offset = [&](auto tag, int64_t t) -> int64_t {
    using I = decltype(tag);
    const I* ix = indices.data_as<I>() + t * k;
    int64_t off = 0;
    for (int64_t c = 0; c < k; ++c) {
      const int64_t dim = ds[batch_dims + c], v = static_cast<int64_t>(ix[c]);
      if (v < -dim || v >= dim) return -1 - (t * k + c);
      off += (v < 0 ? v + dim : v) * dstr[batch_dims + c];
    }
    return off;
  };
  const size_t es = dtype_size(data.dtype());
  const char* src = static_cast<const char*>(data.data());
  char* dst = static_cast<char*>(y.data());
  // Validation and copy in one parallel sweep (rows of a few bytes: points' xyz); the first bad
  // index is reported after it. Row sizes of 4-16 bytes are copied with compile-time sizes (a
  // memcpy call per 12-byte row cost more than the row).
  int64_t first_bad = tuples * k;
  auto sweep = [&](auto tag, auto row_bytes, auto prefetch) {
    constexpr size_t kBytes = decltype(row_bytes)::value;
    constexpr bool kPrefetch = decltype(prefetch)::value;
    const size_t bytes = kBytes ? kBytes : static_cast<size_t>(slice) * es;
#pragma omp parallel for schedule(static) \
    reduction(min                         \
              : first_bad) if (worth_parallel(tuples * static_cast <int64_t>(bytes + 8 * k)))
    for (int64_t t = 0; t < tuples; ++t) {
      if (kPrefetch && t + kPrefetchAhead < tuples) {
        const int64_t ahead = t + kPrefetchAhead, off_ahead = tuple_offset(tag, ahead);
        if (off_ahead >= 0) {
          const int64_t b = tuples_per_batch ? ahead / tuples_per_batch : 0;
          prefetch_row(src + (b * per_batch_data + off_ahead) * static_cast<int64_t>(es), static_cast<int64_t>(bytes));
        }
      }
      const int64_t off = tuple_offset(tag, t);
      if (off < 0) {
        first_bad = std::min(first_bad, -1 - off);
        continue;
      }
      const int64_t b = tuples_per_batch ? t / tuples_per_batch : 0;
      const char* from = src + (b * per_batch_data + off) * static_cast<int64_t>(es);
      if constexpr (kBytes != 0)
        std::memcpy(dst + t * bytes, from, kBytes);
      else  // nothing when the slice is empty (y may have no storage)
        copy_row_bytes(dst + t * bytes, from, static_cast<int64_t>(bytes));
    }
  };
  auto sized = [&](auto tag, auto prefetch) {
    switch (y.numel() == 0 ? 0 : slice * static_cast<int64_t>(es)) {
      case 4: return sweep(tag, std::integral_constant<size_t, 4>{}, prefetch);
      case 8: return sweep(tag, std::integral_constant<size_t, 8>{}, prefetch);
      case 12: return sweep(tag, std::integral_constant<size_t, 12>{}, prefetch);
      case 16: return sweep(tag, std::integral_constant<size_t, 16>{}, prefetch);
      default: return sweep(tag, std::integral_constant<size_t, 0>{}, prefetch);
    }
  };
  const bool large = static_cast<int64_t>(data.nbytes()) >= kPrefetchDataBytes;
  auto run = [&](auto tag) { return large ? sized(tag, std::true_type{}) : sized(tag, std::false_type{}); };
  indices.dtype() == DType::kInt64 ? run(int64_t{}) : run(int32_t{});
  if (first_bad < tuples * k) {
    const int64_t c = first_bad % k, dim = ds[batch_dims + c];
    fail_index(where, label, index_at(indices, first_bad), first_bad, dim,
               str_cat("component ", c, " indexes dimension ", batch_dims + c, " of data ", shape_to_string(ds)));
  }
}

}  // namespace pointrt::tensor
