#include <cmath>

#include "ops/onnx/training/optimizers.h"
#include "ops/staging.h"

namespace pointrt::training {

double optimizer_step_ref(const OptimizerParams& p, double r, int64_t t, double x, double g, double* s) {
  const double gr = p.norm_coefficient * x + g;
  switch (p.kind) {
    case OptimizerKind::kAdagrad: {
      const double rate = r / (1 + static_cast<double>(t) * p.decay_factor);
      s[0] += gr * gr;
      return x - rate * gr / (std::sqrt(s[0]) + p.epsilon);
    }
    case OptimizerKind::kMomentum: {
      s[0] = p.alpha * s[0] + (t > 0 ? p.beta : 1.0) * gr;
      return p.nesterov ? x - r * (gr + p.alpha * s[0]) : x - r * s[0];
    }
    case OptimizerKind::kAdam: {
      s[0] = p.alpha * s[0] + (1 - p.alpha) * gr;
      s[1] = p.beta * s[1] + (1 - p.beta) * gr * gr;
      const double td = static_cast<double>(t);
      const double rate = t > 0 ? r * std::sqrt(1 - std::pow(p.beta, td)) / (1 - std::pow(p.alpha, td)) : r;
      return (1 - p.norm_coefficient_post) * (x - rate * s[0] / (std::sqrt(s[1]) + p.epsilon));
    }
  }
  return x;
}

namespace {

double scalar_value(KernelContext& ctx, size_t i, const char* what) {
  const Tensor v = to_float32(ctx.input(i));
  if (v.numel() != 1) fail(ctx.where(), ": ", what, " must be a scalar, got shape ", shape_to_string(v.shape()));
  double r = 0;
  dispatch_numeric(v.dtype(), ctx.where().c_str(),
                   [&](auto tag) { r = static_cast<double>(v.data_as<decltype(tag)>()[0]); });
  return r;
}

void run_optimizer(KernelContext& ctx, const OptimizerParams& p) {
  const size_t states = p.kind == OptimizerKind::kAdam ? 2 : 1, groups = 2 + states;
  const size_t n_in = ctx.num_inputs();
  if (n_in < 2 + groups || (n_in - 2) % groups != 0 || ctx.num_outputs() != (n_in - 2) / groups * (1 + states))
    fail(ctx.where(), ": takes R, T and ", groups, " tensors per optimised tensor (and returns ", 1 + states,
         " per tensor); got ", n_in, " inputs and ", ctx.num_outputs(), " outputs");
  const size_t n = (n_in - 2) / groups;
  const double r = scalar_value(ctx, 0, "input 0 (R)");
  if (ctx.input(1).dtype() != DType::kInt64 || ctx.input(1).numel() != 1)
    fail(ctx.where(), ": input 1 (T) must be an int64 scalar");
  const int64_t t = ctx.input(1).data_as<int64_t>()[0];
  for (size_t k = 0; k < n; ++k) {
    const Tensor x = to_float32(ctx.input(2 + k));
    std::vector<Tensor> in;  // G, then the states
    for (size_t j = 1; j < groups; ++j) {
      in.push_back(to_float32(ctx.input(2 + j * n + k)));
      if (in.back().shape() != x.shape() || in.back().dtype() != x.dtype())
        fail(ctx.where(), ": input ", 2 + j * n + k, " is ", dtype_name(ctx.input(2 + j * n + k).dtype()), " ",
             shape_to_string(in.back().shape()), " but X (input ", 2 + k, ") is ", dtype_name(ctx.input(2 + k).dtype()),
             " ", shape_to_string(x.shape()));
    }
    std::vector<Tensor> out;
    for (size_t j = 0; j <= states; ++j) out.push_back(compute_tensor(ctx.input(2 + k).dtype(), x.shape()));
    dispatch_float(x.dtype(), ctx.where().c_str(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t e = 0; e < x.numel(); ++e) {
        double s[2] = {0, 0};
        for (size_t j = 0; j < states; ++j) s[j] = in[1 + j].data_as<T>()[e];
        out[0].data_as<T>()[e] =
            static_cast<T>(optimizer_step_ref(p, r, t, x.data_as<T>()[e], in[0].data_as<T>()[e], s));
        for (size_t j = 0; j < states; ++j) out[1 + j].data_as<T>()[e] = static_cast<T>(s[j]);
      }
    });
    for (size_t j = 0; j <= states; ++j) store_output(ctx, j * n + k, ctx.input(2 + k).dtype(), out[j]);
  }
}

}  // namespace

std::unique_ptr<OpKernel> make_optimizer_kernel(const KernelInit& init, OptimizerKind kind) {
  const Attributes& a = init.attrs();
  OptimizerParams p;
  p.kind = kind;
  p.norm_coefficient = a.get_float("norm_coefficient", 0.f);
  if (kind == OptimizerKind::kAdagrad) {
    p.epsilon = a.get_float("epsilon", 1e-6f);
    p.decay_factor = a.get_float("decay_factor", 0.f);
  } else if (kind == OptimizerKind::kMomentum) {
    p.alpha = a.get_float("alpha");
    p.beta = a.get_float("beta");
    const std::string mode = a.get_string("mode", "");
    if (mode != "standard" && mode != "nesterov")
      fail(init.where(), ": attribute 'mode' is '", mode, "', expected standard or nesterov");
    p.nesterov = mode == "nesterov";
  } else {
    p.alpha = a.get_float("alpha", 0.9f);
    p.beta = a.get_float("beta", 0.999f);
    p.epsilon = a.get_float("epsilon", 1e-6f);
    p.norm_coefficient_post = a.get_float("norm_coefficient_post", 0.f);
  }
  return make_function_kernel([p](KernelContext& ctx) { run_optimizer(ctx, p); });
}

void add_training_rows(OpTable& t) {
  const std::vector<DType> F = {DType::kFloat32, DType::kFloat64};
  t.add({kTrainingDomain, "Adagrad", 1, 1, F,
         [](const KernelInit& i) { return make_optimizer_kernel(i, OptimizerKind::kAdagrad); },
         "decay_factor, epsilon, norm_coefficient", 0});
  t.add({kTrainingDomain, "Momentum", 1, 1, F,
         [](const KernelInit& i) { return make_optimizer_kernel(i, OptimizerKind::kMomentum); }, "standard | nesterov",
         0});
  t.add({kTrainingDomain, "Adam", 1, 1, F,
         [](const KernelInit& i) { return make_optimizer_kernel(i, OptimizerKind::kAdam); },
         "alpha, beta, epsilon, norm_coefficient(_post)", 0});
}

}  // namespace pointrt::training
