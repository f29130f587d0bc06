// Naive LayerNormalization / InstanceNormalization straight from the formulas, in long double.
#include <cmath>

#include "ops/onnx/reduce/normalization.h"

namespace pointrt::reduce {
namespace {
template <typename T>
void normalize_line(const T* x, int64_t n, long double eps, long double a_scale, long double a_bias, T* y,
                    long double& mean, long double& inv, const T* scale_vec, const T* bias_vec) {
  mean = 0;
  for (int64_t i = 0; i < n; ++i) mean += x[i];
  mean = n ? mean / n : 0;
  long double var = 0;
  for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var = n ? var / n : 0;
  inv = 1.0L / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i) {
    long double s = scale_vec ? scale_vec[i] : a_scale, b = scale_vec ? (bias_vec ? bias_vec[i] : 0) : a_bias;
    y[i] = static_cast<T>((x[i] - mean) * inv * s + b);
  }
}
}  // namespace

template <typename T>
void layer_norm_reference(const T* x, const T* scale, const T* bias, int64_t N, int64_t D, float epsilon, T* y,
                          float* mean_out, float* inv_out) {
  for (int64_t n = 0; n < N; ++n) {
    long double mean, inv;
    normalize_line(x + n * D, D, epsilon, 0, 0, y + n * D, mean, inv, scale, bias);
    if (mean_out) mean_out[n] = static_cast<float>(mean);
    if (inv_out) inv_out[n] = static_cast<float>(inv);
  }
}

template <typename T>
void instance_norm_reference(const T* x, const T* scale, const T* bias, int64_t N, int64_t C, int64_t S, float epsilon,
                             T* y) {
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      long double mean, inv;
      normalize_line(x + (n * C + c) * S, S, epsilon, scale[c], bias[c], y + (n * C + c) * S, mean, inv,
                     static_cast<const T*>(nullptr), static_cast<const T*>(nullptr));
    }
}

template void layer_norm_reference<float>(const float*, const float*, const float*, int64_t, int64_t, float, float*,
                                          float*, float*);
template void layer_norm_reference<double>(const double*, const double*, const double*, int64_t, int64_t, float,
                                           double*, float*, float*);
template void instance_norm_reference<float>(const float*, const float*, const float*, int64_t, int64_t, int64_t, float,
                                             float*);
template void instance_norm_reference<double>(const double*, const double*, const double*, int64_t, int64_t, int64_t,
                                              float, double*);

}  // namespace pointrt::reduce
