// Dropout (inference) and Identity kernels.
#include "ops/onnx/elementwise/dropout.h"

namespace pointrt {
namespace ew {

KernelFactory identity_factory() {
  return [](const KernelInit&) {
    return make_function_kernel([](KernelContext& ctx) { ctx.set_output(0, ctx.input(0)); });
  };
}

KernelFactory dropout_factory(bool mask_is_bool, bool ratio_and_mode_are_inputs) {
  return [=](const KernelInit&) {
    return make_function_kernel([=](KernelContext& ctx) {
      const Tensor& x = ctx.input(0);
      if (ratio_and_mode_are_inputs && ctx.has_input(2)) {
        const Tensor& mode = ctx.input(2);
        if (mode.dtype() != DType::kBool || mode.numel() != 1)
          fail(ctx.where(), ": input 2 (training_mode) must be a bool scalar, got ", dtype_name(mode.dtype()), " ",
               shape_to_string(mode.shape()));
        if (mode.data_as<uint8_t>()[0]) {
          double ratio = 0.5;
          if (ctx.has_input(1)) {
            const Tensor& r = ctx.input(1);
            if (r.numel() != 1) fail(ctx.where(), ": input 1 (ratio) must be a scalar, got shape ", shape_to_string(r.shape()));
            const Tensor rf = to_float32(r);
            dispatch_float(rf.dtype(), (ctx.where() + " input 1 (ratio)").c_str(),
                           [&](auto tag) { ratio = static_cast<double>(rf.data_as<decltype(tag)>()[0]); });
          }
          if (ratio != 0)
            fail(ctx.where(), ": training_mode = true with ratio ", ratio,
                 " is not supported: pointrt runs Dropout for inference only (training_mode must be false or ratio 0)");
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
            bcast::unary(m.data_as<uint16_t>(), m.data_as<uint16_t>(), m.numel(), [](uint16_t) { return uint16_t(0x3c00); });
          } else {
            dispatch_all(x.dtype(), (ctx.where() + " input 0").c_str(), [&](auto tag) {
              using T = decltype(tag);
              std::fill(m.data_as<T>(), m.data_as<T>() + m.numel(), T(1));
            });
          }
        }
      }
    });
  };
}

}  // namespace ew
}  // namespace pointrt
