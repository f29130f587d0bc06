// Window generators (ONNX 17) of `size` points (input 0, integer scalar), with N = size
// (periodic = 1, the default) or size - 1 (periodic = 0), n = 0 .. size - 1:
//   HannWindow:     sin^2(pi n / N)
//   HammingWindow:  25/46 - 21/46 cos(2 pi n / N)
//   BlackmanWindow: 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// output_datatype (default float) is the output's type. MelWeightMatrix (17) builds
// [floor(dft_length / 2) + 1, num_mel_bins] triangular filters between lower_edge_hertz and
// upper_edge_hertz on the mel scale mel(f) = 2595 log10(1 + f / 700), exactly as ONNX's
// reference: num_mel_bins + 2 points spaced by (mel_hi - mel_lo) / (num_mel_bins + 2) from
// mel_lo, mapped to bins floor((dft_length + 1) * f / sample_rate), peaks of 1.
#pragma once

#include "ops/kernel.h"

namespace pointrt::signal {

enum class WindowKind { kHann, kHamming, kBlackman };

std::vector<double> window_ref(WindowKind kind, int64_t size, bool periodic);
/// Row-major [floor(dft_length / 2) + 1, num_mel_bins].
std::vector<double> mel_weight_matrix_ref(int64_t num_mel_bins, int64_t dft_length, int64_t sample_rate,
                                          double lower_hz, double upper_hz);

std::unique_ptr<OpKernel> make_window_kernel(const KernelInit& init, WindowKind kind);
std::unique_ptr<OpKernel> make_mel_weight_matrix_kernel(const KernelInit& init);

/// Table rows of the signal operators (DFT, STFT, windows, MelWeightMatrix).
void add_signal_rows(OpTable& t);

}  // namespace pointrt::signal
