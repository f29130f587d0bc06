// ReduceSum, ReduceSumSquare, ReduceMean, ReduceL1, ReduceL2, ReduceMax, ReduceMin, ReduceProd,
// ReduceLogSum, ReduceLogSumExp (ONNX opsets 1..21 as the table declares).
//
// Semantics (ONNX):
//  - axes: attribute before opset 18 (13 for ReduceSum), optional int64 input after. Negative
//    axes count from the back; a repeated or out-of-range axis is an error.
//  - No axes (absent or empty): reduce over every axis, unless noop_with_empty_axes = 1, in which
//    case nothing is reduced: every element is a set of one, so Sum/Mean/Max/Min/Prod return the
//    input, SumSquare x*x, L1 and L2 |x|, LogSum log(x) (what ONNX Runtime does; ONNX's Python
//    reference agrees for SumSquare but returns the input for L1/L2).
//  - keepdims = 1 keeps reduced axes as size 1.
//  - Reduction over an empty set (a reduced axis of size 0): Sum, SumSquare, L1, L2 give 0,
//    Prod gives 1, Max gives -inf (the lowest value for integers, false for bool), Min gives +inf
//    (the highest value, true), LogSum and LogSumExp give -inf, Mean gives 0 (undefined in the spec; 0 as
//    ONNX Runtime).
//  - Max/Min propagate NaN. Float sums accumulate in double (float32 over one group of adjacent
//    axes: a last axis in 16 double lanes per block of 1024 elements; a middle axis in float
//    within chunks of 64 rows, chunks in double). LogSumExp subtracts the maximum before exp
//    (the generic path keeps a running (max, sum of exp(x - max)) pair; float32 over one group
//    makes a max sweep, then sums exp(x - max)), so large inputs do not overflow.
#pragma once

#include <vector>

#include "ops/kernel.h"

namespace pointrt::reduce {

enum class ReduceKind { kSum, kSumSquare, kMean, kL1, kL2, kMax, kMin, kProd, kLogSum, kLogSumExp };

/// Which axes of a rank-`rank` tensor are reduced. `axes` empty = all axes. Errors (naming
/// `where`) on an out-of-range or repeated axis.
std::vector<bool> resolve_reduce_axes(const std::vector<int64_t>& axes, int64_t rank, const std::string& where);

/// The output shape: reduced axes become 1 (keepdims) or disappear.
Shape reduce_output_shape(const Shape& in, const std::vector<bool>& reduced, bool keepdims);

/// y (allocated by the caller with the output shape, same dtype as x) = reduction of x over the
/// axes flagged in `reduced`. Optimised: merges adjacent axes, contiguous fast paths, OpenMP.
void reduce_optimized(ReduceKind kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y);
/// The float32 fast paths of reduce_optimized (reduce_float.cc): Sum, Mean, SumSquare, L1, L2,
/// Max, Min and LogSumExp over one group of adjacent axes; false (y untouched) when they do not apply.
bool reduce_float32_fast(ReduceKind kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y);
/// Naive reference: one output element at a time, every reduced index enumerated.
void reduce_reference(ReduceKind kind, const Tensor& x, const std::vector<bool>& reduced, Tensor& y);

/// Element types each kind accepts (table rows and the reference use these).
bool reduce_kind_accepts(ReduceKind kind, DType t);

/// The kernel factory for a reduce node; `axes_from_input` selects the opset >= 18 (13 for
/// ReduceSum) form.
std::unique_ptr<OpKernel> make_reduce_kernel(const KernelInit& init, ReduceKind kind, bool axes_from_input);

}  // namespace pointrt::reduce
