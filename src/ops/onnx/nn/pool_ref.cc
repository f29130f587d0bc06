// Pooling attribute parsing, shape rules and the naive reference kernels (see pool.h).
#include <cmath>
#include <limits>

#include "ops/onnx/nn/pool.h"

namespace pointrt::nn {

PoolAttrs parse_pool_attrs(const Attributes& attrs, PoolKind kind, bool global, const std::string& where) {
  PoolAttrs a;
  a.kind = kind;
  a.global = global;
  if (global) return a;
  a.auto_pad = parse_auto_pad(attrs, where);
  a.ceil_mode = attrs.get_int("ceil_mode", 0) != 0;
  a.count_include_pad = attrs.get_int("count_include_pad", 0) != 0;
  a.storage_order = attrs.get_int("storage_order", 0);
  if (a.storage_order != 0 && a.storage_order != 1)
    fail(where, ": attribute storage_order must be 0 or 1, got ", a.storage_order);
  a.kernel_shape = attrs.get_ints("kernel_shape");
  a.strides = attrs.get_ints("strides", {});
  a.dilations = attrs.get_ints("dilations", {});
  a.pads = attrs.get_ints("pads", {});
  check_window_attrs(a.kernel_shape, a.strides, a.dilations, &a.pads, where);
  return a;
}

Shape PoolGeometry::output_shape() const {
  Shape s{batch, channels};
  s.insert(s.end(), out_spatial.begin(), out_spatial.end());
  return s;
}

PoolGeometry pool_geometry(const PoolAttrs& a, const Shape& x, const std::string& where) {
  if (x.size() < 3) fail(where, ": input X must have rank >= 3 ([N, C, spatial...]), got shape ", shape_to_string(x));
  size_t nsp = x.size() - 2;
  PoolGeometry g;
  g.batch = x[0];
  g.channels = x[1];
  g.in_spatial.assign(x.begin() + 2, x.end());
  if (a.global) {
    g.kernel = g.in_spatial;
    g.out_spatial.assign(nsp, 1);
    g.strides.assign(nsp, 1);
    g.dilations.assign(nsp, 1);
    g.pad_begin.assign(nsp, 0);
    g.pad_end.assign(nsp, 0);
    for (int64_t d : g.in_spatial)
      if (d < 1) fail(where, ": global pooling of an empty spatial extent, X ", shape_to_string(x));
    return g;
  }
  if (a.kernel_shape.size() != nsp)
    fail(where, ": attribute kernel_shape has ", a.kernel_shape.size(), " values, expected ", nsp, " for X ",
         shape_to_string(x));
  const std::string for_x = "X " + shape_to_string(x);
  auto per_dim = [&](const std::vector<int64_t>& v, const char* name, int64_t dflt, size_t n) {
    return window_attr_values(v, name, dflt, n, where, for_x);
  };
  g.kernel = a.kernel_shape;
  g.strides = per_dim(a.strides, "strides", 1, nsp);
  g.dilations = per_dim(a.dilations, "dilations", 1, nsp);
  std::vector<int64_t> pads = per_dim(a.pads, "pads", 0, 2 * nsp);
  g.pad_begin.assign(pads.begin(), pads.begin() + nsp);
  g.pad_end.assign(pads.begin() + nsp, pads.end());
  g.out_spatial.assign(nsp, 0);
  for (size_t i = 0; i < nsp; ++i) {
    int64_t in = g.in_spatial[i], s = g.strides[i], dk = (g.kernel[i] - 1) * g.dilations[i] + 1;
    if (a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower) {
      int64_t out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in);
      g.pad_begin[i] = a.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
      g.pad_end[i] = total - g.pad_begin[i];
      g.out_spatial[i] = out;
      continue;
    }
    if (a.auto_pad == AutoPad::kValid) g.pad_begin[i] = g.pad_end[i] = 0;
    int64_t span = in + g.pad_begin[i] + g.pad_end[i] - dk;
    if (span < 0)
      fail(where, ": input X ", shape_to_string(x), " is smaller than the (dilated) window ", dk, " in spatial dim ",
           i);
    int64_t out = (a.ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (a.ceil_mode && (out - 1) * s >= in + g.pad_begin[i]) --out;
    g.out_spatial[i] = out;
  }
  return g;
}

namespace {
// Iterates the positions of an N-d window: calls f(flat_input_offset, position_vector).
struct Odometer {
  std::vector<int64_t> idx;
  explicit Odometer(size_t n) : idx(n, 0) {}
  bool next(const Shape& extent) {
    for (size_t i = extent.size(); i-- > 0;) {
      if (++idx[i] < extent[i]) return true;
      idx[i] = 0;
    }
    return false;
  }
};
}  // namespace

template <typename T>
void max_pool_ref(const PoolGeometry& g, int64_t storage_order, const T* x, T* y, int64_t* indices) {
  size_t nsp = g.in_spatial.size();
  int64_t in_size = shape_numel(g.in_spatial), out_size = shape_numel(g.out_spatial);
  int64_t planes = g.batch * g.channels;
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const T* xp = x + plane * in_size;
    Odometer o(nsp);
    int64_t oi = 0;
    do {
      Odometer k(nsp);
      bool found = false;
      T best{};
      int64_t best_pos = -1;
      std::vector<int64_t> best_coord(nsp, 0);
      do {
        int64_t off = 0;
        bool inside = true;
        for (size_t i = 0; i < nsp; ++i) {
          int64_t p = o.idx[i] * g.strides[i] - g.pad_begin[i] + k.idx[i] * g.dilations[i];
          if (p < 0 || p >= g.in_spatial[i]) {
            inside = false;
            break;
          }
          off = off * g.in_spatial[i] + p;
        }
        if (!inside) continue;
        T v = xp[off];
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(v)) continue;
        }
        if (!found || v > best) {
          found = true;
          best = v;
          best_pos = off;
        }
      } while (k.next(g.kernel));
      if (!found) {  // all NaN (or nothing inside): NaN for floats
        if constexpr (std::is_floating_point_v<T>) best = std::numeric_limits<T>::quiet_NaN();
        best_pos = -1;
      }
      y[plane * out_size + oi] = best;
      if (indices) {
        int64_t flat = 0;
        if (best_pos >= 0) {
          if (storage_order == 0)
            flat = best_pos;
          else {
            // decompose the row-major offset and re-linearise column-major
            std::vector<int64_t> c(nsp);
            int64_t r = best_pos;
            for (size_t i = nsp; i-- > 0;) {
              c[i] = r % g.in_spatial[i];
              r /= g.in_spatial[i];
            }
            for (size_t i = nsp; i-- > 0;) flat = flat * g.in_spatial[i] + c[i];
          }
        }
        indices[plane * out_size + oi] = plane * in_size + flat;
      }
      ++oi;
    } while (o.next(g.out_spatial));
  }
}
template void max_pool_ref<float>(const PoolGeometry&, int64_t, const float*, float*, int64_t*);
template void max_pool_ref<double>(const PoolGeometry&, int64_t, const double*, double*, int64_t*);
template void max_pool_ref<int8_t>(const PoolGeometry&, int64_t, const int8_t*, int8_t*, int64_t*);
template void max_pool_ref<uint8_t>(const PoolGeometry&, int64_t, const uint8_t*, uint8_t*, int64_t*);

