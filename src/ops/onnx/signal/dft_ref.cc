#include "ops/onnx/signal/dft.h"

#include <cmath>

#include "ops/onnx/tensor/tensor_utils.h"
#include "ops/staging.h"

namespace pointrt::signal {

std::vector<double> dft_ref(const std::vector<double>& x, int64_t outer, int64_t n, int64_t inner, int64_t length,
                            bool inverse, int64_t bins) {
  std::vector<double> cos_t(static_cast<size_t>(length)), sin_t(static_cast<size_t>(length));
  for (int64_t t = 0; t < length; ++t) {  // exact twiddles: the angle reduced modulo the length
    const double a = 2 * M_PI * static_cast<double>(t) / static_cast<double>(length);
    cos_t[t] = std::cos(a);
    sin_t[t] = (inverse ? 1 : -1) * std::sin(a);
  }
  std::vector<double> y(static_cast<size_t>(outer * bins * inner * 2), 0.0);
  const int64_t used = std::min(n, length);  // samples beyond the length are cut, missing ones are 0
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i)
      for (int64_t k = 0; k < bins; ++k) {
        double re = 0, im = 0;
        for (int64_t s = 0; s < used; ++s) {
          const int64_t t = (k * s) % length;
          const double xr = x[((o * n + s) * inner + i) * 2], xi = x[((o * n + s) * inner + i) * 2 + 1];
          re += xr * cos_t[t] - xi * sin_t[t];
          im += xr * sin_t[t] + xi * cos_t[t];
        }
        if (inverse) re /= length, im /= length;
        y[((o * bins + k) * inner + i) * 2] = re;
        y[((o * bins + k) * inner + i) * 2 + 1] = im;
      }
  return y;
}

namespace {

// The signal of x ([..., 1 or 2]) as complex double pairs.
std::vector<double> complex_values(const Tensor& x, const std::string& where) {
  const int64_t c = x.dim(x.rank() - 1);
  if (c != 1 && c != 2) fail(where, ": the last dimension of input 0 must be 1 (real) or 2 (complex), got ", c);
  std::vector<double> v(static_cast<size_t>(x.numel() / c * 2), 0.0);
  dispatch_float(x.dtype(), where.c_str(), [&](auto tag) {
    for (int64_t e = 0; e < x.numel() / c; ++e)
      for (int64_t part = 0; part < c; ++part) v[e * 2 + part] = x.data_as<decltype(tag)>()[e * c + part];
  });
  return v;
}

void store_complex(KernelContext& ctx, DType dtype, const Shape& shape, const std::vector<double>& v) {
  Tensor y = compute_tensor(dtype, shape);
  dispatch_float(y.dtype(), ctx.where().c_str(), [&](auto tag) {
    for (size_t i = 0; i < v.size(); ++i) y.data_as<decltype(tag)>()[i] = static_cast<decltype(tag)>(v[i]);
  });
  store_output(ctx, 0, dtype, y);
}

int64_t optional_scalar(KernelContext& ctx, size_t i, int64_t dflt, const char* what) {
  return ctx.has_input(i) && ctx.input(i).numel() > 0 ? tensor::read_int_scalar(ctx.input(i), ctx.where(), what) : dflt;
}

}  // namespace

std::unique_ptr<OpKernel> make_dft_kernel(const KernelInit& init) {
  const bool axis_is_input = init.opset() >= 20;
  const int64_t axis_attr = axis_is_input ? -2 : init.attrs().get_int("axis", 1);
  const bool inverse = init.attrs().get_int("inverse", 0) != 0, onesided = init.attrs().get_int("onesided", 0) != 0;
  return make_function_kernel([=](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    const int64_t r = static_cast<int64_t>(x.rank());
    const int64_t axis_value = axis_is_input ? optional_scalar(ctx, 2, axis_attr, "input 2 (axis)") : axis_attr;
    if (r < 2 || axis_value < -r || axis_value > r - 2 || axis_value == -1)
      fail(ctx.where(), ": axis ", axis_value, " is not a signal axis of input 0 of shape ",
           shape_to_string(x.shape()));
    const int64_t axis = axis_value < 0 ? axis_value + r : axis_value;
    const int64_t n = x.dim(axis), length = optional_scalar(ctx, 1, n, "input 1 (dft_length)");
    if (length < 1) fail(ctx.where(), ": dft_length must be >= 1, got ", length);
    const bool complex_input = x.dim(r - 1) == 2;
    if (onesided && complex_input && !inverse) fail(ctx.where(), ": onesided = 1 needs a real input");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < r - 1; ++d) inner *= x.dim(d);
    const int64_t bins = onesided ? length / 2 + 1 : length;
    Shape out = x.shape();
    out[axis] = bins;
    out[r - 1] = 2;
    store_complex(ctx, ctx.input(0).dtype(), out,
                  dft_ref(complex_values(x, ctx.where()), outer, n, inner, length, inverse, bins));
  });
}

std::unique_ptr<OpKernel> make_stft_kernel(const KernelInit& init) {
  const bool onesided = init.attrs().get_int("onesided", 1) != 0;
  return make_function_kernel([onesided](KernelContext& ctx) {
    const Tensor x = to_float32(ctx.input(0));
    if (x.rank() != 3) fail(ctx.where(), ": signal must be [batch, length, 1 or 2], got ", shape_to_string(x.shape()));
    const int64_t batch = x.dim(0), len = x.dim(1);
    const int64_t step = tensor::read_int_scalar(ctx.input(1), ctx.where(), "input 1 (frame_step)");
    const Tensor window = ctx.has_input(2) ? to_float32(ctx.input(2)) : Tensor();
    const int64_t frame_length =
        optional_scalar(ctx, 3, window.defined() ? window.numel() : len, "input 3 (frame_length)");
    const int64_t w = window.defined() ? window.numel() : frame_length;
    if (step < 1 || frame_length < 1 || w < 1 || w > len)
      fail(ctx.where(), ": frame_step ", step, ", frame_length ", frame_length, " and window length ", w,
           " do not fit a signal of length ", len);
    if (window.defined() && (window.rank() != 1 || window.dtype() != x.dtype()))
      fail(ctx.where(), ": window must be 1-D of the signal's type, got ", dtype_name(ctx.input(2).dtype()), " ",
           shape_to_string(window.shape()));
    if (onesided && x.dim(2) == 2) fail(ctx.where(), ": onesided = 1 needs a real signal");
    const int64_t frames = 1 + (len - w) / step, bins = onesided ? frame_length / 2 + 1 : frame_length;
    const std::vector<double> signal = complex_values(x, ctx.where());
    std::vector<double> framed(static_cast<size_t>(batch * frames * w * 2));
    dispatch_float(x.dtype(), ctx.where().c_str(), [&](auto tag) {
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t f = 0; f < frames; ++f)
          for (int64_t s = 0; s < w; ++s) {
            const double k = window.defined() ? static_cast<double>(window.data_as<decltype(tag)>()[s]) : 1.0;
            for (int part = 0; part < 2; ++part)
              framed[((b * frames + f) * w + s) * 2 + part] = signal[((b * len) + f * step + s) * 2 + part] * k;
          }
    });
    store_complex(ctx, ctx.input(0).dtype(), {batch, frames, bins, 2},
                  dft_ref(framed, batch * frames, w, 1, frame_length, false, bins));
  });
}

}  // namespace pointrt::signal
