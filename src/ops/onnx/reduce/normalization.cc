// LayerNormalization / InstanceNormalization: one row (or channel plane) per OpenMP iteration,
// two contiguous sweeps for the statistics (mean, then centred variance) and one to write.
#include "ops/onnx/reduce/normalization.h"

#include <cmath>
#include <type_traits>
#include <vector>

#include "ops/onnx/reduce/reduce_common.h"

namespace pointrt::reduce {
namespace {

using namespace detail;

// Mean and biased variance of a contiguous row, in double.
template <typename T>
inline void row_stats(const T* x, int64_t D, double& mean, double& var) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t d = 0;
  for (; d + 4 <= D; d += 4) {
    s0 += x[d];
    s1 += x[d + 1];
    s2 += x[d + 2];
    s3 += x[d + 3];
  }
  for (; d < D; ++d) s0 += x[d];
  mean = D ? (s0 + s1 + s2 + s3) / static_cast<double>(D) : 0.0;
  double v0 = 0, v1 = 0, v2 = 0, v3 = 0;
  for (d = 0; d + 4 <= D; d += 4) {
    double a = x[d] - mean, b = x[d + 1] - mean, c = x[d + 2] - mean, e = x[d + 3] - mean;
    v0 += a * a;
    v1 += b * b;
    v2 += c * c;
    v3 += e * e;
  }
  for (; d < D; ++d) {
    double a = x[d] - mean;
    v0 += a * a;
  }
  var = D ? (v0 + v1 + v2 + v3) / static_cast<double>(D) : 0.0;
}

// Float rows of 32-4096 (LayerNorm over 64-1024 features): the double sweeps above are bound by
// float-to-double converts. Here 32 float lanes (two vectors) per sweep, each lane summing at
// most 128 elements, the lanes added in double; the variance stays centred.
constexpr int64_t kFloatLanes = 32, kFloatLaneMaxRow = 4096;
inline void row_stats_float_lanes(const float* x, int64_t D, double& mean, double& var) {
#if defined(__AVX512F__)
  mean = float_lanes_sum16<kFloatLanes>(x, D, [](__m512 v) { return v; }) / static_cast<double>(D);
  const __m512 m = _mm512_set1_ps(static_cast<float>(mean));
  var = float_lanes_sum16<kFloatLanes>(x, D,
                                       [m](__m512 v) {
                                         const __m512 c = _mm512_sub_ps(v, m);
                                         return _mm512_mul_ps(c, c);
                                       }) /
        static_cast<double>(D);
#else
  mean = float_lanes_sum<kFloatLanes>(x, D, [](float v) { return v; }) / static_cast<double>(D);
  const float m = static_cast<float>(mean);
  var = float_lanes_sum<kFloatLanes>(x, D, [m](float v) { return (v - m) * (v - m); }) / static_cast<double>(D);
#endif
}

template <typename T>
inline void row_stats_fast(const T* x, int64_t D, double& mean, double& var) {
  if constexpr (std::is_same_v<T, float>) {
    if (D >= kFloatLanes && D <= kFloatLaneMaxRow) return row_stats_float_lanes(x, D, mean, var);
  }
  row_stats(x, D, mean, var);
}

class LayerNormKernel : public OpKernel {
 public:
  explicit LayerNormKernel(const KernelInit& init) {
    axis_ = init.attrs().get_int("axis", -1);
    epsilon_ = init.attrs().get_float("epsilon", 1e-5f);
    int64_t stash = init.attrs().get_int("stash_type", 1);
    if (stash != 1) fail(init.where(), ": stash_type ", stash, " is not supported (expected 1, float32)");
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const int64_t rank = static_cast<int64_t>(x.rank());
    const int64_t axis = normalize_axis(axis_, rank, ctx.where());
    Shape norm_shape(x.shape().begin() + axis, x.shape().end()), stat_shape = x.shape();
    int64_t N = 1, D = shape_numel(norm_shape);
    for (int64_t i = 0; i < rank; ++i)
      if (i < axis)
        N *= x.dim(i);
      else
        stat_shape[i] = 1;
    auto check = [&](const Tensor& t, const char* name) {
      if (t.dtype() != x.dtype())
        fail(ctx.where(), ": input '", name, "' has element type ", dtype_name(t.dtype()), ", expected ",
             dtype_name(x.dtype()));
      if (!broadcastable_to(t.shape(), norm_shape))
        fail(ctx.where(), ": input '", name, "' of shape ", shape_to_string(t.shape()),
             " does not broadcast to the normalised shape ", shape_to_string(norm_shape));
    };
    check(scale, "Scale");
    const bool has_bias = ctx.has_input(2);
    if (has_bias) check(ctx.input(2), "B");
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    float* mean = ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0
                      ? ctx.output(1, DType::kFloat32, stat_shape).data_as<float>()
                      : nullptr;
    float* inv = ctx.num_outputs() > 2 && ctx.node().outputs[2] >= 0
                     ? ctx.output(2, DType::kFloat32, stat_shape).data_as<float>()
                     : nullptr;
    dispatch_float(x.dtype(), "LayerNormalization", [&](auto tag) {
      using T = decltype(tag);
      // Dense [D] scale and bias (no copy when already dense).
      std::vector<T> scale_buf, bias_buf;
      const T* s = scale.data_as<T>();
      if (scale.numel() != D) {
        scale_buf.resize(D);
        expand_to(s, scale.shape(), norm_shape, scale_buf.data());
        s = scale_buf.data();
      }
      const T* b = nullptr;
      if (has_bias) {
        const Tensor& bt = ctx.input(2);
        b = bt.data_as<T>();
        if (bt.numel() != D) {
          bias_buf.resize(D);
          expand_to(b, bt.shape(), norm_shape, bias_buf.data());
          b = bias_buf.data();
        }
      }
      layer_norm_optimized<T>(x.data_as<T>(), s, b, N, D, epsilon_, y.data_as<T>(), mean, inv);
    });
  }

