#include <array>
#include <cmath>
#include <limits>

#include "ops/onnx/reduce/losses.h"
#include "ops/onnx/reduce/reduce_common.h"
#include "ops/onnx/reduce/softmax.h"
#include "ops/staging.h"

namespace pointrt::reduce {
namespace {

LossParams parse_loss_params(const KernelInit& init) {
  LossParams p;
  const std::string r = init.attrs().get_string("reduction", "mean");
  if (r == "none")
    p.reduction = LossReduction::kNone;
  else if (r == "sum")
    p.reduction = LossReduction::kSum;
  else if (r != "mean")
    fail(init.where(), ": attribute 'reduction' is '", r, "', expected none, sum or mean");
  p.has_ignore_index = init.attrs().has("ignore_index");
  p.ignore_index = init.attrs().get_int("ignore_index", 0);
  return p;
}

// Checks input [N, C, d...] against target [N, d...] and weight [C]; returns {N, C, D}.
std::array<int64_t, 3> loss_dims(const Tensor& input, const Tensor& target, const Tensor* weight,
                                 const std::string& where) {
  if (input.rank() < 2) fail(where, ": input 0 must be [N, C, ...], got shape ", shape_to_string(input.shape()));
  Shape expect = {input.dim(0)};
  for (size_t d = 2; d < input.rank(); ++d) expect.push_back(input.dim(d));
  if (target.shape() != expect)
    fail(where, ": input 1 (target) has shape ", shape_to_string(target.shape()), ", expected ",
         shape_to_string(expect), " for input 0 of shape ", shape_to_string(input.shape()));
  if (weight && weight->shape() != Shape{input.dim(1)})
    fail(where, ": input 2 (weight) has shape ", shape_to_string(weight->shape()), ", expected [", input.dim(1), "]");
  if (weight && weight->dtype() != input.dtype())
    fail(where, ": input 2 (weight) is ", dtype_name(weight->dtype()), " but input 0 is ", dtype_name(input.dtype()));
  int64_t D = 1;
  for (size_t d = 2; d < input.rank(); ++d) D *= input.dim(d);
  return {input.dim(0), input.dim(1), D};
}

// Writes the loss (reduced or per position) in `dtype` (half types rounded from float32).
void write_loss(KernelContext& ctx, const std::vector<double>& loss, const Shape& target_shape, LossReduction r,
                DType dtype) {
  const Shape shape = r == LossReduction::kNone ? target_shape : Shape{};
  Tensor staged = compute_tensor(dtype, shape);
  dispatch_float(staged.dtype(), "loss", [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < loss.size(); ++i) staged.data_as<T>()[i] = static_cast<T>(loss[i]);
  });
  store_output(ctx, 0, dtype, staged);
}

std::vector<int64_t> read_targets(const Tensor& t, const std::string& where) {
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)
    fail(where, ": input 1 (target) must be int32 or int64, got ", dtype_name(t.dtype()));
  std::vector<int64_t> r(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = t.dtype() == DType::kInt64 ? t.data_as<int64_t>()[i] : t.data_as<int32_t>()[i];
  return r;
}

}  // namespace

std::vector<double> nll_loss_ref(const Tensor& input, const std::vector<int64_t>& target, const Tensor* weight,
                                 int64_t N, int64_t C, int64_t D, const LossParams& p, const std::string& where) {
  std::vector<double> loss(static_cast<size_t>(N * D), 0.0);
  double weight_sum = 0;
  dispatch_float(input.dtype(), where.c_str(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = input.data_as<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t d = 0; d < D; ++d) {
        const int64_t pos = n * D + d, t = target[pos];
        if (p.has_ignore_index && t == p.ignore_index) continue;
        if (t < 0 || t >= C)
          fail(where, ": input 1 (target) holds ", t, " at flat position ", pos, ", outside [0, ", C - 1, "]",
               p.has_ignore_index ? str_cat(" and not ignore_index ", p.ignore_index) : std::string());
        const double w = weight ? static_cast<double>(weight->data_as<T>()[t]) : 1.0;
        loss[pos] = -static_cast<double>(x[(n * C + t) * D + d]) * w;
        weight_sum += w;
      }
  });
  if (p.reduction == LossReduction::kNone) return loss;
  double sum = 0;
  for (double v : loss) sum += v;
  if (p.reduction == LossReduction::kSum) return {sum};
  return {weight_sum != 0 ? sum / weight_sum : std::numeric_limits<double>::quiet_NaN()};
}

std::unique_ptr<OpKernel> make_nll_loss_kernel(const KernelInit& init) {
  const LossParams p = parse_loss_params(init);
  return make_function_kernel([p](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    const Tensor w = ctx.has_input(2) ? to_float32(ctx.input(2)) : Tensor();
    const Tensor* weight = w.defined() ? &w : nullptr;
    const auto [N, C, D] = loss_dims(x, ctx.input(1), weight, ctx.where());
    const auto loss = nll_loss_ref(x, read_targets(ctx.input(1), ctx.where()), weight, N, C, D, p, ctx.where());
    write_loss(ctx, loss, ctx.input(1).shape(), p.reduction, ctx.input(0).dtype());
  });
}

std::unique_ptr<OpKernel> make_softmax_cross_entropy_kernel(const KernelInit& init) {
  const LossParams p = parse_loss_params(init);
  return make_function_kernel([p](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    const Tensor w = ctx.has_input(2) ? to_float32(ctx.input(2)) : Tensor();
    const Tensor* weight = w.defined() ? &w : nullptr;
    const auto [N, C, D] = loss_dims(x, ctx.input(1), weight, ctx.where());
    Tensor log_prob = Tensor::allocate(x.dtype(), x.shape());
    softmax_reference(x, N, C, D, true, log_prob);
    const auto loss = nll_loss_ref(log_prob, read_targets(ctx.input(1), ctx.where()), weight, N, C, D, p, ctx.where());
    const DType dtype = ctx.input(0).dtype();
    write_loss(ctx, loss, ctx.input(1).shape(), p.reduction, dtype);
    if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) store_output(ctx, 1, dtype, log_prob);
  });
}

}  // namespace pointrt::reduce
