#include <cmath>

#include "ops/onnx/nn/lp_pool.h"
#include "ops/onnx/tensor/tensor_utils.h"
#include "ops/staging.h"

namespace pointrt::nn {

void lp_pool_ref(const PoolGeometry& g, double p, const Tensor& x, Tensor& y) {
  const size_t nsp = g.in_spatial.size();
  const int64_t in_size = shape_numel(g.in_spatial), out_size = shape_numel(g.out_spatial);
  dispatch_float(x.dtype(), "LpPool", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t plane = 0; plane < g.batch * g.channels; ++plane) {
      std::vector<int64_t> o(nsp, 0);
      for (int64_t oi = 0; oi < out_size; ++oi, tensor::next_index(o, g.out_spatial)) {
        double sum = 0;
        std::vector<int64_t> k(nsp, 0);
        do {
          int64_t off = 0;
          bool inside = true;
          for (size_t i = 0; i < nsp; ++i) {
            const int64_t pos = o[i] * g.strides[i] - g.pad_begin[i] + k[i] * g.dilations[i];
            inside = inside && pos >= 0 && pos < g.in_spatial[i];
            off = off * g.in_spatial[i] + pos;
          }
          if (inside) sum += std::pow(std::fabs(static_cast<double>(x.data_as<T>()[plane * in_size + off])), p);
        } while (tensor::next_index(k, g.kernel));
        y.data_as<T>()[plane * out_size + oi] = static_cast<T>(std::pow(sum, 1.0 / p));
      }
    }
  });
}

std::unique_ptr<OpKernel> make_lp_pool_kernel(const KernelInit& init, bool global) {
  const PoolAttrs attrs = parse_pool_attrs(init.attrs(), PoolKind::kAverage, global, init.where());
  auto it = init.attrs().items.find("p");
  double p = 2;
  if (it != init.attrs().items.end())
    p = it->second.kind == Attribute::Kind::kFloat ? it->second.f : static_cast<double>(it->second.i);
  if (!(p > 0)) fail(init.where(), ": attribute 'p' must be positive, got ", p);
  return make_function_kernel([attrs, p](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    const PoolGeometry g = pool_geometry(attrs, x.shape(), ctx.where());
    Tensor y = compute_tensor(ctx.input(0).dtype(), g.output_shape());
    lp_pool_ref(g, p, x, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::nn
