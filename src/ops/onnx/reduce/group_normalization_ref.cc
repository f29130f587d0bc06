#include "ops/onnx/reduce/group_normalization.h"

#include <cmath>

#include "ops/staging.h"

namespace pointrt::reduce {

void group_normalization_ref(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t groups, bool per_channel,
                             float epsilon, Tensor& y) {
  const int64_t N = x.dim(0), C = x.dim(1), S = N * C != 0 ? x.numel() / (N * C) : 0, cg = C / groups;
  dispatch_float(x.dtype(), "GroupNormalization", [&](auto tag) {
    using T = decltype(tag);
    const T *in = x.data_as<T>(), *sc = scale.data_as<T>(), *bi = bias.data_as<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t g = 0; g < groups; ++g) {
        const T* base = in + (n * C + g * cg) * S;
        const int64_t count = cg * S;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < count; ++i) sum += base[i];
        const double mean = count ? sum / count : 0;
        for (int64_t i = 0; i < count; ++i) sq += (base[i] - mean) * (base[i] - mean);
        const double inv = 1.0 / std::sqrt((count ? sq / count : 0) + epsilon);
        for (int64_t i = 0; i < count; ++i) {
          const int64_t p = per_channel ? g * cg + i / S : g;
          y.data_as<T>()[(n * C + g * cg) * S + i] = static_cast<T>((base[i] - mean) * inv * sc[p] + bi[p]);
        }
      }
  });
}

std::unique_ptr<OpKernel> make_group_normalization_kernel(const KernelInit& init) {
  const int64_t groups = init.attrs().get_int("num_groups");
  const float epsilon = init.attrs().get_float("epsilon", 1e-5f);
  const bool per_channel = init.opset() >= 21;
  if (groups < 1) fail(init.where(), ": attribute 'num_groups' must be >= 1, got ", groups);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0)), scale = to_float32(ctx.input(1)), bias = to_float32(ctx.input(2));
    if (x.rank() < 2) fail(ctx.where(), ": input 0 must be [N, C, ...], got shape ", shape_to_string(x.shape()));
    if (x.dim(1) % groups) fail(ctx.where(), ": num_groups ", groups, " does not divide C = ", x.dim(1));
    const int64_t want = per_channel ? x.dim(1) : groups;
    for (const auto& [t, name] : {std::pair{&scale, "scale"}, std::pair{&bias, "bias"}}) {
      if (t->numel() != want || t->rank() != 1)
        fail(ctx.where(), ": input '", name, "' has shape ", shape_to_string(t->shape()), ", expected [", want, "] (",
             per_channel ? "one per channel, opset 21" : "one per group, opset 18", ")");
      if (t->dtype() != x.dtype())
        fail(ctx.where(), ": input '", name, "' is ", dtype_name(t->dtype()), " but X is ", dtype_name(x.dtype()));
    }
    Tensor y = compute_tensor(ctx.input(0).dtype(), x.shape());
    group_normalization_ref(x, scale, bias, groups, per_channel, epsilon, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::reduce
