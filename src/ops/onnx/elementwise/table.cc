// Operator table rows of the ONNX elementwise family.
#include "ops/families.h"

namespace pointrt {
void register_onnx_elementwise(OpTable& t) {
  t.add({"", "Relu", 6, 17, kFloatTypes, [](const KernelInit&) {
           return make_function_kernel([](KernelContext& ctx) {
             const Tensor& x = ctx.input(0);
             Tensor& y = ctx.output(0, x.dtype(), x.shape());
             dispatch_float(x.dtype(), "Relu", [&](auto tag) {
               using T = decltype(tag);
               const T* a = x.data_as<T>();
               T* b = y.data_as<T>();
               for (int64_t i = 0; i < x.numel(); ++i) b[i] = a[i] > T(0) ? a[i] : T(0);
             });
           });
         }});
}
}  // namespace pointrt
