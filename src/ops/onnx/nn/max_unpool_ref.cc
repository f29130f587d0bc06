#include "ops/onnx/nn/max_unpool.h"

#include "ops/onnx/nn/conv.h"
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::nn {

void max_unpool_ref(const Tensor& x, const std::vector<int64_t>& indices, Tensor& y) {
  const size_t es = dtype_size(x.dtype());
  std::memset(y.data(), 0, y.nbytes());
  for (size_t e = 0; e < indices.size(); ++e)
    std::memcpy(static_cast<char*>(y.data()) + indices[e] * es, static_cast<const char*>(x.data()) + e * es, es);
}

std::unique_ptr<OpKernel> make_max_unpool_kernel(const KernelInit& init) {
  const std::vector<int64_t> kernel = init.attrs().get_ints("kernel_shape");
  const std::vector<int64_t> strides_attr = init.attrs().get_ints("strides", {});
  const std::vector<int64_t> pads_attr = init.attrs().get_ints("pads", {});
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& ind = ctx.input(1);
    const size_t nsp = kernel.size();
    if (x.rank() != nsp + 2)
      fail(ctx.where(), ": input X ", shape_to_string(x.shape()), " must have rank ", nsp + 2, " for kernel_shape of ",
           nsp, " values");
    if (ind.shape() != x.shape())
      fail(ctx.where(), ": input I has shape ", shape_to_string(ind.shape()), ", X has ", shape_to_string(x.shape()));
    const std::string for_x = "X " + shape_to_string(x.shape());
    const auto strides = window_attr_values(strides_attr, "strides", 1, nsp, ctx.where(), for_x);
    const auto pads = window_attr_values(pads_attr, "pads", 0, 2 * nsp, ctx.where(), for_x);
    Shape out = {x.dim(0), x.dim(1)};  // the default output: what MaxPool's indices refer to
    for (size_t i = 0; i < nsp; ++i)
      out.push_back((x.dim(i + 2) - 1) * strides[i] + kernel[i] - pads[i] - pads[i + nsp]);
    Shape requested = out;
    if (ctx.has_input(2)) {
      requested = tensor::read_int_list(ctx.input(2), ctx.where(), "input 2 (output_shape)");
      if (requested.size() != x.rank() || requested[0] != x.dim(0) || requested[1] != x.dim(1))
        fail(ctx.where(), ": output_shape ", shape_to_string(requested), " must be [", x.dim(0), ", ", x.dim(1),
             ", ...]");
      for (size_t d = 2; d < out.size(); ++d)
        if (requested[d] < out[d])
          fail(ctx.where(), ": output_shape ", shape_to_string(requested), " is smaller than the unpooled shape ",
               shape_to_string(out));
    }
    for (int64_t d : out)
      if (d < 0) fail(ctx.where(), ": output shape ", shape_to_string(out), " has a negative dimension");
    if (ind.dtype() != DType::kInt64) fail(ctx.where(), ": input 1 (I) must be int64, got ", dtype_name(ind.dtype()));
    const int64_t total = shape_numel(out);
    std::vector<int64_t> idx(ind.data_as<int64_t>(), ind.data_as<int64_t>() + ind.numel());
    for (size_t e = 0; e < idx.size(); ++e)
      if (idx[e] < 0 || idx[e] >= total)
        fail(ctx.where(), ": input 1 (I) holds ", idx[e], " at position ", e, ", outside the output ",
             shape_to_string(out), " (", total, " elements)");
    if (requested == out) {
      max_unpool_ref(x, idx, ctx.output(0, x.dtype(), out));
      return;
    }
    // A larger output_shape pads the unpooled result at the end of each spatial dimension.
    Tensor unpooled = Tensor::allocate(x.dtype(), out);
    max_unpool_ref(x, idx, unpooled);
    Tensor& y = ctx.output(0, x.dtype(), requested);
    std::memset(y.data(), 0, y.nbytes());
    const tensor::Strides dst = tensor::contiguous_strides(requested);
    const size_t es = dtype_size(x.dtype());
    std::vector<int64_t> at(out.size(), 0);
    for (int64_t e = 0; e < unpooled.numel(); ++e, tensor::next_index(at, out)) {
      int64_t off = 0;
      for (size_t d = 0; d < at.size(); ++d) off += at[d] * dst[d];
      std::memcpy(static_cast<char*>(y.data()) + off * es, static_cast<const char*>(unpooled.data()) + e * es, es);
    }
  });
}

}  // namespace pointrt::nn
