// AffineGrid (ONNX 20): theta [N, 2, 3] with size [N, C, H, W] -> grid [N, H, W, 2], or theta
// [N, 3, 4] with size [N, C, D, H, W] -> [N, D, H, W, 3]; grid = theta @ (x, y[, z], 1) over the
// base grid of normalised coordinates: align_corners = 1: -1 + 2 i / (n - 1) (0 for n = 1);
// align_corners = 0 (default): (2 i + 1) / n - 1. Components ordered (x, y[, z]) = (W, H[, D]).
#pragma once

#include "ops/kernel.h"

namespace pointrt::image {

/// theta float32/float64; `spatial` = (H, W) or (D, H, W); y [N, spatial..., rank].
void affine_grid_ref(const Tensor& theta, const Shape& spatial, bool align_corners, Tensor& y);
std::unique_ptr<OpKernel> make_affine_grid_kernel(const KernelInit& init);

}  // namespace pointrt::image
