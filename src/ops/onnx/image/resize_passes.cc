// Resize execution: one separable pass per resized axis (innermost first, as the reference), or
// for the common image case both of the last two axes per plane; element types other than
// float32/float64 are computed through float32 (float16) or double (integers).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "ops/onnx/image/image_util.h"
#include "ops/onnx/image/resize.h"

#ifdef _OPENMP
#include <omp.h>
#else
inline int omp_get_max_threads() { return 1; }
#endif

namespace pointrt::image {

namespace {

// One separable pass along one axis: src viewed as [outer, L, inner] -> dst [outer, O, inner].
template <typename T>
void resize_pass(const T* src, T* dst, int64_t outer, int64_t inner, const ResizeAxisTable& t, T extrapolation) {
  const int64_t L = t.in_len, O = t.out_len;
  std::vector<T> w(t.weight.begin(), t.weight.end());
  const int64_t* off = t.offsets.data();
  const int64_t* idx = t.src.data();
  const T* wt = w.data();
  const uint8_t* ex = t.extrapolate.data();
  const bool parallel = outer * O * inner > 16384;
  if (inner == 1) {
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
    for (int64_t r = 0; r < outer; ++r)
      for (int64_t o = 0; o < O; ++o) {
        const T* s = src + r * L;
        if (ex[o]) {
          dst[r * O + o] = extrapolation;
          continue;
        }
        T acc = 0;
        for (int64_t k = off[o]; k < off[o + 1]; ++k) acc += wt[k] * s[idx[k]];
        dst[r * O + o] = acc;
      }
    return;
  }
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (int64_t r = 0; r < outer; ++r)
    for (int64_t o = 0; o < O; ++o) {
      T* d = dst + (r * O + o) * inner;
      const T* s = src + r * L * inner;
      const int64_t k0 = off[o], k1 = off[o + 1];
      if (ex[o]) {
        std::fill(d, d + inner, extrapolation);
      } else if (k1 == k0) {
        std::fill(d, d + inner, T(0));
      } else if (k1 == k0 + 1 && wt[k0] == T(1)) {
        std::copy(s + idx[k0] * inner, s + idx[k0] * inner + inner, d);
      } else {
        const T* s0 = s + idx[k0] * inner;
        const T w0 = wt[k0];
        for (int64_t i = 0; i < inner; ++i) d[i] = w0 * s0[i];
        for (int64_t k = k0 + 1; k < k1; ++k) {
          const T* sk = s + idx[k] * inner;
          const T wk = wt[k];
          for (int64_t i = 0; i < inner; ++i) d[i] += wk * sk[i];
        }
      }
    }
}

// The common image case: both of the last two axes resized, many planes. Per plane (one
// OpenMP task each) the needed source rows are interpolated horizontally into a per-thread
// buffer (fixed-width tap tables, no CSR walk), then output rows are blended vertically.
// Same operation order as the separable passes (inner axis first).
template <typename T>
void resize_planes_2d(const T* x, T* y, int64_t planes, const ResizeAxisTable& ty, const ResizeAxisTable& tx,
                      T extrapolation) {
  const int64_t H = ty.in_len, W = tx.in_len, OH = ty.out_len, OW = tx.out_len;
  int64_t K = 1;
  for (int64_t o = 0; o < OW; ++o) K = std::max(K, tx.offsets[o + 1] - tx.offsets[o]);
  std::vector<int64_t> xi(static_cast<size_t>(OW * K), 0);
  std::vector<T> xw(static_cast<size_t>(OW * K), T(0));
  std::vector<int64_t> x_extrapolated;
  bool nearest_x = true;  // every output a single weight-1 tap
  for (int64_t o = 0; o < OW; ++o) {
    const int64_t k0 = tx.offsets[o], n = tx.offsets[o + 1] - k0;
    if (tx.extrapolate[o]) x_extrapolated.push_back(o);
    if (n != 1 || tx.weight[k0] != 1.0) nearest_x = false;
    for (int64_t k = 0; k < n; ++k) {
      xi[o * K + k] = tx.src[k0 + k];
      xw[o * K + k] = static_cast<T>(tx.weight[k0 + k]);
    }
  }
  std::vector<uint8_t> row_needed(static_cast<size_t>(H), 0);
  for (int64_t o = 0; o < OH; ++o)
    if (!ty.extrapolate[o])
      for (int64_t k = ty.offsets[o]; k < ty.offsets[o + 1]; ++k) row_needed[ty.src[k]] = 1;
  std::vector<T> yw(ty.weight.begin(), ty.weight.end());

#pragma omp parallel if (planes > 1 && planes * OH * OW > 16384)
  {
    std::unique_ptr<T[]> hbuf(new T[static_cast<size_t>(H * OW)]);
#pragma omp for schedule(static)
    for (int64_t p = 0; p < planes; ++p) {
      const T* src = x + p * H * W;
      T* dst = y + p * OH * OW;
      for (int64_t h = 0; h < H; ++h) {
        if (!row_needed[h]) continue;
        const T* s = src + h * W;
        T* d = hbuf.get() + h * OW;
        if (nearest_x) {
          for (int64_t o = 0; o < OW; ++o) d[o] = s[xi[o]];
        } else if (K == 2) {
          const int64_t* ii = xi.data();
          const T* ww = xw.data();
          for (int64_t o = 0; o < OW; ++o) d[o] = ww[2 * o] * s[ii[2 * o]] + ww[2 * o + 1] * s[ii[2 * o + 1]];
        } else {
          for (int64_t o = 0; o < OW; ++o) {
            T acc = xw[o * K] * s[xi[o * K]];
            for (int64_t k = 1; k < K; ++k) acc += xw[o * K + k] * s[xi[o * K + k]];
            d[o] = acc;
          }
        }
        for (int64_t o : x_extrapolated) d[o] = extrapolation;
      }
      for (int64_t oy = 0; oy < OH; ++oy) {
        T* d = dst + oy * OW;
        const int64_t k0 = ty.offsets[oy], k1 = ty.offsets[oy + 1];
        if (ty.extrapolate[oy]) {
          std::fill(d, d + OW, extrapolation);
        } else if (k1 == k0) {
          std::fill(d, d + OW, T(0));
        } else if (k1 == k0 + 1 && yw[k0] == T(1)) {
          std::memcpy(d, hbuf.get() + ty.src[k0] * OW, sizeof(T) * static_cast<size_t>(OW));
        } else {
          const T* r0 = hbuf.get() + ty.src[k0] * OW;
          const T w0 = yw[k0];
          if (k1 == k0 + 2) {  // linear: one fused blend
            const T* r1 = hbuf.get() + ty.src[k0 + 1] * OW;
            const T w1 = yw[k0 + 1];
            for (int64_t o = 0; o < OW; ++o) d[o] = w0 * r0[o] + w1 * r1[o];
          } else {
            for (int64_t o = 0; o < OW; ++o) d[o] = w0 * r0[o];
            for (int64_t k = k0 + 1; k < k1; ++k) {
              const T* rk = hbuf.get() + ty.src[k] * OW;
              const T wk = yw[k];
              for (int64_t o = 0; o < OW; ++o) d[o] += wk * rk[o];
            }
          }
        }
      }
    }
  }
}

template <typename T>
void resize_typed(const ResizeAttrs& a, const ResizePlan& plan, const T* x, T* y, ResizePath path) {
  const Shape& in = plan.geometry.in;
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> active;
  for (int64_t d = rank - 1; d >= 0; --d)
    if (!plan.axes[d].identity) active.push_back(d);  // innermost first, as the reference
  if (active.empty()) {
    std::copy(x, x + shape_numel(in), y);
    return;
  }
  if (active.size() == 2 && active[0] == rank - 1 && active[1] == rank - 2) {
    const int64_t planes = rank > 2 ? shape_numel(Shape(in.begin(), in.end() - 2)) : 1;
    const ResizeAxisTable& ty = plan.axes[rank - 2];
    const ResizeAxisTable& tx = plan.axes[rank - 1];
    const bool fits = ty.in_len * tx.out_len * static_cast<int64_t>(sizeof(T)) <= (int64_t{8} << 20);
    if (path == ResizePath::kPlanes2D || (path == ResizePath::kAuto && fits && planes >= omp_get_max_threads())) {
      resize_planes_2d<T>(x, y, planes, ty, tx, static_cast<T>(a.extrapolation_value));
      return;
    }
  }
  Shape cur = in;
  std::unique_ptr<T[]> buf_a, buf_b;
  const T* src = x;
  for (size_t p = 0; p < active.size(); ++p) {
    const int64_t d = active[p];
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= cur[i];
    for (int64_t i = d + 1; i < rank; ++i) inner *= cur[i];
    cur[d] = plan.axes[d].out_len;
    T* dst;
    if (p + 1 == active.size()) {
      dst = y;
    } else {
      std::unique_ptr<T[]>& buf = (p % 2 == 0) ? buf_a : buf_b;
      buf.reset(new T[static_cast<size_t>(shape_numel(cur))]);  // no zero fill: every element is written
      dst = buf.get();
    }
    resize_pass<T>(src, dst, outer, inner, plan.axes[d], static_cast<T>(a.extrapolation_value));
    src = dst;
  }
}

}  // namespace

const std::vector<DType>& resize_types() {
  static const std::vector<DType> types = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt8,
                                           DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,
                                           DType::kUInt32,  DType::kInt64,   DType::kUInt64};
  return types;
}

