// The numpy-style broadcasting engine shared by every elementwise kernel (and by any family that
// needs "apply f over broadcast inputs": Where, PRelu, Expand-like ops, fused post-ops).
//
// How it works
//  1. broadcast_shape() computes the output shape (ONNX multidirectional broadcasting, i.e. numpy
//     rules: shapes are right-aligned, a dimension of 1 stretches) and names both shapes when
//     they do not fit.
//  2. BroadcastPlan collapses the output's dimensions: size-1 output dimensions are dropped, and
//     neighbouring dimensions are merged whenever every input is either "full" in both or
//     "broadcast" (size 1) in both. [N,C,H,W] + [1,C,1,1] becomes [N, C, H*W] with strides
//     a: (C*HW, HW, 1), b: (0, 1, 0); same-shape inputs become one flat dimension.
//  3. The innermost collapsed dimension is run by one of four tight loops chosen by the inner
//     strides: vector-vector, vector-scalar, scalar-vector, scalar-scalar. Each is a plain
//     indexed loop over restrict-free pointers with an inlined functor, so the compiler
//     vectorises it. Outer dimensions advance an odometer once per row, never per element.
//  4. Large outputs are split into equal element ranges, one per OpenMP thread; a range may start
//     or end inside a row.
//
// Functors are plain callables (lambdas): out = f(a, b). They must not throw; checks that can
// fail (integer division by zero) are done on the inputs before the loop runs.
//
// Use from any kernel:
//   const Shape out_shape = bcast::broadcast_shape(a.shape(), b.shape(), ctx.where());
//   Tensor& y = ctx.output(0, DType::kFloat32, out_shape);
//   bcast::binary(a.data_as<float>(), a.shape(), b.data_as<float>(), b.shape(),
//                 y.data_as<float>(), out_shape, [](float x, float z) { return x * z; });
// Input and output element types may all differ (O f(A, B)). The naive oracle with the same
// signatures is broadcast_ref.h.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/common.h"

namespace pointrt::elementwise::bcast {

/// Outputs with at least this many elements are split across OpenMP threads. Measured on 2
/// cores with GNU OpenMP's default wait policy (threads spin a while between regions): 2 threads
/// pay from about 6e4 float adds (1e5: about 25% faster), not at 3e4. With OMP_WAIT_POLICY=passive
/// every region wakes sleeping threads and 1e5 gets several times slower at 2 threads.
constexpr int64_t kParallelMinElements = 1 << 16;

/// Output shape of numpy broadcasting of `shapes`. `names[i]` labels shape i in the error
/// ("input 0"); the error names `where`, both offending shapes and the dimension.
inline Shape broadcast_shape(const std::vector<const Shape*>& shapes, const std::string& where,
                             const std::vector<std::string>& names = {}) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank, 1);
  std::vector<int> owner(rank, -1);  // which input set each output dimension (for the message)
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = *shapes[k];
    size_t off = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t v = s[d];
      int64_t& o = out[off + d];
      if (v == o) continue;
      if (v == 1) continue;
      if (o == 1) {
        o = v;
        owner[off + d] = static_cast<int>(k);
        continue;
      }
      auto label = [&](size_t i) { return i < names.size() ? names[i] : str_cat("input ", i); };
      size_t other = owner[off + d] >= 0 ? static_cast<size_t>(owner[off + d]) : 0;
      fail(where, ": shapes cannot be broadcast together: ", label(other), " has shape ",
           shape_to_string(*shapes[other]), " and ", label(k), " has shape ", shape_to_string(s), " (axis ",
           static_cast<int64_t>(d) - static_cast<int64_t>(s.size()), ": ", o, " vs ", v, ")");
    }
  }
  return out;
}
inline Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& where) {
  return broadcast_shape({&a, &b}, where);
}

/// Collapsed iteration space of K inputs broadcast to `out`.
template <int K>
struct BroadcastPlan {
  std::vector<int64_t> dims;                    // collapsed output dims (rank >= 1)
  std::array<std::vector<int64_t>, K> strides;  // element strides per input; 0 = broadcast
  int64_t numel = 0;

