#include "ops/onnx/tensor/tensor_utils.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/copy_row.h"
#include "core/transpose16.h"

namespace pointrt::tensor {

const std::vector<DType> kCopyTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt8,
                                       DType::kInt16,   DType::kInt32,   DType::kInt64,   DType::kUInt8,
                                       DType::kUInt16,  DType::kUInt32,  DType::kUInt64,  DType::kBool};
const std::vector<DType> kMoveTypes = [] {
  std::vector<DType> t = kCopyTypes;
  t.insert(t.end(), {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ,
                     DType::kUInt4, DType::kInt4});
  return t;
}();
const std::vector<DType> kIndexTypes = {DType::kInt32, DType::kInt64};

Strides contiguous_strides(const Shape& s) {
  Strides st(s.size());
  int64_t acc = 1;
  for (size_t d = s.size(); d-- > 0;) {
    st[d] = acc;
    // A tensor with a zero dim may have other dims whose product exceeds int64 (the fuzzer found
    // [.., 0, ..] with 2^51 x 2^20): its strides address nothing, so they saturate, not overflow.
    if (__builtin_mul_overflow(acc, s[d], &acc)) acc = std::numeric_limits<int64_t>::max();
  }
  return st;
}

std::string input_label(const KernelInit& init, size_t i) {
  const Value* v = init.input_value(i);
  if (!v) return str_cat("input ", i);
  return str_cat("input ", i, " ('", v->name, "')");
}

std::vector<int64_t> read_int_list(const Tensor& t, const std::string& where, const std::string& what) {
  if (t.rank() > 1) fail(where, ": ", what, " must be a 1-D tensor, got shape ", shape_to_string(t.shape()));
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  if (t.dtype() == DType::kInt64) {
    if (!r.empty()) std::memcpy(r.data(), t.data(), r.size() * 8);
  } else if (t.dtype() == DType::kInt32) {
    const int32_t* p = t.data_as<int32_t>();
    for (size_t i = 0; i < r.size(); ++i) r[i] = p[i];
  } else {
    fail(where, ": ", what, " must be int32 or int64, got ", dtype_name(t.dtype()));
  }
  return r;
}

int64_t read_int_scalar(const Tensor& t, const std::string& where, const std::string& what) {
  if (t.numel() != 1) fail(where, ": ", what, " must hold exactly one value, got shape ", shape_to_string(t.shape()));
  int64_t v = 0;
  if (t.dtype() == DType::kFloat16) return static_cast<int64_t>(half_to_float(*t.data_as<uint16_t>()));
  dispatch_all(t.dtype(), where.c_str(), [&](auto tag) {
    using T = decltype(tag);
    v = static_cast<int64_t>(*t.data_as<T>());
  });
  return v;
}

void fail_index(const std::string& where, const std::string& input, int64_t value, int64_t position, int64_t n,
                const std::string& context) {
  if (n == 0)
    fail(where, ": ", input, " holds ", value, " at position ", position, ", but ", context,
         " is empty (size 0), so no index is valid");
  fail(where, ": ", input, " holds ", value, " at position ", position, ", outside the valid range [", -n, ", ", n - 1,
       "] (", context, ")");
}

std::vector<int64_t> normalized_indices(const Tensor& indices, int64_t axis, const Shape& data_shape,
                                        const std::string& where, const std::string& input) {
  const int64_t n = data_shape[static_cast<size_t>(axis)];
  const int64_t count = indices.numel();
  std::vector<int64_t> r(static_cast<size_t>(count));
  auto run = [&](auto tag) {
    using I = decltype(tag);
    const I* p = indices.data_as<I>();
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = static_cast<int64_t>(p[i]);
      // The context string is built only here: this runs on every Gather/Scatter of a graph.
      if (v < -n || v >= n)
        fail_index(where, input, v, i, n, str_cat("axis ", axis, " of data ", ShapeText{data_shape}));
      r[i] = v < 0 ? v + n : v;
    }
  };
  if (indices.dtype() == DType::kInt64)
    run(int64_t{});
  else if (indices.dtype() == DType::kInt32)
    run(int32_t{});
  else
    fail(where, ": ", input, " must be int32 or int64, got ", dtype_name(indices.dtype()));
  return r;
}

namespace {

// Drop size-1 dims and merge neighbours whose source is contiguous across them.
void coalesce(Shape& shape, Strides& strides) {
  Shape s2;
  Strides st2;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!s2.empty() && st2.back() == strides[d] * shape[d]) {
      s2.back() *= shape[d];
      st2.back() = strides[d];
    } else {
      s2.push_back(shape[d]);
      st2.push_back(strides[d]);
    }
  }
  shape.swap(s2);
  strides.swap(st2);
}

