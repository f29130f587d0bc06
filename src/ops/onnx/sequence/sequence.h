// ONNX sequence and optional operators. A sequence is an AnyValue holding a pointrt::Sequence (an
// immutable, shared list of tensors of one element type) in the executor's side table; an empty
// optional is AnyValue::none(); an optional holding a tensor is that tensor. Kernels read them with
// KernelContext::sequence_input / any_input and write them with set_any_output. These operators
// only move tensors (elements are shared, not copied, except where a new tensor is cut or joined),
// so each has one kernel, which is its own reference; the tests check it against the definition.
//
// Positions (SequenceAt, SequenceInsert, SequenceErase): a scalar int32/int64 tensor; negative
// counts from the back. SequenceAt and SequenceErase accept [-n, n-1], SequenceInsert [-n, n]
// (n = insert at the end). Outside: "a sequence position out of range".
//
// SequenceEmpty (11+): attribute dtype (default float32) -> an empty sequence of that type.
// SequenceConstruct (11+): N >= 1 tensors of one element type -> a sequence of them.
// SequenceInsert (11+): (sequence, tensor, position = n) -> a new sequence with the tensor at the
//   position; the tensor's element type must be the sequence's.
// SequenceErase (11+): (sequence, position = -1) -> a new sequence without that element.
// SequenceAt (11+): (sequence, position) -> the element (shared, not copied).
// SequenceLength (11+): sequence -> int64 scalar.
// SplitToSequence (11+): (input, split optional), attributes axis (0, negative from the back),
//   keepdims (1). No split: chunks of 1 along axis (that axis removed when keepdims = 0). A scalar
//   split: chunks of that size (> 0), the last one shorter when the length is not a multiple. A 1-D
//   split: the chunk lengths (>= 0), which must add up to the length; keepdims is then ignored.
// ConcatFromSequence (11+): attributes axis (required), new_axis (0). new_axis = 0: the elements
//   joined along axis (same rank, same dimensions elsewhere); 1: stacked along a new axis (axis in
//   [-r-1, r]; equal shapes). An empty sequence is an error (no shape to make).
// SequenceMap (17+): (input_sequence, additional inputs: sequences or tensors), attribute body
//   (a graph with one input per node input and one output per node output). Iteration i runs the
//   body on element i of every sequence input and on every tensor input as it is; output j is the
//   sequence of the body's output j. Every sequence input must have the input sequence's length.
//   The body runs through the executor like If/Loop bodies (src/ops/onnx/control).
// Optional (15+): input (optional tensor/sequence), attribute type -> an optional holding the
//   input, or an empty one (type then says what it would hold; required without an input).
// OptionalHasElement (15+; 18: the input may be a tensor or a sequence, or absent -> false).
// OptionalGetElement (15+; 18: a tensor or sequence input passes through): an empty optional is
//   an error naming the node and the input.
#pragma once

#include <memory>

#include "ops/kernel.h"

namespace pointrt::sequence {

/// Position input `i` resolved against a sequence of `n` elements: [-n, n-1], or [-n, n] when
/// `allow_end` (insertion). An Error naming the node and the input otherwise.
size_t sequence_position(const KernelContext& ctx, size_t i, size_t n, bool allow_end);

/// A tensor of the run for a sequence element (sizes checked like KernelContext::output).
Tensor new_element(const KernelContext& ctx, DType dtype, const Shape& shape);

/// The chunk lengths SplitToSequence cuts along an axis of `length` from its split input (null:
/// chunks of 1). An Error naming the node for a bad split.
std::vector<int64_t> split_lengths(const KernelContext& ctx, const Tensor* split, int64_t length);

/// `input` cut into consecutive chunks of `lengths` along `axis` (copies; strings element-wise).
std::vector<Tensor> split_along(const KernelContext& ctx, const Tensor& input, int axis,
                                const std::vector<int64_t>& lengths);

/// The elements joined along `axis` (`new_axis`: stacked along a new axis there).
Tensor concat_elements(KernelContext& ctx, const std::vector<Tensor>& items, int64_t axis, bool new_axis);

std::unique_ptr<OpKernel> make_sequence_empty(const KernelInit& init);
std::unique_ptr<OpKernel> make_sequence_construct(const KernelInit& init);
std::unique_ptr<OpKernel> make_sequence_insert(const KernelInit& init);
std::unique_ptr<OpKernel> make_sequence_erase(const KernelInit& init);
std::unique_ptr<OpKernel> make_sequence_at(const KernelInit& init);
std::unique_ptr<OpKernel> make_sequence_length(const KernelInit& init);
std::unique_ptr<OpKernel> make_split_to_sequence(const KernelInit& init);
std::unique_ptr<OpKernel> make_concat_from_sequence(const KernelInit& init);
std::unique_ptr<OpKernel> make_sequence_map(const KernelInit& init);
std::unique_ptr<OpKernel> make_optional(const KernelInit& init);
std::unique_ptr<OpKernel> make_optional_has_element(const KernelInit& init);
std::unique_ptr<OpKernel> make_optional_get_element(const KernelInit& init);

}  // namespace pointrt::sequence