  BroadcastPlan(const Shape& out, const std::array<const Shape*, K>& ins) {
    numel = shape_numel(out);
    const size_t rank = out.size();
    // Per output dimension (size-1 ones dropped): is input k broadcast along it?
    std::vector<int64_t> kept;
    std::vector<std::array<bool, K>> flags;
    for (size_t d = 0; d < rank; ++d) {
      if (out[d] == 1) continue;
      std::array<bool, K> f{};
      for (int k = 0; k < K; ++k) {
        const Shape& s = *ins[k];
        size_t off = rank - s.size();
        f[k] = d < off || s[d - off] == 1;
      }
      if (!kept.empty() && flags.back() == f) {
        kept.back() *= out[d];  // merge with the previous dimension
      } else {
        kept.push_back(out[d]);
        flags.push_back(f);
      }
    }
    if (kept.empty()) {  // scalar output
      kept.push_back(1);
      flags.push_back(std::array<bool, K>{});
      for (int k = 0; k < K; ++k) flags.back()[k] = true;
    }
    dims = kept;
    for (int k = 0; k < K; ++k) {
      strides[k].assign(dims.size(), 0);
      int64_t run = 1;
      for (size_t d = dims.size(); d-- > 0;) {
        if (!flags[d][k]) {
          strides[k][d] = run;
          run *= dims[d];
        }
      }
    }
  }
};

namespace detail {

// Odometer over the outer (all but innermost) collapsed dims; tracks each input's row offset.
template <int K>
struct RowCursor {
  const BroadcastPlan<K>& plan;
  std::vector<int64_t> index;  // per outer dim
  std::array<int64_t, K> offset{};

  RowCursor(const BroadcastPlan<K>& p, int64_t row) : plan(p), index(p.dims.size() - 1, 0) {
    for (size_t d = index.size(); d-- > 0;) {
      index[d] = row % p.dims[d];
      row /= p.dims[d];
    }
    for (int k = 0; k < K; ++k) {
      offset[k] = 0;
      for (size_t d = 0; d < index.size(); ++d) offset[k] += index[d] * p.strides[k][d];
    }
  }
  void next() {
    for (size_t d = index.size(); d-- > 0;) {
      ++index[d];
      for (int k = 0; k < K; ++k) offset[k] += plan.strides[k][d];
      if (index[d] < plan.dims[d]) return;
      for (int k = 0; k < K; ++k) offset[k] -= index[d] * plan.strides[k][d];
      index[d] = 0;
    }
  }
};

// Splits [0, numel) into per-thread ranges and calls body(begin, end) for each.
template <typename Body>
void for_ranges(int64_t numel, Body&& body) {
  if (numel <= 0) return;
  if (numel < kParallelMinElements || omp_get_max_threads() == 1 || omp_in_parallel()) {
    body(int64_t{0}, numel);
    return;
  }
#pragma omp parallel
  {
    const int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
    int64_t chunk = (numel + nt - 1) / nt;
    chunk = (chunk + 15) & ~int64_t{15};  // multiples of 16 elements: threads rarely share a line
    int64_t begin = std::min(numel, t * chunk), end = std::min(numel, begin + chunk);
    if (begin < end) body(begin, end);
  }
}

// One copy of each inner loop (called from the serial and the threaded path), kept out of line
// so the vectoriser sees a simple loop with no captured state.
template <typename O, typename A, typename F>
__attribute__((noinline)) void unary_row(const A* a, O* o, int64_t n, const F& f) {
  const F fn = f;
  for (int64_t i = 0; i < n; ++i) o[i] = fn(a[i]);
}

template <typename O, typename A, typename B, typename F>
__attribute__((noinline)) void binary_row(O* o, const A* a, int64_t sa, const B* b, int64_t sb, int64_t n, F& f) {
  if (sa && sb) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  } else if (sa) {
    const B bv = *b;
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
  } else if (sb) {
    const A av = *a;
    for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
  } else {
    const O v = f(*a, *b);
    for (int64_t i = 0; i < n; ++i) o[i] = v;
  }
}

