// BatchNormalization (inference). Coefficients are precomputed in the factory when the
// parameters are constant; the nn graph pass folds most BatchNorms into the preceding Conv.
#include "ops/onnx/nn/batchnorm.h"

#include <cmath>

#include "ops/kernel.h"
#include "ops/onnx/nn/nn_kernels.h"

namespace pointrt::nn {

void batch_norm_coefficients(const float* scale, const float* bias, const float* mean, const float* var, float epsilon,
                             int64_t n, std::vector<float>& mul, std::vector<float>& add) {
  mul.resize(n);
  add.resize(n);
  for (int64_t c = 0; c < n; ++c) {
    mul[c] = scale[c] / std::sqrt(var[c] + epsilon);
    add[c] = bias[c] - mean[c] * mul[c];
  }
}

void batch_norm_apply(const float* x, float* y, int64_t outer, int64_t channels, int64_t inner, const float* mul,
                      const float* add) {
#pragma omp parallel for collapse(2) schedule(static) if (outer * channels * inner > 32768)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < channels; ++c) {
      const float* xp = x + (o * channels + c) * inner;
      float* yp = y + (o * channels + c) * inner;
      float m = mul[c], a = add[c];
      for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] * m + a;
    }
}

namespace {

class BatchNormKernel : public OpKernel {
 public:
  explicit BatchNormKernel(const KernelInit& init) : where_(init.where()) {
    const Attributes& a = init.attrs();
    epsilon_ = a.get_float("epsilon", 1e-5f);
    // training_mode = 1 is valid ONNX (normalise with the batch's statistics) and runs as the
    // spec says; `pointrt inspect` warns about it, since a deployed model rarely means it.
    training_ = batch_norm_trains(a, init.opset());
    momentum_ = a.get_float("momentum", 0.9f);
    spatial_ = init.opset() < 9 ? a.get_int("spatial", 1) != 0 : true;
    if (training_ && !spatial_) fail(where_, ": training mode with spatial = 0 is not supported");
    for (size_t i = 3; i < init.node.outputs.size(); ++i)
      if (init.node.outputs[i] >= 0 && !training_)
        fail(where_, ": output ", i, " (saved mean/variance) exists only in training mode");
    bool all_const = true;
    for (size_t i = 1; i <= 4; ++i) all_const = all_const && init.constant_input(i);
    if (all_const && spatial_) {
      const Tensor *s = init.constant_input(1), *b = init.constant_input(2), *m = init.constant_input(3),
                   *v = init.constant_input(4);
      int64_t n = s->numel();
      if (s->dtype() == DType::kFloat32 && b->dtype() == DType::kFloat32 && m->dtype() == DType::kFloat32 &&
          v->dtype() == DType::kFloat32 && b->numel() == n && m->numel() == n && v->numel() == n) {
        batch_norm_coefficients(s->data_as<float>(), b->data_as<float>(), m->data_as<float>(), v->data_as<float>(),
                                epsilon_, n, mul_, add_);
        have_coefficients_ = true;
      }
    }
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32)
      fail(where_, ": input X has element type ", dtype_name(x.dtype()), ", expected float");
    if (x.rank() < 2)
      fail(where_, ": input X must have rank >= 2 ([N, C, ...]), got shape ", shape_to_string(x.shape()));
    int64_t channels = x.dim(1);
    int64_t per_sample = shape_numel(Shape(x.shape().begin() + 1, x.shape().end()));
    int64_t params = spatial_ ? channels : per_sample;
    static const char* names[] = {"", "scale", "B", "input_mean", "input_var"};
    for (int i = 1; i <= 4; ++i) {
      const Tensor& p = ctx.input(i);
      if (p.dtype() != DType::kFloat32)
        fail(where_, ": input ", names[i], " has element type ", dtype_name(p.dtype()), ", expected float");
      if (p.numel() != params)
        fail(where_, ": input ", names[i], " has shape ", shape_to_string(p.shape()), ", expected ", params,
             " values for X ", shape_to_string(x.shape()));
    }
    if (training_) return run_training(ctx, x, channels, per_sample / std::max<int64_t>(channels, 1));
    Tensor& y = ctx.output(0, DType::kFloat32, x.shape());
    if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) ctx.set_output(1, ctx.input(3));
    if (ctx.num_outputs() > 2 && ctx.node().outputs[2] >= 0) ctx.set_output(2, ctx.input(4));
    std::vector<float> mul_local, add_local;
    const float *mul = mul_.data(), *add = add_.data();
    if (!have_coefficients_) {
      batch_norm_coefficients(ctx.input(1).data_as<float>(), ctx.input(2).data_as<float>(),
                              ctx.input(3).data_as<float>(), ctx.input(4).data_as<float>(), epsilon_, params, mul_local,
                              add_local);
      mul = mul_local.data();
      add = add_local.data();
    }
    if (x.numel() == 0) return;
    if (spatial_)
      batch_norm_apply(x.data_as<float>(), y.data_as<float>(), x.dim(0), channels,
                       per_sample / std::max<int64_t>(channels, 1), mul, add);
    else
      batch_norm_apply(x.data_as<float>(), y.data_as<float>(), x.dim(0), per_sample, 1, mul, add);
  }

 private:
  // Batch statistics over every axis but the channel (population variance), as the ONNX
  // reference: outputs Y, running_mean = mean*momentum + batch_mean*(1-momentum), likewise var.
  void run_training(KernelContext& ctx, const Tensor& x, int64_t channels, int64_t inner) const {
    const int64_t outer = x.dim(0), count = outer * inner;
    const float* xd = x.data_as<float>();
    std::vector<double> mean(static_cast<size_t>(channels), 0.0), var(static_cast<size_t>(channels), 0.0);
#pragma omp parallel for if (x.numel() > 65536)
    for (int64_t c = 0; c < channels; ++c) {
      double sum = 0, sq = 0;
      for (int64_t n = 0; n < outer; ++n) {
        const float* row = xd + (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) sum += row[i];
      }
      double m = count ? sum / count : 0.0;
      for (int64_t n = 0; n < outer; ++n) {
        const float* row = xd + (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) sq += (row[i] - m) * (row[i] - m);
      }
      mean[c] = m;
      var[c] = count ? sq / count : 0.0;
    }
    std::vector<float> batch_mean(mean.begin(), mean.end()), batch_var(var.begin(), var.end()), mul, add;
    batch_norm_coefficients(ctx.input(1).data_as<float>(), ctx.input(2).data_as<float>(), batch_mean.data(),
                            batch_var.data(), epsilon_, channels, mul, add);
    Tensor& y = ctx.output(0, DType::kFloat32, x.shape());
    if (x.numel()) batch_norm_apply(xd, y.data_as<float>(), outer, channels, inner, mul.data(), add.data());
    const float* running[2] = {ctx.input(3).data_as<float>(), ctx.input(4).data_as<float>()};
    const std::vector<float>* batch[2] = {&batch_mean, &batch_var};
    for (size_t k = 0; k < 2; ++k) {
      if (ctx.num_outputs() <= 1 + k || ctx.node().outputs[1 + k] < 0) continue;
      Tensor& r = ctx.output(1 + k, DType::kFloat32, {channels});
      for (int64_t c = 0; c < channels; ++c)
        r.data_as<float>()[c] = running[k][c] * momentum_ + (*batch[k])[c] * (1.f - momentum_);
    }
    for (size_t k = 0; k < 2; ++k) {  // opset < 14 saved_mean / saved_var outputs (3, 4)
      if (ctx.num_outputs() <= 3 + k || ctx.node().outputs[3 + k] < 0) continue;
      Tensor& r = ctx.output(3 + k, DType::kFloat32, {channels});
      std::copy(batch[k]->begin(), batch[k]->end(), r.data_as<float>());
    }
  }

  std::string where_;
  float epsilon_ = 1e-5f, momentum_ = 0.9f;
  bool spatial_ = true, have_coefficients_ = false, training_ = false;
  std::vector<float> mul_, add_;
};

}  // namespace

std::unique_ptr<OpKernel> make_batch_norm_kernel(const KernelInit& init) {
  return std::make_unique<BatchNormKernel>(init);
}

}  // namespace pointrt::nn