 private:
  int64_t axis_;
  float epsilon_;
};

class InstanceNormKernel : public OpKernel {
 public:
  explicit InstanceNormKernel(const KernelInit& init) { epsilon_ = init.attrs().get_float("epsilon", 1e-5f); }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor& bias = ctx.input(2);
    if (x.rank() < 2)
      fail(ctx.where(), ": input must have rank >= 2 ([N, C, ...]), got shape ", shape_to_string(x.shape()));
    const int64_t N = x.dim(0), C = x.dim(1), S = x.numel() / std::max<int64_t>(1, N * C);
    for (auto [t, name] : {std::pair<const Tensor*, const char*>{&scale, "scale"}, {&bias, "B"}}) {
      if (t->rank() != 1 || t->dim(0) != C)
        fail(ctx.where(), ": input '", name, "' must have shape [", C, "] (the channels of input ",
             shape_to_string(x.shape()), "), got ", shape_to_string(t->shape()));
      if (t->dtype() != x.dtype())
        fail(ctx.where(), ": input '", name, "' has element type ", dtype_name(t->dtype()), ", expected ",
             dtype_name(x.dtype()));
    }
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    if (x.numel() == 0) return;
    dispatch_float(x.dtype(), "InstanceNormalization", [&](auto tag) {
      using T = decltype(tag);
      instance_norm_optimized<T>(x.data_as<T>(), scale.data_as<T>(), bias.data_as<T>(), N, C, S, epsilon_,
                                 y.data_as<T>());
    });
  }

 private:
  float epsilon_;
};

}  // namespace

template <typename T>
void layer_norm_optimized(const T* x, const T* scale, const T* bias, int64_t N, int64_t D, float epsilon, T* y,
                          float* mean_out, float* inv_out) {
  // Rows in blocks of 8: the statistics of the block first, then its outputs, so the short
  // dependent chains of several rows (two lane trees, a square root, a division) overlap.
  constexpr int64_t kRows = 8;
#pragma omp parallel for if (N * D > (1 << 14))
  for (int64_t n0 = 0; n0 < N; n0 += kRows) {
    const int64_t rows = std::min(kRows, N - n0);
    double mean[kRows], inv[kRows];
    for (int64_t r = 0; r < rows; ++r) {
      double var;
      row_stats_fast(x + (n0 + r) * D, D, mean[r], var);
      inv[r] = 1.0 / std::sqrt(var + static_cast<double>(epsilon));
    }
    for (int64_t r = 0; r < rows; ++r) {
      const T* in = x + (n0 + r) * D;
      T* out = y + (n0 + r) * D;
      const T m = static_cast<T>(mean[r]), iv = static_cast<T>(inv[r]);
      if (bias)
        for (int64_t d = 0; d < D; ++d) out[d] = (in[d] - m) * iv * scale[d] + bias[d];
      else
        for (int64_t d = 0; d < D; ++d) out[d] = (in[d] - m) * iv * scale[d];
      if (mean_out) mean_out[n0 + r] = static_cast<float>(mean[r]);
      if (inv_out) inv_out[n0 + r] = static_cast<float>(inv[r]);
    }
  }
}

template <typename T>
void instance_norm_optimized(const T* x, const T* scale, const T* bias, int64_t N, int64_t C, int64_t S, float epsilon,
                             T* y) {
#pragma omp parallel for if (N * C * S > (1 << 14))
  for (int64_t nc = 0; nc < N * C; ++nc) {
    const int64_t c = nc % C;
    const T* in = x + nc * S;
    T* out = y + nc * S;
    double mean, var;
    row_stats_fast(in, S, mean, var);
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(epsilon));
    // y = x * a + b with a = scale * inv, b = bias - mean * a.
    const T a = static_cast<T>(scale[c] * inv), b = static_cast<T>(bias[c] - mean * scale[c] * inv);
    for (int64_t s = 0; s < S; ++s) out[s] = in[s] * a + b;
  }
}

template void layer_norm_optimized<float>(const float*, const float*, const float*, int64_t, int64_t, float, float*,
                                          float*, float*);
template void layer_norm_optimized<double>(const double*, const double*, const double*, int64_t, int64_t, float,
                                           double*, float*, float*);
template void instance_norm_optimized<float>(const float*, const float*, const float*, int64_t, int64_t, int64_t, float,
                                             float*);
template void instance_norm_optimized<double>(const double*, const double*, const double*, int64_t, int64_t, int64_t,
                                              float, double*);

std::unique_ptr<OpKernel> make_layer_norm_kernel(const KernelInit& init) {
  return std::make_unique<LayerNormKernel>(init);
}
std::unique_ptr<OpKernel> make_instance_norm_kernel(const KernelInit& init) {
  return std::make_unique<InstanceNormKernel>(init);
}

}  // namespace pointrt::reduce