// One inner row of a ternary op; each input's inner stride is 1 or 0 (broadcast), fixed at
// compile time so that every combination is a plain loop the compiler vectorises.
template <bool kA, bool kB, bool kC, typename O, typename A, typename B, typename C, typename F>
__attribute__((noinline)) void ternary_row_fixed(O* o, const A* a, const B* b, const C* c, int64_t n, const F& f) {
  const F fn = f;
  for (int64_t i = 0; i < n; ++i) o[i] = fn(a[kA ? i : 0], b[kB ? i : 0], c[kC ? i : 0]);
}

template <typename O, typename A, typename B, typename C, typename F>
void ternary_row(O* o, const A* a, bool va, const B* b, bool vb, const C* c, bool vc, int64_t n, const F& f) {
  switch ((va ? 4 : 0) | (vb ? 2 : 0) | (vc ? 1 : 0)) {
    case 7: return ternary_row_fixed<true, true, true>(o, a, b, c, n, f);
    case 6: return ternary_row_fixed<true, true, false>(o, a, b, c, n, f);
    case 5: return ternary_row_fixed<true, false, true>(o, a, b, c, n, f);
    case 4: return ternary_row_fixed<true, false, false>(o, a, b, c, n, f);
    case 3: return ternary_row_fixed<false, true, true>(o, a, b, c, n, f);
    case 2: return ternary_row_fixed<false, true, false>(o, a, b, c, n, f);
    case 1: return ternary_row_fixed<false, false, true>(o, a, b, c, n, f);
    default: return ternary_row_fixed<false, false, false>(o, a, b, c, n, f);
  }
}

/// Offset of collapsed outer row `row` (over dims[0 .. rank-3]) for each input.
template <int K>
std::array<int64_t, K> outer_offsets(const BroadcastPlan<K>& plan, int64_t row) {
  std::array<int64_t, K> off{};
  for (size_t d = plan.dims.size() - 2; d-- > 0;) {
    const int64_t i = row % plan.dims[d];
    row /= plan.dims[d];
    for (int k = 0; k < K; ++k) off[k] += i * plan.strides[k][d];
  }
  return off;
}

// The two innermost collapsed dims [m, n] with one input contiguous over them (strides n, 1)
// and the other repeating one row of n along m (strides 0, 1), n short (yanx27's
// [B, S, K, 3] - [B, S, 1, 3], [N, C] + [C]): the repeated row is tiled into a block of t rows
// once per outer row, so the inner loop runs vector-vector over t * n elements instead of m
// short rows. False when the plan has another form.
template <typename O, typename A, typename B, typename F>
bool binary_tiled_rows(const A* a, const B* b, O* out, const BroadcastPlan<2>& plan, F& f) {
  const size_t r = plan.dims.size();
  if (r < 2) return false;
  const int64_t m = plan.dims[r - 2], n = plan.dims[r - 1];
  if (n > 256 || m < 2) return false;
  auto contiguous = [&](int k) { return plan.strides[k][r - 1] == 1 && plan.strides[k][r - 2] == n; };
  auto periodic = [&](int k) { return plan.strides[k][r - 1] == 1 && plan.strides[k][r - 2] == 0; };
  const bool a_tiled = periodic(0) && contiguous(1), b_tiled = contiguous(0) && periodic(1);
  if (!a_tiled && !b_tiled) return false;
  const int64_t t = std::min(m, std::max<int64_t>(1, 2048 / n));  // rows per tile
  const int64_t blocks = (m + t - 1) / t, outer = plan.numel / (m * n), jobs = outer * blocks;
  auto run = [&](int64_t job0, int64_t job1) {
    std::unique_ptr<A[]> tile_a(a_tiled ? new A[static_cast<size_t>(t * n)] : nullptr);  // not vector<bool>
    std::unique_ptr<B[]> tile_b(b_tiled ? new B[static_cast<size_t>(t * n)] : nullptr);
    int64_t tile_row = -1;
    for (int64_t job = job0; job < job1; ++job) {
      const int64_t row = job / blocks, blk = job % blocks, rows = std::min(t, m - blk * t);
      const std::array<int64_t, 2> off = outer_offsets(plan, row);
      if (row != tile_row) {  // the repeated row changes with the outer row
        for (int64_t i = 0; i < t; ++i) {
          if (a_tiled) std::copy(a + off[0], a + off[0] + n, tile_a.get() + i * n);
          if (b_tiled) std::copy(b + off[1], b + off[1] + n, tile_b.get() + i * n);
        }
        tile_row = row;
      }
      const int64_t at = blk * t * n;
      O* o = out + row * m * n + at;
      if (a_tiled)
        binary_row(o, tile_a.get(), 1, b + off[1] + at, 1, rows * n, f);
      else
        binary_row(o, a + off[0] + at, 1, tile_b.get(), 1, rows * n, f);
    }
  };
  if (plan.numel < kParallelMinElements || omp_get_max_threads() == 1 || omp_in_parallel() || jobs < 2) {
    run(0, jobs);
    return true;
  }
#pragma omp parallel
  {
    const int64_t nt = omp_get_num_threads(), th = omp_get_thread_num();
    run(jobs * th / nt, jobs * (th + 1) / nt);
  }
  return true;
}

}  // namespace detail

