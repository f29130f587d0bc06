// Dropout and Identity kernels.
//
// Dropout in training mode keeps an element when u >= ratio, u drawn uniform in [0, 1) from
// MT19937 seeded with the node's `seed` attribute, in row-major order, with numpy's legacy
// 53-bit doubles (RandomState(seed).uniform): the ONNX reference's stream, so a seeded node
// gives the reference's mask. Without a seed each run draws a fresh one.
#include <random>

#include "ops/onnx/elementwise/dropout.h"

namespace pointrt::elementwise {

namespace {
// numpy RandomState.random_sample: (a >> 5, b >> 6) of two 32-bit draws -> a 53-bit double.
double next_numpy_double(std::mt19937& rng) {
  uint32_t a = rng() >> 5, b = rng() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

void training_dropout(KernelContext& ctx, const Tensor& x, double ratio, uint32_t seed, bool mask_is_bool) {
  std::mt19937 rng(seed);
  int64_t n = x.numel();
  std::vector<uint8_t> keep(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keep[i] = next_numpy_double(rng) >= ratio;
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  double scale = 1.0 / (1.0 - ratio);
  dispatch_float(x.dtype(), WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
    using T = decltype(tag);
    const T* in = x.data_as<T>();
    T* out = y.data_as<T>();
    for (int64_t i = 0; i < n; ++i) out[i] = keep[i] ? static_cast<T>(in[i] * scale) : T(0);
  });
  if (ctx.num_outputs() > 1 && ctx.node().outputs[1] >= 0) {
    if (mask_is_bool) {
      Tensor& m = ctx.output(1, DType::kBool, x.shape());
      std::copy(keep.begin(), keep.end(), m.data_as<uint8_t>());
      return;
    }
    Tensor& m = ctx.output(1, x.dtype(), x.shape());  // opset < 10: 1 kept, 0 dropped, in x's type
    dispatch_float(x.dtype(), WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
      using T = decltype(tag);
      std::copy(keep.begin(), keep.end(), m.data_as<T>());
    });
  }
}
}  // namespace

KernelFactory identity_factory() {
  return [](const KernelInit&) {
    return make_function_kernel([](KernelContext& ctx) {
      // Identity-14/16 also passes sequences and optionals on (an undefined tensor slot holds one).
      if (ctx.has_input(0) && !ctx.input_tensor_defined(0)) return ctx.set_any_output(0, ctx.any_input(0));
      ctx.set_output(0, ctx.input(0));
    });
  };
}

KernelFactory dropout_factory(bool mask_is_bool, bool ratio_and_mode_are_inputs) {
  return [=](const KernelInit& init) {
    const bool has_seed = init.attrs().has("seed");
    const uint32_t seed = static_cast<uint32_t>(init.attrs().get_int("seed", 0));
    // Before opset 7, is_test = 0 (the default) means training: drop with the `ratio` attribute.
    const bool legacy_training = init.opset() < 7 && init.attrs().get_int("is_test", 0) == 0;
    const double legacy_ratio = init.attrs().get_float("ratio", 0.5f);
    if (legacy_training && (legacy_ratio < 0 || legacy_ratio >= 1))
      fail(init.where(), ": attribute 'ratio' must be in [0, 1), got ", legacy_ratio);
    return make_function_kernel([=](KernelContext& ctx) {
      const Tensor& x = ctx.input(0);
      if (legacy_training && legacy_ratio != 0) {
        training_dropout(ctx, x, legacy_ratio, std::random_device{}(), mask_is_bool);
        return;
      }
      if (ratio_and_mode_are_inputs && ctx.has_input(2)) {
        const Tensor& mode = ctx.input(2);
        if (mode.dtype() != DType::kBool || mode.numel() != 1)
          fail(ctx.where(), ": input 2 (training_mode) must be a bool scalar, got ", dtype_name(mode.dtype()), " ",
               shape_to_string(mode.shape()));
        if (mode.data_as<uint8_t>()[0]) {
          double ratio = 0.5;
          if (ctx.has_input(1)) {
            const Tensor& r = ctx.input(1);
            if (r.numel() != 1)
              fail(ctx.where(), ": input 1 (ratio) must be a scalar, got shape ", shape_to_string(r.shape()));
            const Tensor rf = to_float32(r);
            dispatch_float(rf.dtype(), WhereAnd{ctx.where(), " input 1 (ratio)"},
                           [&](auto tag) { ratio = static_cast<double>(rf.data_as<decltype(tag)>()[0]); });
          }
          if (ratio < 0 || ratio >= 1) fail(ctx.where(), ": ratio must be in [0, 1), got ", ratio);
          if (ratio != 0) {
            training_dropout(ctx, x, ratio, has_seed ? seed : std::random_device{}(), mask_is_bool);
            return;
          }
        }
      }
      ctx.set_output(0, x);
      if (ctx.num_outputs() > 1) {
        if (mask_is_bool) {
          Tensor& m = ctx.output(1, DType::kBool, x.shape());
          std::memset(m.data(), 1, m.nbytes());
        } else {
          Tensor& m = ctx.output(1, x.dtype(), x.shape());
          if (x.dtype() == DType::kFloat16) {
            bcast::unary(m.data_as<uint16_t>(), m.data_as<uint16_t>(), m.numel(),
                         [](uint16_t) { return uint16_t(0x3c00); });
          } else {
            dispatch_all(x.dtype(), WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
              using T = decltype(tag);
              std::fill(m.data_as<T>(), m.data_as<T>() + m.numel(), T(1));
            });
          }
        }
      }
    });
  };
}

}  // namespace pointrt::elementwise