// A batched 2D transpose between output dim `d1` (source stride 1) and the innermost output dim:
// tiles of 16 x 16 so both sides stay in cache (4-byte elements: whole tiles through an AVX-512
// register transpose). d1 need not be the second-innermost dim: for yanx27's permute(0, 3, 2, 1)
// ([S, K, C] -> [C, K, S]) it is the outermost, and walking output rows instead would read every
// element from another cache line.
template <typename E>
void copy_batched_transpose(const E* src, int64_t src_offset, const Shape& shape, const Strides& strides, int d1,
                            E* dst, bool parallel) {
  const int rank = static_cast<int>(shape.size());
  const int64_t total = shape_numel(shape), inner = shape[rank - 1], inner_stride = strides[rank - 1];
  const int64_t rows = shape[d1];
  const Strides out_strides = contiguous_strides(shape);
  const int64_t row_stride = out_strides[d1];  // in the output, between consecutive d1 indices
  constexpr int64_t kTile = 16;
  const int64_t row_tiles = (rows + kTile - 1) / kTile;
  const int64_t batches = total / (rows * inner);
  const int64_t jobs = batches * row_tiles;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t job = 0; job < jobs; ++job) {
    int64_t batch = job / row_tiles, a0 = (job % row_tiles) * kTile;
    int64_t base = src_offset, out_base = 0, rem = batch;
    for (int d = rank - 2; d >= 0; --d) {  // the batch dims: all but d1 and the innermost
      if (d == d1) continue;
      const int64_t c = rem % shape[d];
      rem /= shape[d];
      base += c * strides[d];
      out_base += c * out_strides[d];
    }
    E* out = dst + out_base;
    const int64_t a1 = std::min(rows, a0 + kTile);
    for (int64_t b0 = 0; b0 < inner; b0 += kTile) {
      const int64_t b1 = std::min(inner, b0 + kTile);
#if defined(__AVX512F__)
      if constexpr (sizeof(E) == 4) {  // a whole tile: 16 loads, a register transpose, 16 stores
        if (a1 - a0 == kTile && b1 - b0 == kTile) {
          transpose_tile16(reinterpret_cast<const uint32_t*>(src + base + a0 + b0 * inner_stride), inner_stride,
                           reinterpret_cast<uint32_t*>(out + a0 * row_stride + b0), row_stride);
          continue;
        }
      }
#endif
      for (int64_t a = a0; a < a1; ++a) {
        const E* s = src + base + a;
        E* o = out + a * row_stride;
        for (int64_t b = b0; b < b1; ++b) o[b] = s[b * inner_stride];
      }
    }
  }
}

// do_rows(r0, r1) over [0, rows): one contiguous range per thread when `parallel`, so each thread
// decomposes its first row once and then steps an odometer.
template <typename F>
void for_row_ranges(int64_t rows, bool parallel, const F& do_rows) {
  if (parallel && rows > 1) {
#pragma omp parallel
    {
      const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      const int64_t chunk = (rows + nt - 1) / nt;
      do_rows(std::min(rows, t * chunk), std::min(rows, (t + 1) * chunk));
    }
  } else {
    do_rows(0, rows);
  }
}

// Contiguous rows (inner stride 1) whose outer dims come from the source in another order (a
// Transpose that keeps the last axis, e.g. the attention head split (0, 2, 1, 3)): the rows are
// walked in the source's order, so the reads stream and each output row is still written whole.
// In output order the reads would jump between several distant source streams.
// The order of the outer dims by source stride, or empty when it is the output's own order or a
// stride is not positive (broadcast or reversed views keep the output-order walk).
std::vector<int> source_row_order(const Shape& shape, const Strides& strides, size_t row_bytes) {
  const int outer_rank = static_cast<int>(shape.size()) - 1;
  if (outer_rank < 2 || strides[outer_rank] != 1 || row_bytes < 64) return {};
  for (int d = 0; d < outer_rank; ++d)
    if (strides[d] <= 0) return {};
  std::vector<int> order(outer_rank);
  for (int d = 0; d < outer_rank; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return strides[a] > strides[b]; });
  for (int d = 0; d < outer_rank; ++d)
    if (order[d] != d) return order;
  return {};
}

