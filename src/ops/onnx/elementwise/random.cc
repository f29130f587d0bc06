#include "ops/onnx/elementwise/random.h"

#include <cmath>

#include "ops/staging.h"

namespace pointrt::elementwise {

double RandomStream::normal() {
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  double u1 = uniform();
  while (u1 <= 0) u1 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1)), t = 2.0 * M_PI * uniform();
  spare_ = r * std::sin(t);
  have_spare_ = true;
  return r * std::cos(t);
}

namespace {

struct RandomParams {
  RandomOp op;
  bool seeded = false;
  uint32_t seed = 0;
  double a = 0, b = 1;              // low/high (uniform) or mean/scale (normal)
  DType dtype = DType::kUndefined;  // from the attribute, or undefined = the input's
  Shape shape;                      // RandomUniform / RandomNormal
  int64_t sample_size = 1;
};

// Fills a compute-type tensor of `shape` with f(stream) values and stores output 0 as `dtype`.
template <typename F>
void store_draws(KernelContext& ctx, DType dtype, const Shape& shape, F f) {
  Tensor y = compute_tensor(dtype, shape);
  dispatch_float(y.dtype(), ctx.where().c_str(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t i = 0; i < y.numel(); ++i) y.data_as<T>()[i] = static_cast<T>(f(i));
  });
  store_output(ctx, 0, dtype, y);
}

void run_multinomial(KernelContext& ctx, const RandomParams& p, RandomStream& s) {
  const Tensor x = to_float32(ctx.input(0));
  if (x.rank() != 2) fail(ctx.where(), ": input must be [batch, classes], got ", shape_to_string(x.shape()));
  const int64_t B = x.dim(0), K = x.dim(1);
  if (K == 0) fail(ctx.where(), ": input has no classes");
  Tensor& y = ctx.output(0, p.dtype, {B, p.sample_size});
  std::vector<double> cdf(static_cast<size_t>(K));
  dispatch_float(x.dtype(), ctx.where().c_str(), [&](auto tag) {
    using T = decltype(tag);
    for (int64_t b = 0; b < B; ++b) {
      const T* row = x.data_as<T>() + b * K;
      const double mx = *std::max_element(row, row + K);
      double total = 0;
      for (int64_t k = 0; k < K; ++k) cdf[k] = total += std::exp(row[k] - mx);
      for (int64_t j = 0; j < p.sample_size; ++j) {
        const double u = s.uniform() * total;
        const int64_t k = std::min<int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin(), K - 1);
        if (p.dtype == DType::kInt64)
          y.data_as<int64_t>()[b * p.sample_size + j] = k;
        else
          y.data_as<int32_t>()[b * p.sample_size + j] = static_cast<int32_t>(k);
      }
    }
  });
}

void run_random(KernelContext& ctx, const RandomParams& p) {
  RandomStream s(p.seeded ? p.seed : std::random_device{}());
  const bool like = p.op == RandomOp::kUniformLike || p.op == RandomOp::kNormalLike || p.op == RandomOp::kBernoulli;
  const DType dtype = p.dtype != DType::kUndefined ? p.dtype : ctx.input(0).dtype();
  const Shape shape = like ? ctx.input(0).shape() : p.shape;
  if (p.op != RandomOp::kBernoulli && p.op != RandomOp::kMultinomial && !is_float_type(dtype) && !is_half_type(dtype))
    fail(ctx.where(), ": the output type ", dtype_name(dtype), " is not a float type (give attribute 'dtype')");
  const double lo = p.a, hi = p.b;
  switch (p.op) {
    case RandomOp::kUniform:
    case RandomOp::kUniformLike:
      return store_draws(ctx, dtype, shape, [&](int64_t) { return lo + (hi - lo) * s.uniform(); });
    case RandomOp::kNormal:
    case RandomOp::kNormalLike: return store_draws(ctx, dtype, shape, [&](int64_t) { return lo + hi * s.normal(); });
    case RandomOp::kBernoulli: {
      const Tensor x = to_float32(ctx.input(0));
      Tensor prob = Tensor::allocate(DType::kFloat64, x.shape());
      dispatch_float(x.dtype(), ctx.where().c_str(), [&](auto tag) {
        for (int64_t i = 0; i < x.numel(); ++i) prob.data_as<double>()[i] = x.data_as<decltype(tag)>()[i];
      });
      if (!is_float_type(dtype) && !is_half_type(dtype) && dtype != DType::kBool && !is_int_type(dtype))
        fail(ctx.where(), ": attribute 'dtype' ", dtype_name(dtype), " is not a numeric type");
      Tensor y = Tensor::allocate(DType::kFloat64, x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) y.data_as<double>()[i] = s.uniform() < prob.data_as<double>()[i];
      Tensor& out = ctx.output(0, dtype, x.shape());
      if (is_half_type(dtype)) {
        Tensor f = Tensor::allocate(DType::kFloat32, x.shape());
        for (int64_t i = 0; i < x.numel(); ++i) f.data_as<float>()[i] = static_cast<float>(y.data_as<double>()[i]);
        float32_to_half(f, out);
      } else {
        dispatch_all(dtype, ctx.where().c_str(), [&](auto tag) {
          using T = decltype(tag);
          for (int64_t i = 0; i < x.numel(); ++i) out.data_as<T>()[i] = static_cast<T>(y.data_as<double>()[i]);
        });
      }
      return;
    }
    case RandomOp::kMultinomial: return run_multinomial(ctx, p, s);
  }
}

}  // namespace

KernelFactory random_factory(RandomOp op) {
  return [op](const KernelInit& init) {
    const Attributes& a = init.attrs();
    RandomParams p;
    p.op = op;
    p.seeded = a.has("seed");
    p.seed = static_cast<uint32_t>(static_cast<int64_t>(a.get_float("seed", 0.f)));
    const bool normal = op == RandomOp::kNormal || op == RandomOp::kNormalLike;
    p.a = normal ? a.get_float("mean", 0.f) : a.get_float("low", 0.f);
    p.b = normal ? a.get_float("scale", 1.f) : a.get_float("high", 1.f);
    if (a.has("dtype")) p.dtype = static_cast<DType>(a.get_int("dtype"));
    if (op == RandomOp::kUniform || op == RandomOp::kNormal) {
      p.shape = a.get_ints("shape");
      for (int64_t d : p.shape)
        if (d < 0) fail(init.where(), ": attribute 'shape' ", shape_to_string(p.shape), " has a negative dimension");
      if (p.dtype == DType::kUndefined) p.dtype = DType::kFloat32;
    }
    if (op == RandomOp::kMultinomial) {
      p.dtype = static_cast<DType>(a.get_int("dtype", static_cast<int64_t>(DType::kInt32)));
      p.sample_size = a.get_int("sample_size", 1);
      if (p.dtype != DType::kInt32 && p.dtype != DType::kInt64)
        fail(init.where(), ": attribute 'dtype' must be int32 or int64, got ", dtype_name(p.dtype));
      if (p.sample_size < 0) fail(init.where(), ": attribute 'sample_size' must be >= 0");
    } else if (op != RandomOp::kBernoulli && p.dtype != DType::kUndefined && !is_float_type(p.dtype) &&
               !is_half_type(p.dtype)) {
      fail(init.where(), ": attribute 'dtype' must be a float type, got ", dtype_name(p.dtype));
    }
    return make_function_kernel([p](KernelContext& ctx) { run_random(ctx, p); });
  };
}

}  // namespace pointrt::elementwise
