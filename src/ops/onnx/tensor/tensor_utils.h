// Helpers shared by the ONNX tensor/shape family: integer-list inputs, index checks with
// messages that name the node and the input, and one strided-copy engine that Transpose,
// Slice, Expand and Tile are all expressed with (copy-type ops move bytes, so they dispatch
// by element size and serve every dtype, float16 included).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/kernel.h"

namespace pointrt::tensor {

using Strides = std::vector<int64_t>;

/// Every dtype a copy-type op serves: numeric, bool and float16.
extern const std::vector<DType> kCopyTypes;
/// kCopyTypes plus the 1-byte float8 and (unpacked, core/subbyte.h) int4/uint4 types: for the
/// zero-copy shape ops (Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size).
extern const std::vector<DType> kMoveTypes;
/// Index inputs: int32 and int64.
extern const std::vector<DType> kIndexTypes;

/// Row-major strides in elements.
Strides contiguous_strides(const Shape& s);

/// "input 1 ('indices')": the position and graph name of input i, for messages.
std::string input_label(const KernelInit& init, size_t i);

/// Values of an int32/int64 tensor of rank 0 or 1 (e.g. a shape, axes, pads input).
std::vector<int64_t> read_int_list(const Tensor& t, const std::string& where, const std::string& what);
/// A one-element int/float tensor as int64 (depth, a scalar shape bound).
int64_t read_int_scalar(const Tensor& t, const std::string& where, const std::string& what);

/// Throws the family's out-of-range error:
/// "<where>: <input> holds <value> at position <pos>, outside the valid range [-n, n-1] (<context>)".
[[noreturn]] void fail_index(const std::string& where, const std::string& input, int64_t value, int64_t position,
                             int64_t n, const std::string& context);

/// Indices (int32/int64, any shape) converted to int64 in [0, n), n = data_shape[axis], negatives
/// wrapped (+n); an index out of range fails with fail_index's message ("axis A of data [..]").
std::vector<int64_t> normalized_indices(const Tensor& indices, int64_t axis, const Shape& data_shape,
                                        const std::string& where, const std::string& input);

/// Fast copy: dst (contiguous, shape `out_shape`) element o = src[src_offset + sum_d o_d * src_strides[d]],
/// all in elements of `elem_size` bytes. Strides may be 0 (broadcast) or negative (reverse).
/// Dims are merged where the source is contiguous; the innermost run is a memcpy when its
/// stride is 1, a tiled 2D transpose when the next-outer dim has stride 1, else a typed loop.
void strided_copy(const void* src, int64_t src_offset, const Shape& out_shape, const Strides& src_strides, void* dst,
                  size_t elem_size);
/// Naive reference of strided_copy (one multi-index step per element).
void strided_copy_ref(const void* src, int64_t src_offset, const Shape& out_shape, const Strides& src_strides,
                      void* dst, size_t elem_size);

/// Whether a loop moving `bytes` is worth an OpenMP team.
inline bool worth_parallel(int64_t bytes) { return bytes >= (int64_t(1) << 16); }

/// Advance a row-major multi-index over `shape` by one; false after the last.
inline bool next_index(std::vector<int64_t>& idx, const Shape& shape) {
  for (size_t d = idx.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

/// Copy one element of `size` bytes.
inline void copy_elem(void* dst, const void* src, size_t size) { std::memcpy(dst, src, size); }

}  // namespace pointrt::tensor