void resize_run(const ResizeAttrs& a, const ResizePlan& plan, const Tensor& x, Tensor& y, const std::string& where,
                ResizePath path) {
  if (x.shape() != plan.geometry.in)
    fail(where, ": internal: plan for ", shape_to_string(plan.geometry.in), " used with ", shape_to_string(x.shape()));
  if (y.numel() == 0) return;
  switch (x.dtype()) {
    case DType::kFloat32: resize_typed<float>(a, plan, x.data_as<float>(), y.data_as<float>(), path); return;
    case DType::kFloat64: resize_typed<double>(a, plan, x.data_as<double>(), y.data_as<double>(), path); return;
    case DType::kFloat16: {
      std::vector<float> xf = to_float_vector(x), yf(static_cast<size_t>(y.numel()));
      resize_typed<float>(a, plan, xf.data(), yf.data(), path);
      uint16_t* yh = y.data_as<uint16_t>();
      for (size_t i = 0; i < yf.size(); ++i) yh[i] = float_to_half(yf[i]);
      return;
    }
    default: {
      if (!is_int_type(x.dtype()))
        fail(where, ": input 'X' has element type ", dtype_name(x.dtype()), ", which Resize does not support");
      std::vector<double> xd = tensor_to_doubles(x, where, "X"), yd(static_cast<size_t>(y.numel()));
      resize_typed<double>(a, plan, xd.data(), yd.data(), path);
      doubles_to_tensor_truncating(yd, y);
      return;
    }
  }
}

}  // namespace pointrt::image
