#include "ops/onnx/tensor/pad.h"

#include <omp.h>

#include <cstring>
#include <vector>

namespace pointrt::tensor {

PadMode parse_pad_mode(const std::string& mode, bool allow_wrap, const std::string& where) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap" && allow_wrap) return PadMode::kWrap;
  fail(where, ": attribute 'mode' is '", mode, "', expected constant, reflect, edge", allow_wrap ? " or wrap" : "",
       allow_wrap ? "" : " ('wrap' needs opset 19)");
}

PadPlan pad_plan(const Shape& in, const std::vector<int64_t>& pads, const std::vector<int64_t>& axes_in, PadMode mode,
                 const std::string& where) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes = axes_in;
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    fail(where, ": 'pads' has ", pads.size(), " values, expected ", 2 * axes.size(),
         " (2 per padded axis; input shape ", shape_to_string(in), ")");
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = normalize_axis(axes[k], rank, where);
    if (seen[a]) fail(where, ": 'axes' names axis ", a, " twice");
    seen[a] = true;
    begin[a] = pads[k];
    end[a] = pads[k + axes.size()];
  }
  PadPlan p;
  p.mode = mode;
  p.out_shape.resize(rank);
  p.crop.resize(rank);
  p.kept.resize(rank);
  p.before.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t crop_lo = begin[d] < 0 ? -begin[d] : 0, crop_hi = end[d] < 0 ? -end[d] : 0;
    if (crop_lo + crop_hi > in[d])
      fail(where, ": pads ", begin[d], " and ", end[d], " on axis ", d, " crop more than its size ", in[d]);
    p.crop[d] = crop_lo;
    p.kept[d] = in[d] - crop_lo - crop_hi;
    p.before[d] = std::max<int64_t>(begin[d], 0);
    const int64_t after = std::max<int64_t>(end[d], 0);
    p.out_shape[d] = p.kept[d] + p.before[d] + after;
    if (mode != PadMode::kConstant && p.kept[d] == 0 && p.out_shape[d] > 0)
      fail(where, ": cannot pad axis ", d, " of size 0 in a non-constant mode");
  }
  return p;
}

namespace {
// Output rows (the last axis) in order: each outer axis' coordinate maps to a source offset
// through a small table made once (-1: a constant row), and each thread walks its rows with an
// odometer, so a row costs a few additions, not a division and a pad_map per axis (those took
// most of Pad/reflect1's time: 1296 rows of 81 floats).
template <typename E>
void pad_typed(const E* src, const PadPlan& p, const Shape& in_shape, E value, E* dst) {
  const int rank = static_cast<int>(p.out_shape.size());
  const Shape& os = p.out_shape;
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const int64_t total = shape_numel(os);
  if (total == 0) return;
  const Strides xs = contiguous_strides(in_shape);
  const int64_t inner = os[rank - 1], rows = total / inner;
  const int64_t before = p.before[rank - 1], n = p.kept[rank - 1], crop = p.crop[rank - 1];
  const int64_t mid_end = std::min(inner, before + n);
  std::vector<std::vector<int64_t>> offset(static_cast<size_t>(rank - 1));
  for (int d = 0; d + 1 < rank; ++d) {
    offset[d].resize(static_cast<size_t>(os[d]));
    for (int64_t c = 0; c < os[d]; ++c) {
      const int64_t x = pad_map(c, p.before[d], p.kept[d], p.mode);
      offset[d][c] = x < 0 ? -1 : (x + p.crop[d]) * xs[d];
    }
  }
#pragma omp parallel if (worth_parallel(total * static_cast <int64_t>(sizeof(E))))
  {
    const int64_t threads = omp_get_num_threads(), t = omp_get_thread_num();
    const int64_t r0 = rows * t / threads, r1 = rows * (t + 1) / threads;
    std::vector<int64_t> coord(static_cast<size_t>(rank - 1));
    for (int64_t d = rank - 2, rem = r0; d >= 0; --d) {
      coord[d] = rem % os[d];
      rem /= os[d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      E* o = dst + r * inner;
      int64_t base = 0;
      bool constant_row = false;
      for (int d = 0; d + 1 < rank; ++d) {
        const int64_t off = offset[d][coord[d]];
        constant_row |= off < 0;
        base += off;
      }
      for (int d = rank - 2; d >= 0 && ++coord[d] == os[d]; --d) coord[d] = 0;
      if (constant_row) {
        std::fill(o, o + inner, value);
        continue;
      }
      const E* s = src + base + crop;
      for (int64_t j = 0; j < before; ++j) {
        const int64_t x = pad_map(j, before, n, p.mode);
        o[j] = x < 0 ? value : s[x];
      }
      if (mid_end > before) std::memcpy(o + before, s, static_cast<size_t>(mid_end - before) * sizeof(E));
      for (int64_t j = mid_end; j < inner; ++j) {
        const int64_t x = pad_map(j, before, n, p.mode);
        o[j] = x < 0 ? value : s[x];
      }
    }
  }
}
}  // namespace

void pad_cpu(const Tensor& x, const PadPlan& plan, const void* value, Tensor& y) {
  dispatch_by_size(x.dtype(), "Pad", [&](auto tag) {
    using E = decltype(tag);
    E v;
    std::memcpy(&v, value, sizeof(E));
    pad_typed(x.data_as<E>(), plan, x.shape(), v, y.data_as<E>());
  });
}

}  // namespace pointrt::tensor
