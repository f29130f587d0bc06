// Expand and Tile, both one strided copy with stride 0 on repeated dims:
//   Expand: y = x broadcast (numpy rules, both ways) against `shape`.
//   Tile:   x [d0..dn] seen as [1, d0, 1, d1, ...] broadcast to [r0, d0, r1, d1, ...], whose
//           row-major layout is exactly the tiled [r0*d0, r1*d1, ...].
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

Shape broadcast_shape(const Shape& a, const Shape& b, const std::string& where);
/// Strides, per dim of `out`, at which a contiguous tensor of shape `x` (which broadcasts to
/// `out`, aligned on the right) is read: 0 on the dims x repeats.
Strides broadcast_source_strides(const Shape& x, const Shape& out);
void expand_cpu(const Tensor& x, Tensor& y);
void expand_ref(const Tensor& x, Tensor& y);
Shape tile_shape(const Shape& in, const std::vector<int64_t>& repeats, const std::string& where);
void tile_cpu(const Tensor& x, const std::vector<int64_t>& repeats, Tensor& y);
void tile_ref(const Tensor& x, const std::vector<int64_t>& repeats, Tensor& y);

}  // namespace pointrt::tensor
