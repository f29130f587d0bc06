// Concat and Split: both move contiguous runs of prod(shape[axis:]) elements per outer index.
// Concat: every input has the same rank (>= 1) and the same dims except on `axis`.
// Split: sizes come from 'split' (attribute before opset 13, input since), or are equal parts
// of the axis; since opset 18 'num_outputs' may leave a smaller last chunk (ceil(dim/n) each).
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

/// Output shape of Concat; `axis` already normalised.
Shape concat_shape(const std::vector<const Tensor*>& inputs, int64_t axis, const std::string& where);
void concat_cpu(const std::vector<const Tensor*>& inputs, int64_t axis, Tensor& y);
void concat_ref(const std::vector<const Tensor*>& inputs, int64_t axis, Tensor& y);

/// Chunk sizes for Split. `split` empty = equal parts into `num_parts`; `allow_uneven` (num_outputs
/// since 18) gives ceil-sized chunks with a smaller last one.
std::vector<int64_t> split_sizes(int64_t dim, const std::vector<int64_t>& split, int64_t num_parts, bool allow_uneven,
                                 const std::string& where);
void split_cpu(const Tensor& x, int64_t axis, const std::vector<Tensor*>& outputs);

}  // namespace pointrt::tensor
