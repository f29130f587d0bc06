// Gather, GatherElements, GatherND. Indices are int32 or int64; a negative index i means
// i + n (n = size of the indexed dim); anything outside [-n, n-1] is an Error naming the node,
// the indices input, the value, its position and the valid range.
//   Gather:         y[p, q, s] = x[p, idx[q], s]  (p over dims before axis, s after)
//   GatherElements: y[i] = x[i with i[axis] replaced by idx[i]]; idx has x's rank, and on
//                   every other dim idx's size must not exceed x's.
//   GatherElementsExpanded (internal, made by the tensor pass from GatherElements(data,
//                   Expand(i, shape)) when nothing else reads the Expand): the same result, with
//                   the indices broadcast from i on the fly.
//   GatherND:       the first batch_dims dims of x and idx agree; idx[..., 0:k] indexes x's next
//                   k dims; y = idx.shape[:-1] + x.shape[batch_dims + k:].
#pragma once
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt::tensor {

Shape gather_shape(const Shape& data, const Shape& indices, int64_t axis);
void gather_cpu(const Tensor& data, const Tensor& indices, int64_t axis, Tensor& y, const std::string& where,
                const std::string& label);
void gather_ref(const Tensor& data, const Tensor& indices, int64_t axis, Tensor& y);

/// Checks an indices shape against data (rank, and no dim larger than data's off the axis).
void check_gather_elements(const Tensor& data, const Shape& index_shape, int64_t axis, const std::string& where);
/// GatherElements with indices of shape `index_shape` (y's shape): `indices` itself, or a
/// tensor that broadcasts to it (numpy rules), read in place with stride 0 on the broadcast dims
/// (GatherElementsExpanded: an Expand folded into the node, never materialised).
void gather_elements_cpu(const Tensor& data, const Tensor& indices, const Shape& index_shape, int64_t axis, Tensor& y,
                         const std::string& where, const std::string& label);
void gather_elements_ref(const Tensor& data, const Tensor& indices, int64_t axis, Tensor& y);

Shape gather_nd_shape(const Shape& data, const Shape& indices, int64_t batch_dims, const std::string& where);
void gather_nd_cpu(const Tensor& data, const Tensor& indices, int64_t batch_dims, Tensor& y, const std::string& where,
                   const std::string& label);
void gather_nd_ref(const Tensor& data, const Tensor& indices, int64_t batch_dims, Tensor& y);

/// Index element i of an int32/int64 tensor as int64.
inline int64_t index_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt64 ? t.data_as<int64_t>()[i] : static_cast<int64_t>(t.data_as<int32_t>()[i]);
}

}  // namespace pointrt::tensor
