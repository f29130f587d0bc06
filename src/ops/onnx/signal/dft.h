// DFT (ONNX 17, 20) and STFT (17).
//
// DFT: input [..., n, ..., 1 or 2] (last dim: real, or real and imaginary), transformed along
// `axis` (opset 17: attribute, default 1; opset 20: optional input 2, default -2), over
// dft_length points (optional input 1; the signal is cut or zero-padded to it). Forward:
// y[k] = sum_n x[n] e^{-2 pi i k n / N}; inverse = 1: y[n] = 1/N sum_k x[k] e^{+2 pi i k n / N}.
// onesided = 1 keeps bins 0 .. floor(N/2) of the axis. Output: complex, last dim 2.
// STFT: signal [batch, length, 1 or 2], frame_step, optional window [w] (default ones of
// frame_length), optional frame_length (default the window's length, else the signal's);
// frames = 1 + (length - w) / frame_step, frame f = signal[f * step, f * step + w) * window,
// transformed over frame_length points -> [batch, frames, bins, 2] (bins halved by onesided).
// Sums in double with exact twiddles (a direct DFT: O(N^2) per transform; not a hot path).
#pragma once

#include "ops/kernel.h"

namespace pointrt::signal {

/// x: complex signal as double [outer, n, inner] pairs (re, im); returns [outer, bins, inner] pairs.
std::vector<double> dft_ref(const std::vector<double>& x, int64_t outer, int64_t n, int64_t inner, int64_t length,
                            bool inverse, int64_t bins);

std::unique_ptr<OpKernel> make_dft_kernel(const KernelInit& init);
std::unique_ptr<OpKernel> make_stft_kernel(const KernelInit& init);

}  // namespace pointrt::signal