void average_pool_ref(const PoolGeometry& g, bool count_include_pad, const float* x, float* y) {
  size_t nsp = g.in_spatial.size();
  int64_t in_size = shape_numel(g.in_spatial), out_size = shape_numel(g.out_spatial);
  int64_t planes = g.batch * g.channels;
#pragma omp parallel for schedule(static)
  for (int64_t plane = 0; plane < planes; ++plane) {
    const float* xp = x + plane * in_size;
    Odometer o(nsp);
    int64_t oi = 0;
    do {
      Odometer k(nsp);
      double sum = 0;
      int64_t count = 0;
      do {
        int64_t off = 0;
        bool inside = true;
        for (size_t i = 0; i < nsp; ++i) {
          int64_t p = o.idx[i] * g.strides[i] - g.pad_begin[i] + k.idx[i] * g.dilations[i];
          if (p < 0 || p >= g.in_spatial[i])
            inside = false;
          else
            off = off * g.in_spatial[i] + p;
        }
        if (inside) {
          sum += xp[off];
          ++count;
        } else if (count_include_pad)
          ++count;
      } while (k.next(g.kernel));
      y[plane * out_size + oi] = count ? static_cast<float>(sum / count) : 0.f;
      ++oi;
    } while (o.next(g.out_spatial));
  }
}

}  // namespace pointrt::nn
