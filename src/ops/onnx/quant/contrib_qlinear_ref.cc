// QLinearAdd, QLinearGlobalAveragePool, QGemm (com.microsoft): straightforward kernels (see the
// header for why they need no faster ones).
#include "ops/onnx/quant/contrib_qlinear.h"

#include "ops/onnx/elementwise/broadcast.h"
#include "ops/onnx/quant/dnnl_int8.h"
#include "ops/onnx/quant/qmatmul.h"
#include "ops/onnx/quant/quant_common.h"
#include "ops/onnx/quant/quantize.h"
#include "ops/onnx/reduce/matmul.h"

namespace pointrt::quant {

namespace {

const std::vector<DType> kInt8Types = {DType::kInt8, DType::kUInt8};

struct Named {
  std::string where;
  std::vector<std::string> names;
  explicit Named(const KernelInit& init, size_t n) : where(init.where()), names(input_names(init)) { names.resize(n); }
  float scale(KernelContext& ctx, int i) const { return scalar_float(ctx.input(i), where, "scale", names[i]); }
  int32_t zero_point(KernelContext& ctx, int i) const {
    return ctx.has_input(i) ? scalar_int(ctx.input(i), where, "zero point", names[i]) : 0;
  }
  void check_zero_point(KernelContext& ctx, int zp, int x) const {
    check_input_type(where, "input", names[x], ctx.input(x).dtype(), kInt8Types, "int8 or uint8");
    if (ctx.has_input(zp))
      check_zero_point_type(where, names[zp], ctx.input(zp).dtype(), names[x], ctx.input(x).dtype());
  }
};

template <typename T>
void qlinear_add(const Tensor& a, const Tensor& b, float ra, float rb, int32_t za, int32_t zb, int32_t zc, Tensor& c) {
  int64_t lo, hi;
  quantized_range(DTypeOf<T>::value, lo, hi);
  elementwise::bcast::binary(a.data_as<T>(), a.shape(), b.data_as<T>(), b.shape(), c.data_as<T>(), c.shape(),
                             [=](T x, T y) {
                               const float v = static_cast<float>(static_cast<int32_t>(x) - za) * ra +
                                               static_cast<float>(static_cast<int32_t>(y) - zb) * rb;
                               return static_cast<T>(saturate_round(v, zc, lo, hi));
                             });
}

}  // namespace

std::unique_ptr<OpKernel> make_qlinear_add_kernel(const KernelInit& init) {
  Named n(init, 8);
  return make_function_kernel([n](KernelContext& ctx) {
    n.check_zero_point(ctx, 2, 0);
    n.check_zero_point(ctx, 5, 3);
    const Tensor &a = ctx.input(0), &b = ctx.input(3);
    if (a.dtype() != b.dtype())
      fail(n.where, ": '", n.names[0], "' is ", dtype_name(a.dtype()), " but '", n.names[3], "' is ",
           dtype_name(b.dtype()));
    if (ctx.has_input(7)) check_zero_point_type(n.where, n.names[7], ctx.input(7).dtype(), n.names[0], a.dtype());
    const float cs = n.scale(ctx, 6), ra = n.scale(ctx, 1) / cs, rb = n.scale(ctx, 4) / cs;
    const int32_t za = n.zero_point(ctx, 2), zb = n.zero_point(ctx, 5), zc = n.zero_point(ctx, 7);
    Tensor& c = ctx.output(0, a.dtype(), elementwise::bcast::broadcast_shape(a.shape(), b.shape(), n.where));
    if (a.dtype() == DType::kUInt8)
      qlinear_add<uint8_t>(a, b, ra, rb, za, zb, zc, c);
    else
      qlinear_add<int8_t>(a, b, ra, rb, za, zb, zc, c);
  });
}

std::unique_ptr<OpKernel> make_qlinear_global_average_pool_kernel(const KernelInit& init) {
  Named n(init, 5);
  const bool channels_last = init.attrs().get_int("channels_last", 0) != 0;
  return make_function_kernel([n, channels_last](KernelContext& ctx) {
    n.check_zero_point(ctx, 2, 0);
    const Tensor& x = ctx.input(0);
    if (x.rank() < 3) fail(n.where, ": '", n.names[0], "' must have rank >= 3, got ", shape_to_string(x.shape()));
    if (ctx.has_input(4)) check_zero_point_type(n.where, n.names[4], ctx.input(4).dtype(), n.names[0], x.dtype());
    const int64_t batch = x.dim(0), channels = channels_last ? x.dim(x.rank() - 1) : x.dim(1);
    const int64_t count = channels == 0 || batch == 0 ? 0 : x.numel() / (batch * channels);
    Shape ys(x.rank(), 1);
    ys[0] = batch;
    ys[channels_last ? x.rank() - 1 : 1] = channels;
    Tensor& y = ctx.output(0, x.dtype(), ys);
    if (count == 0 && y.numel() > 0)
      fail(n.where, ": average over an empty spatial extent (", shape_to_string(x.shape()), ")");
    const int32_t xz = n.zero_point(ctx, 2), yz = n.zero_point(ctx, 4);
    const float mult = n.scale(ctx, 1) / (n.scale(ctx, 3) * static_cast<float>(count));
    int64_t lo, hi;
    quantized_range(x.dtype(), lo, hi);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t c = 0; c < channels; ++c) {
        int64_t sum = 0;
        for (int64_t i = 0; i < count; ++i)
          sum += load_as_int(x, channels_last ? (b * count + i) * channels + c : (b * channels + c) * count + i);
        const int64_t v = saturate_round(static_cast<float>(sum - xz * count) * mult, yz, lo, hi);
        if (x.dtype() == DType::kUInt8)
          y.data_as<uint8_t>()[b * channels + c] = static_cast<uint8_t>(v);
        else
          y.data_as<int8_t>()[b * channels + c] = static_cast<int8_t>(v);
      }
  });
}

