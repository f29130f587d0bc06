#include <cmath>

#include "ops/onnx/signal/dft.h"
#include "ops/onnx/signal/windows.h"
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::signal {

std::vector<double> window_ref(WindowKind kind, int64_t size, bool periodic) {
  const double N = static_cast<double>(periodic ? size : size - 1);
  std::vector<double> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    const double a = M_PI * static_cast<double>(n) / N;
    switch (kind) {
      case WindowKind::kHann: w[n] = std::sin(a) * std::sin(a); break;
      case WindowKind::kHamming: w[n] = 25.0 / 46.0 - (1 - 25.0 / 46.0) * std::cos(2 * a); break;
      case WindowKind::kBlackman: w[n] = 0.42 - 0.5 * std::cos(2 * a) + 0.08 * std::cos(4 * a); break;
    }
  }
  return w;
}

std::vector<double> mel_weight_matrix_ref(int64_t bins, int64_t dft_length, int64_t sample_rate, double lower_hz,
                                          double upper_hz) {
  const int64_t rows = dft_length / 2 + 1;
  const double lo = 2595 * std::log10(1 + lower_hz / 700), hi = 2595 * std::log10(1 + upper_hz / 700);
  const double step = (hi - lo) / static_cast<double>(bins + 2);
  std::vector<int64_t> edge(static_cast<size_t>(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (i * step + lo) / 2595) - 1);
    edge[i] = static_cast<int64_t>(std::floor((dft_length + 1) * hz / static_cast<double>(sample_rate)));
  }
  std::vector<double> m(static_cast<size_t>(rows * bins), 0.0);
  auto set = [&](int64_t r, int64_t c, double v) {
    if (r < 0 || r >= rows) fail("MelWeightMatrix: band edge ", r, " is outside the ", rows, " spectrogram bins");
    m[r * bins + c] = v;
  };
  for (int64_t i = 0; i < bins; ++i) {
    const int64_t l = edge[i], c = edge[i + 1], h = edge[i + 2];
    if (c == l)
      set(c, i, 1.0);
    else
      for (int64_t j = l; j <= c; ++j) set(j, i, static_cast<double>(j - l) / static_cast<double>(c - l));
    for (int64_t j = c; j < h; ++j) set(j, i, static_cast<double>(h - j) / static_cast<double>(h - c));
  }
  return m;
}

namespace {

DType output_type(const KernelInit& init) {
  const DType t = static_cast<DType>(init.attrs().get_int("output_datatype", 1));
  if (!is_float_type(t) && !is_int_type(t))
    fail(init.where(), ": attribute 'output_datatype' ", dtype_name(t), " is not a numeric type");
  return t;
}

void store_values(KernelContext& ctx, DType t, const Shape& shape, const std::vector<double>& v) {
  Tensor& y = ctx.output(0, t, shape);
  if (t == DType::kFloat16) {
    for (size_t i = 0; i < v.size(); ++i) y.data_as<uint16_t>()[i] = float_to_half(static_cast<float>(v[i]));
    return;
  }
  dispatch_numeric(t, ctx.where().c_str(), [&](auto tag) {
    for (size_t i = 0; i < v.size(); ++i) y.data_as<decltype(tag)>()[i] = static_cast<decltype(tag)>(v[i]);
  });
}

double read_number(KernelContext& ctx, size_t i, const char* what) {
  const Tensor x = to_float32(ctx.input(i));
  if (x.numel() != 1) fail(ctx.where(), ": ", what, " must be a scalar, got shape ", shape_to_string(x.shape()));
  double v = 0;
  dispatch_numeric(x.dtype(), ctx.where().c_str(),
                   [&](auto tag) { v = static_cast<double>(x.data_as<decltype(tag)>()[0]); });
  return v;
}

}  // namespace

std::unique_ptr<OpKernel> make_window_kernel(const KernelInit& init, WindowKind kind) {
  const DType t = output_type(init);
  const bool periodic = init.attrs().get_int("periodic", 1) != 0;
  return make_function_kernel([=](KernelContext& ctx) {
    const int64_t size = tensor::read_int_scalar(ctx.input(0), ctx.where(), "input 0 (size)");
    if (size < 0) fail(ctx.where(), ": input 0 (size) is negative: ", size);
    store_values(ctx, t, {size}, window_ref(kind, size, periodic));
  });
}

std::unique_ptr<OpKernel> make_mel_weight_matrix_kernel(const KernelInit& init) {
  const DType t = output_type(init);
  return make_function_kernel([t](KernelContext& ctx) {
    const std::string w = ctx.where();
    const int64_t bins = tensor::read_int_scalar(ctx.input(0), w, "input 0 (num_mel_bins)");
    const int64_t dft_length = tensor::read_int_scalar(ctx.input(1), w, "input 1 (dft_length)");
    const int64_t rate = tensor::read_int_scalar(ctx.input(2), w, "input 2 (sample_rate)");
    const double lo = read_number(ctx, 3, "input 3 (lower_edge_hertz)"),
                 hi = read_number(ctx, 4, "input 4 (upper_edge_hertz)");
    if (bins < 1 || dft_length < 1 || rate < 1 || !(lo >= 0 && hi > lo))
      fail(w, ": needs num_mel_bins, dft_length, sample_rate >= 1 and 0 <= lower_edge_hertz < upper_edge_hertz");
    std::vector<double> m;
    try {
      m = mel_weight_matrix_ref(bins, dft_length, rate, lo, hi);
    } catch (const Error& e) {
      fail(w, ": ", e.what());
    }
    store_values(ctx, t, {dft_length / 2 + 1, bins}, m);
  });
}

void add_signal_rows(OpTable& t) {
  const std::vector<DType> H = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  t.add({"", "DFT", 17, 19, H, make_dft_kernel, "axis attribute; real or complex; dft_length, inverse, onesided"});
  t.add({"", "DFT", 20, 21, H, make_dft_kernel, "axis input (default -2)"});
  t.add({"", "STFT", 17, 21, H, make_stft_kernel, "frame_step, window, frame_length, onesided"});
  const std::vector<DType> sizes = {DType::kInt32, DType::kInt64};
  t.add({"", "HannWindow", 17, 21, sizes, [](const KernelInit& i) { return make_window_kernel(i, WindowKind::kHann); },
         "periodic, output_datatype"});
  t.add({"", "HammingWindow", 17, 21, sizes,
         [](const KernelInit& i) { return make_window_kernel(i, WindowKind::kHamming); }, "periodic, output_datatype"});
  t.add({"", "BlackmanWindow", 17, 21, sizes,
         [](const KernelInit& i) { return make_window_kernel(i, WindowKind::kBlackman); },
         "periodic, output_datatype"});
  t.add({"", "MelWeightMatrix", 17, 21, sizes, make_mel_weight_matrix_kernel, "as ONNX's reference"});
}

}  // namespace pointrt::signal
