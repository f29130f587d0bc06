// Optimised CPU reductions. The input shape is simplified (size-1 axes dropped, neighbouring
// axes of the same kind merged) and reduced one merged axis group at a time, innermost first,
// each pass over a [outer, R, inner] view:
//  - inner == 1: contiguous rows, several independent accumulators per row (vectorises, and is a
//    little more accurate than one running sum); a single huge row is split across threads;
//  - inner > 1: row-wise accumulation into a block of `inner` accumulators (no strided reads).
#include "ops/onnx/reduce/reduce.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

using namespace detail;

constexpr int64_t kParallelWork = 1 << 15;  // elements below which threads cost more than they give

// Per-kind definition: accumulator type, identity, per-element map, combine, final transform.
template <typename T, ReduceKind K>
struct ReduceOp;

template <typename T>
struct SumLike {
  using Acc = WideAcc<T>;
  static Acc init() { return Acc(0); }
  static Acc combine(Acc a, Acc b) { return wadd(a, b); }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kSum> : SumLike<T> {
  using Acc = WideAcc<T>;
  static Acc map(T x) { return Acc(x); }
  static T finish(Acc a, int64_t) { return T(a); }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kSumSquare> : SumLike<T> {
  using Acc = WideAcc<T>;
  static Acc map(T x) { return wmul(Acc(x), Acc(x)); }
  static T finish(Acc a, int64_t) { return T(a); }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kL1> : SumLike<T> {
  using Acc = WideAcc<T>;
  static Acc map(T x) {
    if constexpr (std::is_signed<T>::value)
      return x < T(0) ? wsub(Acc(0), Acc(x)) : Acc(x);
    else
      return Acc(x);
  }
  static T finish(Acc a, int64_t) { return T(a); }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kL2> : SumLike<T> {
  using Acc = WideAcc<T>;
  static Acc map(T x) { return wmul(Acc(x), Acc(x)); }
  static T finish(Acc a, int64_t) { return T(std::sqrt(static_cast<double>(a))); }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kMean> : SumLike<T> {
  using Acc = WideAcc<T>;
  static Acc map(T x) { return Acc(x); }
  static T finish(Acc a, int64_t n) {
    return n == 0 ? T(0) : T(a / Acc(n));  // empty set: 0, as ONNX Runtime (the spec leaves it undefined)
  }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kLogSum> : SumLike<T> {
  using Acc = WideAcc<T>;
  static Acc map(T x) { return Acc(x); }
  static T finish(Acc a, int64_t) { return T(std::log(static_cast<double>(a))); }
};
// Running log-sum-exp state: the maximum seen and the sum of exp(x - max).
struct LogSumExpAcc {
  double max, sum;
};
template <typename T>
struct ReduceOp<T, ReduceKind::kLogSumExp> {
  using Acc = LogSumExpAcc;
  static Acc init() { return {-std::numeric_limits<double>::infinity(), 0.0}; }
  static Acc map(T x) { return {static_cast<double>(x), 1.0}; }
  static Acc combine(Acc a, Acc b) {
    if (a.max != a.max || b.max != b.max) return {a.max + b.max, a.max + b.max};  // NaN propagates
    if (a.max < b.max) std::swap(a, b);                                           // a holds the larger maximum
    if (b.max == -std::numeric_limits<double>::infinity()) return a;              // b empty (or both)
    if (a.max == std::numeric_limits<double>::infinity()) return {a.max, 1.0};
    return {a.max, a.sum + b.sum * std::exp(b.max - a.max)};
  }
  static T finish(Acc a, int64_t) { return static_cast<T>(a.max + std::log(a.sum)); }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kProd> {
  using Acc = WideAcc<T>;
  static Acc init() { return Acc(1); }
  static Acc map(T x) { return Acc(x); }
  static Acc combine(Acc a, Acc b) { return wmul(a, b); }
  static T finish(Acc a, int64_t) { return T(a); }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kMax> {
  static constexpr int kExtremum = 1;  // selects the vectorised row path in reduce_row
  using Acc = T;
  static Acc init() { return lowest_value<T>(); }
  static Acc map(T x) { return x; }
  static Acc combine(Acc a, Acc b) { return max_nan(a, b); }
  static T finish(Acc a, int64_t) { return a; }
};
template <typename T>
struct ReduceOp<T, ReduceKind::kMin> {
  static constexpr int kExtremum = -1;
  using Acc = T;
  static Acc init() { return highest_value<T>(); }
  static Acc map(T x) { return x; }
  static Acc combine(Acc a, Acc b) { return min_nan(a, b); }
  static T finish(Acc a, int64_t) { return a; }
};

template <typename Op, typename = void>
struct ExtremumOf : std::integral_constant<int, 0> {};
template <typename Op>
struct ExtremumOf<Op, std::void_t<decltype(Op::kExtremum)>> : std::integral_constant<int, Op::kExtremum> {};

// Max/min of a contiguous row as an OpenMP simd reduction (the lane-array form below does not
// vectorise for them); a NaN anywhere makes the result NaN.
template <int kSign, typename T>
T extremum_row(const T* x, int64_t R, T init) {
  T m = init;
  int nan = 0;
  if constexpr (kSign > 0) {
#pragma omp simd reduction(max : m) reduction(| : nan)
    for (int64_t r = 0; r < R; ++r) {
      m = x[r] > m ? x[r] : m;
      nan |= x[r] != x[r];
    }
  } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
    for (int64_t r = 0; r < R; ++r) {
      m = x[r] < m ? x[r] : m;
      nan |= x[r] != x[r];
    }
  }
  if constexpr (std::is_floating_point<T>::value)
    if (nan) return std::numeric_limits<T>::quiet_NaN();
  return m;
}

// Reduce one contiguous row of R elements.
template <typename Op, typename In, typename MapF>
typename Op::Acc reduce_row(const In* x, int64_t R, MapF map) {
  using Acc = typename Op::Acc;
  if constexpr (ExtremumOf<Op>::value != 0 && std::is_same<In, Acc>::value && !std::is_same<Acc, bool>::value)
    return extremum_row<ExtremumOf<Op>::value>(x, R, Op::init());
  constexpr int kLanes = 8;
  Acc lane[kLanes];
  for (int j = 0; j < kLanes; ++j) lane[j] = Op::init();
  int64_t r = 0;
  for (; r + kLanes <= R; r += kLanes)
    for (int j = 0; j < kLanes; ++j) lane[j] = Op::combine(lane[j], map(x[r + j]));
  for (; r < R; ++r) lane[0] = Op::combine(lane[0], map(x[r]));
  // Pairwise combination of the lanes.
  for (int w = kLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = Op::combine(lane[j], lane[j + w]);
  return lane[0];
}

// acc[j] = combine(acc[j], map(row[j])): a separate function with restrict pointers so the
// compiler vectorises it (inside the collapsed OpenMP loop it would not).
template <typename Op, typename In, typename MapF>
inline void accumulate_row(typename Op::Acc* __restrict acc, const In* __restrict row, int64_t n, MapF map) {
  for (int64_t j = 0; j < n; ++j) acc[j] = Op::combine(acc[j], map(row[j]));
}

// Four rows at once: a quarter of the accumulator traffic, four read streams in flight.
template <typename Op, typename In, typename MapF>
inline void accumulate_rows4(typename Op::Acc* __restrict acc, const In* __restrict row, int64_t stride, int64_t n,
                             MapF map) {
  const In* __restrict r1 = row + stride;
  const In* __restrict r2 = row + 2 * stride;
  const In* __restrict r3 = row + 3 * stride;
  for (int64_t j = 0; j < n; ++j)
    acc[j] =
        Op::combine(acc[j], Op::combine(Op::combine(map(row[j]), map(r1[j])), Op::combine(map(r2[j]), map(r3[j]))));
}

// One pass: y[o, i] = combine over r of map(x[o, r, i]).
template <typename Op, typename In, typename MapF>
void reduce_pass(const In* x, typename Op::Acc* y, int64_t outer, int64_t R, int64_t inner, MapF map) {
  using Acc = typename Op::Acc;
  const int64_t work = outer * R * inner;
  if (inner == 1) {
    const int threads = omp_get_max_threads();
    if (outer < threads && R >= 4 * kParallelWork && threads > 1) {
      // Few long rows: split each row into chunks across threads, then combine the partials.
      const int64_t chunks = threads;
      std::unique_ptr<Acc[]> partial(new Acc[static_cast<size_t>(outer * chunks)]);  // not vector<bool>
#pragma omp parallel for collapse(2)
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t c = 0; c < chunks; ++c) {
          int64_t begin = R * c / chunks, end = R * (c + 1) / chunks;
          partial[o * chunks + c] = reduce_row<Op>(x + o * R + begin, end - begin, map);
        }
      for (int64_t o = 0; o < outer; ++o) {
        Acc a = Op::init();
        for (int64_t c = 0; c < chunks; ++c) a = Op::combine(a, partial[o * chunks + c]);
        y[o] = a;
      }
      return;
    }
#pragma omp parallel for if (work > kParallelWork)
    for (int64_t o = 0; o < outer; ++o) y[o] = reduce_row<Op>(x + o * R, R, map);
    return;
  }
  // Column blocks: wide enough that each row piece streams well (at least 1024 elements, or
  // the thread's whole share of the columns), narrow enough to give every thread a block.
  constexpr int64_t kMinBlock = 1024;
  const int threads = work > kParallelWork ? omp_get_max_threads() : 1;
  const int64_t want_blocks = std::max<int64_t>(1, (threads + outer - 1) / outer);
  const int64_t share = (inner + want_blocks - 1) / want_blocks;
  const int64_t block =
      std::min(inner, std::max<int64_t>(std::min<int64_t>(kMinBlock, std::max<int64_t>(16, share)), share));
  const int64_t blocks = (inner + block - 1) / block;
  // Still fewer units than threads (e.g. [huge R, 3]): split R as well and combine partials.
  const int64_t r_chunks = outer * blocks < threads && R >= 64 ? std::min<int64_t>(threads, R / 16) : 1;
  std::unique_ptr<Acc[]> partial;
  if (r_chunks > 1) partial.reset(new Acc[static_cast<size_t>(r_chunks * outer * inner)]);
#pragma omp parallel for collapse(3) if (threads > 1)
  for (int64_t c = 0; c < r_chunks; ++c)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t i0 = b * block, n = std::min(block, inner - i0);
        const int64_t r0 = R * c / r_chunks, r1 = R * (c + 1) / r_chunks;
        Acc stack_acc[kMinBlock];
        std::unique_ptr<Acc[]> heap_acc(n > kMinBlock ? new Acc[static_cast<size_t>(n)] : nullptr);
        Acc* acc = n > kMinBlock ? heap_acc.get() : stack_acc;
        for (int64_t j = 0; j < n; ++j) acc[j] = Op::init();
        const In* base = x + o * R * inner + i0;
        int64_t r = r0;
        for (; r + 4 <= r1; r += 4) accumulate_rows4<Op>(acc, base + r * inner, inner, n, map);
        for (; r < r1; ++r) accumulate_row<Op>(acc, base + r * inner, n, map);
        Acc* out = (r_chunks > 1 ? partial.get() + c * outer * inner : y) + o * inner + i0;
        for (int64_t j = 0; j < n; ++j) out[j] = acc[j];
      }
  if (r_chunks > 1) {
    const int64_t m = outer * inner;
    for (int64_t i = 0; i < m; ++i) {
      Acc a = partial[i];
      for (int64_t c = 1; c < r_chunks; ++c) a = Op::combine(a, partial[c * m + i]);
      y[i] = a;
    }
  }
}

template <typename T, ReduceKind K>
void reduce_typed(const Tensor& xt, const std::vector<bool>& reduced, Tensor& yt) {
  using Op = ReduceOp<T, K>;
  using Acc = typename Op::Acc;
  const T* x = xt.data_as<T>();
  T* y = yt.data_as<T>();
  const int64_t out_n = yt.numel();
  if (out_n == 0) return;
  int64_t count = 1;  // elements per output
  for (size_t i = 0; i < reduced.size(); ++i)
    if (reduced[i]) count *= xt.dim(i);
  if (xt.numel() == 0) {  // a reduced axis of size 0: the empty-set value everywhere
    const T v = Op::finish(Op::init(), 0);
    std::fill(y, y + out_n, v);
    return;
  }
  // Merge axes into alternating (kept, reduced) groups, ignoring size-1 axes.
  std::vector<int64_t> dims;
  std::vector<bool> is_reduced;
  for (size_t i = 0; i < reduced.size(); ++i) {
    int64_t d = xt.dim(i);
    if (d == 1) continue;
    if (!dims.empty() && is_reduced.back() == reduced[i])
      dims.back() *= d;
    else {
      dims.push_back(d);
      is_reduced.push_back(reduced[i]);
    }
  }
  std::unique_ptr<Acc[]> acc;  // not std::vector: Acc may be bool
  auto identity = [](Acc v) { return v; };
  auto first_map = [](T v) { return Op::map(v); };
  bool first = true;
  while (true) {
    int g = -1;
    for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i)
      if (is_reduced[i]) {
        g = i;
        break;
      }
    if (g < 0 && !first) break;
    int64_t outer = 1, R = 1, inner = 1;
    if (g < 0)
      outer = shape_numel(dims);  // nothing to reduce: map and finish each element
    else {
      for (int i = 0; i < g; ++i) outer *= dims[i];
      R = dims[g];
      for (size_t i = g + 1; i < dims.size(); ++i) inner *= dims[i];
      dims.erase(dims.begin() + g);
      is_reduced.erase(is_reduced.begin() + g);
    }
    std::unique_ptr<Acc[]> next(new Acc[static_cast<size_t>(outer * inner)]);
    if (first)
      reduce_pass<Op>(x, next.get(), outer, R, inner, first_map);
    else
      reduce_pass<Op>(acc.get(), next.get(), outer, R, inner, identity);
    acc.swap(next);
    first = false;
    if (g < 0) break;
  }
#pragma omp parallel for if (out_n > kParallelWork)
  for (int64_t i = 0; i < out_n; ++i) y[i] = Op::finish(acc[i], count);
}

template <typename T>
void reduce_for_type(ReduceKind kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  switch (kind) {
    case ReduceKind::kMax: reduce_typed<T, ReduceKind::kMax>(x, reduced, y); return;
    case ReduceKind::kMin: reduce_typed<T, ReduceKind::kMin>(x, reduced, y); return;
    default: break;
  }
  if constexpr (!std::is_same<T, bool>::value && !std::is_same<T, int8_t>::value && !std::is_same<T, uint8_t>::value &&
                !std::is_same<T, int16_t>::value && !std::is_same<T, uint16_t>::value) {
    switch (kind) {
      case ReduceKind::kSum: reduce_typed<T, ReduceKind::kSum>(x, reduced, y); return;
      case ReduceKind::kSumSquare: reduce_typed<T, ReduceKind::kSumSquare>(x, reduced, y); return;
      case ReduceKind::kMean: reduce_typed<T, ReduceKind::kMean>(x, reduced, y); return;
      case ReduceKind::kL1: reduce_typed<T, ReduceKind::kL1>(x, reduced, y); return;
      case ReduceKind::kL2: reduce_typed<T, ReduceKind::kL2>(x, reduced, y); return;
      case ReduceKind::kProd: reduce_typed<T, ReduceKind::kProd>(x, reduced, y); return;
      case ReduceKind::kLogSum:
        if constexpr (std::is_floating_point<T>::value) {
          reduce_typed<T, ReduceKind::kLogSum>(x, reduced, y);
          return;
        }
        break;
      case ReduceKind::kLogSumExp:
        if constexpr (std::is_floating_point<T>::value) {
          reduce_typed<T, ReduceKind::kLogSumExp>(x, reduced, y);
          return;
        }
        break;
      default: break;
    }
  }
  fail("reduce: element type ", dtype_name(x.dtype()), " is not supported by this reduction");
}

const char* kind_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::kSum: return "ReduceSum";
    case ReduceKind::kSumSquare: return "ReduceSumSquare";
    case ReduceKind::kMean: return "ReduceMean";
    case ReduceKind::kL1: return "ReduceL1";
    case ReduceKind::kL2: return "ReduceL2";
    case ReduceKind::kMax: return "ReduceMax";
    case ReduceKind::kMin: return "ReduceMin";
    case ReduceKind::kProd: return "ReduceProd";
    case ReduceKind::kLogSum: return "ReduceLogSum";
    case ReduceKind::kLogSumExp: return "ReduceLogSumExp";
  }
  return "Reduce";
}

class ReduceKernel : public OpKernel {
 public:
  ReduceKernel(const KernelInit& init, ReduceKind kind, bool axes_from_input)
      : kind_(kind), axes_from_input_(axes_from_input) {
    keepdims_ = init.attrs().get_int("keepdims", 1) != 0;
    noop_with_empty_axes_ = init.attrs().get_int("noop_with_empty_axes", 0) != 0;
    if (!axes_from_input_) axes_ = init.attrs().get_ints("axes", {});
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (!reduce_kind_accepts(kind_, x.dtype()))
      fail(ctx.where(), ": input 0 has element type ", dtype_name(x.dtype()), ", which ", kind_name(kind_),
           " does not support");
    std::vector<int64_t> axes = axes_;
    if (axes_from_input_ && ctx.has_input(1)) axes = detail::read_int_list(ctx.input(1), ctx.where(), "axes");
    if (axes.empty() && noop_with_empty_axes_) {
      // Each element is a set of one: Sum/Mean/Max/Min/Prod return it unchanged (aliased),
      // the others apply their per-element map (|x|, x*x, log x), as ONNX Runtime does.
      if (kind_ == ReduceKind::kSum || kind_ == ReduceKind::kMean || kind_ == ReduceKind::kMax ||
          kind_ == ReduceKind::kMin || kind_ == ReduceKind::kProd || kind_ == ReduceKind::kLogSumExp) {
        ctx.set_output(0, x);
        return;
      }
      Tensor& y = ctx.output(0, x.dtype(), x.shape());
      reduce_optimized(kind_, x, std::vector<bool>(x.rank(), false), y);
      return;
    }
    std::vector<bool> reduced = resolve_reduce_axes(axes, static_cast<int64_t>(x.rank()), ctx.where());
    Tensor& y = ctx.output(0, x.dtype(), reduce_output_shape(x.shape(), reduced, keepdims_));
    reduce_optimized(kind_, x, reduced, y);
  }

 private:
  ReduceKind kind_;
  bool axes_from_input_;
  bool keepdims_ = true, noop_with_empty_axes_ = false;
  std::vector<int64_t> axes_;
};

}  // namespace

std::vector<bool> resolve_reduce_axes(const std::vector<int64_t>& axes, int64_t rank, const std::string& where) {
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, rank, where);
    if (reduced[n]) fail(where, ": axis ", a, " is listed twice in axes");
    reduced[n] = true;
  }
  return reduced;
}

Shape reduce_output_shape(const Shape& in, const std::vector<bool>& reduced, bool keepdims) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduced[i])
      out.push_back(in[i]);
    else if (keepdims)
      out.push_back(1);
  }
  return out;
}

bool reduce_kind_accepts(ReduceKind kind, DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kFloat64: return true;
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt32:
    case DType::kUInt64: return kind != ReduceKind::kLogSum && kind != ReduceKind::kLogSumExp;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool: return kind == ReduceKind::kMax || kind == ReduceKind::kMin;
    default: return false;
  }
}

void reduce_optimized(ReduceKind kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y) {
  if (reduce_float32_fast(kind, x, reduced, y)) return;
  dispatch_all(x.dtype(), "reduce", [&](auto tag) { reduce_for_type<decltype(tag)>(kind, x, reduced, y); });
}

std::unique_ptr<OpKernel> make_reduce_kernel(const KernelInit& init, ReduceKind kind, bool axes_from_input) {
  return std::make_unique<ReduceKernel>(init, kind, axes_from_input);
}

}  // namespace pointrt::reduce