namespace {
Tensor transposed(const Tensor& t) {
  Tensor r = Tensor::allocate(t.dtype(), {t.dim(1), t.dim(0)});
  const size_t es = dtype_size(t.dtype());
  for (int64_t i = 0; i < t.dim(0); ++i)
    for (int64_t j = 0; j < t.dim(1); ++j)
      std::memcpy(static_cast<char*>(r.data()) + (j * t.dim(0) + i) * es,
                  static_cast<const char*>(t.data()) + (i * t.dim(1) + j) * es, es);
  return r;
}
}  // namespace

std::unique_ptr<OpKernel> make_qgemm_kernel(const KernelInit& init) {
  Named n(init, 9);
  const bool ta = init.attrs().get_int("transA", 0) != 0, tb = init.attrs().get_int("transB", 0) != 0;
  const float alpha = init.attrs().get_float("alpha", 1.f);
  return make_function_kernel([n, ta, tb, alpha](KernelContext& ctx) {
    n.check_zero_point(ctx, 2, 0);
    n.check_zero_point(ctx, 5, 3);
    const Tensor &a0 = ctx.input(0), &b0 = ctx.input(3);
    if (a0.rank() != 2 || b0.rank() != 2)
      fail(n.where, ": A and B must be 2-D, got ", shape_to_string(a0.shape()), " and ", shape_to_string(b0.shape()));
    const Tensor a = ta ? transposed(a0) : a0, b = tb ? transposed(b0) : b0;
    const Shape ys = reduce::matmul_output_shape(a.shape(), b.shape(), n.where);
    const bool quantized = ctx.has_input(7);
    if (quantized && ctx.has_input(8))
      check_input_type(n.where, "zero point", n.names[8], ctx.input(8).dtype(), kInt8Types, "int8 or uint8");
    Tensor& y =
        ctx.output(0, quantized ? (ctx.has_input(8) ? ctx.input(8).dtype() : DType::kUInt8) : DType::kFloat32, ys);
    Tensor acc = Tensor::allocate(DType::kInt32, ys);
    auto param = [&](int i, const Tensor& op, bool rows) {
      return ctx.has_input(i)
                 ? operand_param(ctx.input(i), op.shape(), rows, n.where, n.names[i], n.names[rows ? 0 : 3])
                 : OperandParam{{0.0}, 1};
    };
    matmul_integer_ref(a, param(2, a, true), b, param(5, b, false), acc);
    const Tensor* c = ctx.has_input(6) ? &ctx.input(6) : nullptr;
    const int64_t cols = ys[1];
    const bool c_fits = c && (c->numel() == 1 || (c->rank() <= 2 && c->numel() == cols && c->shape().back() == cols) ||
                              c->shape() == ys);
    if (c && (c->dtype() != DType::kInt32 || !c_fits))
      fail(n.where, ": C '", n.names[6], "' must be int32 and broadcast to ", shape_to_string(ys), ", got ",
           dtype_name(c->dtype()), " ", shape_to_string(c->shape()));
    const float as = n.scale(ctx, 1);
    const OperandParam bs = param(4, b, false);
    const float ysc = quantized ? n.scale(ctx, 7) : 1.f;
    const int32_t yz = quantized ? n.zero_point(ctx, 8) : 0;
    int64_t lo = 0, hi = 0;
    if (quantized) quantized_range(y.dtype(), lo, hi);
    for (int64_t e = 0; e < acc.numel(); ++e) {
      const int64_t col = e % cols;
      int64_t v = acc.data_as<int32_t>()[e];
      if (c) v += c->data_as<int32_t>()[c->numel() == cols ? col : (c->numel() == 1 ? 0 : e)];
      const float f = static_cast<float>(v) * (alpha * as * static_cast<float>(bs.entry(col)));
      if (!quantized)
        y.data_as<float>()[e] = f;
      else if (y.dtype() == DType::kUInt8)
        y.data_as<uint8_t>()[e] = static_cast<uint8_t>(saturate_round(f / ysc, yz, lo, hi));
      else
        y.data_as<int8_t>()[e] = static_cast<int8_t>(saturate_round(f / ysc, yz, lo, hi));
    }
  });
}

}  // namespace pointrt::quant