/// out[i] = f(a[i]) over n contiguous elements, threaded when large.
template <typename O, typename A, typename F>
void unary(const A* a, O* out, int64_t n, F f) {
  detail::for_ranges(n, [&](int64_t begin, int64_t end) { detail::unary_row(a + begin, out + begin, end - begin, f); });
}

/// out = f(a, b) with numpy broadcasting; `out_shape` must be broadcast_shape(a_shape, b_shape).
template <typename O, typename A, typename B, typename F>
void binary(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, O* out, const Shape& out_shape, F f) {
  const int64_t numel = shape_numel(out_shape);
  if (numel == 0) return;
  // Fast paths that need no plan: same shape, and scalar against a tensor.
  const int64_t na = shape_numel(a_shape), nb = shape_numel(b_shape);
  if ((na == numel && nb == numel) || (na == 1 && nb == numel) || (na == numel && nb == 1)) {
    const int64_t sa = na == numel ? 1 : 0, sb = nb == numel ? 1 : 0;
    detail::for_ranges(numel, [&](int64_t begin, int64_t end) {
      detail::binary_row(out + begin, a + begin * sa, sa, b + begin * sb, sb, end - begin, f);
    });
    return;
  }
  const BroadcastPlan<2> plan(out_shape, {&a_shape, &b_shape});
  if (detail::binary_tiled_rows(a, b, out, plan, f)) return;
  const int64_t inner = plan.dims.back();
  const int64_t sa = plan.strides[0].back(), sb = plan.strides[1].back();
  detail::for_ranges(numel, [&](int64_t begin, int64_t end) {
    int64_t row = begin / inner, col = begin % inner;
    detail::RowCursor<2> cur(plan, row);
    while (begin < end) {
      const int64_t n = std::min(inner - col, end - begin);
      detail::binary_row(out + begin, a + cur.offset[0] + col * sa, sa, b + cur.offset[1] + col * sb, sb, n, f);
      begin += n;
      col = 0;
      if (begin < end) cur.next();
    }
  });
}

/// out = f(a, b, c) with numpy broadcasting of three inputs (Where, Clip with tensor bounds).
template <typename O, typename A, typename B, typename C, typename F>
void ternary(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, const C* c, const Shape& c_shape,
             O* out, const Shape& out_shape, F f) {
  const int64_t numel = shape_numel(out_shape);
  if (numel == 0) return;
  const BroadcastPlan<3> plan(out_shape, {&a_shape, &b_shape, &c_shape});
  const int64_t inner = plan.dims.back();
  const int64_t sa = plan.strides[0].back(), sb = plan.strides[1].back(), sc = plan.strides[2].back();
  detail::for_ranges(numel, [&](int64_t begin, int64_t end) {
    int64_t row = begin / inner, col = begin % inner;
    detail::RowCursor<3> cur(plan, row);
    while (begin < end) {
      const int64_t n = std::min(inner - col, end - begin);
      const A* ap = a + cur.offset[0] + col * sa;
      const B* bp = b + cur.offset[1] + col * sb;
      const C* cp = c + cur.offset[2] + col * sc;
      detail::ternary_row(out + begin, ap, sa != 0, bp, sb != 0, cp, sc != 0, n, f);
      begin += n;
      col = 0;
      if (begin < end) cur.next();
    }
  });
}

}  // namespace pointrt::elementwise::bcast
