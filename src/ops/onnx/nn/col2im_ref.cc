#include "ops/onnx/nn/col2im.h"

#include "ops/onnx/nn/conv.h"
#include "ops/onnx/tensor/tensor_utils.h"
#include "ops/staging.h"

namespace pointrt::nn {

void col2im_ref(const Tensor& x, const Col2ImGeometry& g, int64_t N, int64_t C, Tensor& y) {
  const size_t nsp = g.image.size();
  const int64_t K = shape_numel(g.block), L = shape_numel(g.grid), img = shape_numel(g.image);
  dispatch_float(x.dtype(), "Col2Im", [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data_as<T>();
    std::fill(out, out + y.numel(), T(0));
    std::vector<int64_t> k(nsp, 0);
    for (int64_t ki = 0; ki < K; ++ki, tensor::next_index(k, g.block)) {
      std::vector<int64_t> l(nsp, 0);
      for (int64_t li = 0; li < L; ++li, tensor::next_index(l, g.grid)) {
        int64_t pos = 0;
        bool inside = true;
        for (size_t d = 0; d < nsp; ++d) {
          const int64_t p = l[d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
          inside = inside && p >= 0 && p < g.image[d];
          pos = pos * g.image[d] + p;
        }
        if (!inside) continue;
        for (int64_t n = 0; n < N; ++n)
          for (int64_t c = 0; c < C; ++c)
            out[(n * C + c) * img + pos] += x.data_as<T>()[((n * C + c) * K + ki) * L + li];
      }
    }
  });
}

std::unique_ptr<OpKernel> make_col2im_kernel(const KernelInit& init) {
  const auto strides_attr = init.attrs().get_ints("strides", {}), dil_attr = init.attrs().get_ints("dilations", {});
  const auto pads_attr = init.attrs().get_ints("pads", {});
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    Col2ImGeometry g;
    g.image = tensor::read_int_list(ctx.input(1), ctx.where(), "input 1 (image_shape)");
    g.block = tensor::read_int_list(ctx.input(2), ctx.where(), "input 2 (block_shape)");
    const size_t nsp = g.image.size();
    if (g.block.size() != nsp || nsp == 0)
      fail(ctx.where(), ": image_shape ", shape_to_string(g.image), " and block_shape ", shape_to_string(g.block),
           " must have the same, non-zero length");
    const std::string for_x = "image " + shape_to_string(g.image);
    g.strides = window_attr_values(strides_attr, "strides", 1, nsp, ctx.where(), for_x);
    g.dilations = window_attr_values(dil_attr, "dilations", 1, nsp, ctx.where(), for_x);
    const auto pads = window_attr_values(pads_attr, "pads", 0, 2 * nsp, ctx.where(), for_x);
    g.pad_begin.assign(pads.begin(), pads.begin() + nsp);
    for (size_t d = 0; d < nsp; ++d) {
      const int64_t span = g.image[d] + pads[d] + pads[d + nsp] - (g.block[d] - 1) * g.dilations[d] - 1;
      if (g.block[d] < 1 || span < 0)
        fail(ctx.where(), ": block ", shape_to_string(g.block), " does not fit image ", shape_to_string(g.image));
      g.grid.push_back(span / g.strides[d] + 1);
    }
    const int64_t K = shape_numel(g.block), L = shape_numel(g.grid);
    if (x.rank() != 3 || x.dim(1) % K != 0 || x.dim(2) != L)
      fail(ctx.where(), ": input 0 has shape ", shape_to_string(x.shape()), ", expected [N, C * ", K, ", ", L, "]");
    const int64_t N = x.dim(0), C = x.dim(1) / K;
    Shape out = {N, C};
    out.insert(out.end(), g.image.begin(), g.image.end());
    Tensor y = compute_tensor(ctx.input(0).dtype(), out);
    col2im_ref(x, g, N, C, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::nn
