#include "ops/onnx/nn/deform_conv.h"

#include <cmath>

#include "ops/onnx/nn/conv.h"
#include "ops/staging.h"

namespace pointrt::nn {
namespace {

// Bilinear value at (y, x) of an H x W plane; out-of-image corners count as 0.
template <typename T>
double sample_zero_padded(const T* plane, int64_t H, int64_t W, double y, double x) {
  const double fy = std::floor(y), fx = std::floor(x);
  const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const double ly = y - fy, lx = x - fx;
  double v = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t yy = y0 + dy, xx = x0 + dx;
      if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
      v += (dy ? ly : 1 - ly) * (dx ? lx : 1 - lx) * plane[yy * W + xx];
    }
  return v;
}

}  // namespace

void deform_conv_ref(const Tensor& x, const Tensor& w, const Tensor& offset, const Tensor& b, const Tensor& mask,
                     const DeformConvParams& p, Tensor& y) {
  const int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), OC = w.dim(0);
  const int64_t cpg = C / p.group, ocpg = OC / p.group, cpo = C / p.offset_group, taps = p.kh * p.kw;
  dispatch_float(x.dtype(), "DeformConv", [&](auto tag) {
    using T = decltype(tag);
    auto off = [&](int64_t n, int64_t g, int64_t t, int64_t k, int64_t i, int64_t j) {
      return static_cast<double>(
          offset.data_as<T>()[(((n * p.offset_group + g) * taps + t) * 2 + k) * p.oh * p.ow + i * p.ow + j]);
    };
    for (int64_t n = 0; n < N; ++n)
      for (int64_t oc = 0; oc < OC; ++oc)
        for (int64_t i = 0; i < p.oh; ++i)
          for (int64_t j = 0; j < p.ow; ++j) {
            double acc = b.defined() ? static_cast<double>(b.data_as<T>()[oc]) : 0.0;
            const int64_t grp = oc / ocpg;
            for (int64_t ci = 0; ci < cpg; ++ci) {
              const int64_t c = grp * cpg + ci, og = c / cpo;
              const T* plane = x.data_as<T>() + (n * C + c) * H * W;
              for (int64_t t = 0; t < taps; ++t) {
                const int64_t ki = t / p.kw, kj = t % p.kw;
                const double sy = i * p.sh - p.pad_top + ki * p.dh + off(n, og, t, 0, i, j);
                const double sx = j * p.sw - p.pad_left + kj * p.dw + off(n, og, t, 1, i, j);
                double v = sample_zero_padded(plane, H, W, sy, sx);
                if (mask.defined())
                  v *= mask.data_as<T>()[((n * p.offset_group + og) * taps + t) * p.oh * p.ow + i * p.ow + j];
                acc += v * w.data_as<T>()[((oc * cpg + ci) * p.kh + ki) * p.kw + kj];
              }
            }
            y.data_as<T>()[((n * OC + oc) * p.oh + i) * p.ow + j] = static_cast<T>(acc);
          }
  });
}

std::unique_ptr<OpKernel> make_deform_conv_kernel(const KernelInit& init) {
  const Attributes& a = init.attrs();
  const auto strides = a.get_ints("strides", {}), dil = a.get_ints("dilations", {}), pads = a.get_ints("pads", {});
  const int64_t group = a.get_int("group", 1), offset_group = a.get_int("offset_group", 1);
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0)), w = to_float32(ctx.input(1)), offset = to_float32(ctx.input(2));
    const Tensor b = ctx.has_input(3) ? to_float32(ctx.input(3)) : Tensor();
    const Tensor mask = ctx.has_input(4) ? to_float32(ctx.input(4)) : Tensor();
    if (x.rank() != 4 || w.rank() != 4)
      fail(ctx.where(), ": only 2-D DeformConv is supported: X ", shape_to_string(x.shape()), ", W ",
           shape_to_string(w.shape()));
    DeformConvParams p;
    p.group = group;
    p.offset_group = offset_group;
    p.kh = w.dim(2);
    p.kw = w.dim(3);
    const std::string for_x = "X " + shape_to_string(x.shape());
    const auto s = window_attr_values(strides, "strides", 1, 2, ctx.where(), for_x);
    const auto d = window_attr_values(dil, "dilations", 1, 2, ctx.where(), for_x);
    const auto pd = window_attr_values(pads, "pads", 0, 4, ctx.where(), for_x);
    p.sh = s[0], p.sw = s[1], p.dh = d[0], p.dw = d[1], p.pad_top = pd[0], p.pad_left = pd[1];
    p.oh = (x.dim(2) + pd[0] + pd[2] - (p.kh - 1) * p.dh - 1) / p.sh + 1;
    p.ow = (x.dim(3) + pd[1] + pd[3] - (p.kw - 1) * p.dw - 1) / p.sw + 1;
    if (group < 1 || offset_group < 1 || x.dim(1) % group || x.dim(1) % offset_group || w.dim(0) % group ||
        w.dim(1) * group != x.dim(1))
      fail(ctx.where(), ": group ", group, " / offset_group ", offset_group, " do not fit X ",
           shape_to_string(x.shape()), " and W ", shape_to_string(w.shape()));
    const Shape want_offset = {x.dim(0), offset_group * p.kh * p.kw * 2, p.oh, p.ow};
    if (offset.shape() != want_offset)
      fail(ctx.where(), ": input offset has shape ", shape_to_string(offset.shape()), ", expected ",
           shape_to_string(want_offset));
    const Shape want_mask = {x.dim(0), offset_group * p.kh * p.kw, p.oh, p.ow};
    if (mask.defined() && mask.shape() != want_mask)
      fail(ctx.where(), ": input mask has shape ", shape_to_string(mask.shape()), ", expected ",
           shape_to_string(want_mask));
    if (b.defined() && b.numel() != w.dim(0))
      fail(ctx.where(), ": input B has ", b.numel(), " values for ", w.dim(0), " output channels");
    Tensor y = compute_tensor(ctx.input(0).dtype(), {x.dim(0), w.dim(0), p.oh, p.ow});
    deform_conv_ref(x, w, offset, b, mask, p, y);
    store_output(ctx, 0, ctx.input(0).dtype(), y);
  });
}

}  // namespace pointrt::nn
