// Einsum (ONNX opsets 12..21), numpy.einsum semantics.
//
// Equation: comma-separated input terms, optional "->" and output term. A term is letters
// (a-z, A-Z) with at most one "..." standing for the leading/middle dimensions not named by
// letters; ellipsis dimensions of different inputs align at the right and broadcast (size 1
// against n). A letter repeated inside one term takes the diagonal. Letters absent from the
// output are summed. Implicit output (no "->"): the ellipsis dimensions, then the letters that
// occur exactly once over all inputs, in ASCII order (upper case before lower case).
// Errors: wrong number of terms, a letter whose sizes disagree, an output letter absent from
// the inputs or repeated, a term whose letter count does not fit its input's rank.
#pragma once

#include <string>
#include <vector>

#include "ops/kernel.h"

namespace pointrt::reduce {

/// Parsed equation: labels are ASCII codes, kEllipsis marks "..." (expanded per run).
struct EinsumTerms {
  static constexpr int kEllipsis = -1;
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  bool explicit_output = false;
};
EinsumTerms parse_einsum_equation(const std::string& equation, const std::string& where);

/// The equation resolved against input shapes: ellipsis dimensions get labels 128, 129, ...
/// (right-aligned); label_size[label] is each label's size (broadcast applied), -1 if unused.
struct EinsumPlan {
  std::vector<std::vector<int>> inputs;
  std::vector<int> output;
  std::vector<int64_t> label_size;
  Shape output_shape;
};
EinsumPlan resolve_einsum(const EinsumTerms& terms, const std::vector<Shape>& shapes, const std::string& where);

/// y allocated by the caller with plan.output_shape.
void einsum_optimized(const EinsumPlan& plan, const std::vector<const Tensor*>& inputs, Tensor& y);
void einsum_reference(const EinsumPlan& plan, const std::vector<const Tensor*>& inputs, Tensor& y);

std::unique_ptr<OpKernel> make_einsum_kernel(const KernelInit& init);

}  // namespace pointrt::reduce