template <typename E>
void copy_rows_in_source_order(const E* src, int64_t src_offset, const Shape& shape, const Strides& strides, E* dst,
                               const std::vector<int>& order, bool parallel) {
  const int outer_rank = static_cast<int>(order.size());
  const int64_t inner = shape[outer_rank];
  Strides out_strides(outer_rank);
  for (int64_t d = outer_rank - 1, s = inner; d >= 0; s *= shape[d], --d) out_strides[d] = s;
  Shape dims(outer_rank);
  Strides from(outer_rank), to(outer_rank);
  for (int i = 0; i < outer_rank; ++i) {
    dims[i] = shape[order[i]];
    from[i] = strides[order[i]];
    to[i] = out_strides[order[i]];
  }
  const int64_t rows = shape_numel(dims);
  auto do_rows = [&](int64_t r0, int64_t r1) {
    if (r0 >= r1) return;
    std::vector<int64_t> idx(outer_rank);
    int64_t rem = r0, s = src_offset, o = 0;
    for (int d = outer_rank - 1; d >= 0; --d) {
      idx[d] = rem % dims[d];
      rem /= dims[d];
      s += idx[d] * from[d];
      o += idx[d] * to[d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      copy_row_bytes(dst + o, src + s, inner * static_cast<int64_t>(sizeof(E)));
      for (int d = outer_rank - 1; d >= 0; --d) {  // odometer step
        s += from[d];
        o += to[d];
        if (++idx[d] < dims[d]) break;
        s -= idx[d] * from[d];
        o -= idx[d] * to[d];
        idx[d] = 0;
      }
    }
  };
  for_row_ranges(rows, parallel, do_rows);
}

template <typename E>
void copy_typed(const E* src, int64_t src_offset, const Shape& shape, const Strides& strides, E* dst) {
  const int rank = static_cast<int>(shape.size());
  if (rank == 0) {
    dst[0] = src[src_offset];
    return;
  }
  const int64_t total = shape_numel(shape);
  const int64_t inner = shape[rank - 1];
  const int64_t inner_stride = strides[rank - 1];
  const bool parallel = worth_parallel(total * static_cast<int64_t>(sizeof(E)));

  // Batched 2D transpose: an outer output dim walks the source contiguously (stride 1; the
  // innermost one nearest to it when several do).
  if (rank >= 2 && inner_stride != 1 && inner_stride != 0)
    for (int d1 = rank - 2; d1 >= 0; --d1)
      if (strides[d1] == 1) return copy_batched_transpose(src, src_offset, shape, strides, d1, dst, parallel);
  const std::vector<int> order = source_row_order(shape, strides, static_cast<size_t>(inner) * sizeof(E));
  if (!order.empty()) return copy_rows_in_source_order(src, src_offset, shape, strides, dst, order, parallel);

  // Rows of the innermost dim; each thread decomposes its first row once, then steps an odometer.
  const int64_t rows = total / inner;
  const int outer_rank = rank - 1;
  auto do_rows = [&](int64_t r0, int64_t r1) {
    if (r0 >= r1) return;
    std::vector<int64_t> idx(outer_rank);
    int64_t rem = r0, base = src_offset;
    for (int d = outer_rank - 1; d >= 0; --d) {
      idx[d] = rem % shape[d];
      rem /= shape[d];
      base += idx[d] * strides[d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      E* o = dst + r * inner;
      const E* s = src + base;
      if (inner_stride == 1)
        copy_row_bytes(o, s, inner * static_cast<int64_t>(sizeof(E)));
      else if (inner_stride == 0)
        std::fill(o, o + inner, *s);
      else
        for (int64_t j = 0; j < inner; ++j) o[j] = s[j * inner_stride];
      for (int d = outer_rank - 1; d >= 0; --d) {  // odometer step
        base += strides[d];
        if (++idx[d] < shape[d]) break;
        base -= idx[d] * strides[d];
        idx[d] = 0;
      }
    }
  };
  for_row_ranges(rows, parallel, do_rows);
}

}  // namespace

void strided_copy(const void* src, int64_t src_offset, const Shape& out_shape, const Strides& src_strides, void* dst,
                  size_t elem_size) {
  if (shape_numel(out_shape) == 0) return;
  Shape shape = out_shape;
  Strides strides = src_strides;
  coalesce(shape, strides);
  switch (elem_size) {
    case 1:
      copy_typed(static_cast<const uint8_t*>(src), src_offset, shape, strides, static_cast<uint8_t*>(dst));
      return;
    case 2:
      copy_typed(static_cast<const uint16_t*>(src), src_offset, shape, strides, static_cast<uint16_t*>(dst));
      return;
    case 4:
      copy_typed(static_cast<const uint32_t*>(src), src_offset, shape, strides, static_cast<uint32_t*>(dst));
      return;
    case 8:
      copy_typed(static_cast<const uint64_t*>(src), src_offset, shape, strides, static_cast<uint64_t*>(dst));
      return;
    default: fail("strided_copy: unsupported element size ", elem_size);
  }
}

void strided_copy_ref(const void* src, int64_t src_offset, const Shape& out_shape, const Strides& src_strides,
                      void* dst, size_t elem_size) {
  const int64_t total = shape_numel(out_shape);
  std::vector<int64_t> idx(out_shape.size(), 0);
  for (int64_t o = 0; o < total; ++o) {
    int64_t s = src_offset;
    for (size_t d = 0; d < idx.size(); ++d) s += idx[d] * src_strides[d];
    std::memcpy(static_cast<char*>(dst) + o * elem_size, static_cast<const char*>(src) + s * elem_size, elem_size);
    next_index(idx, out_shape);
  }
}

}  // namespace pointrt::tensor
