// Helpers shared by the quantization kernels: value names for messages and the type checks of
// zero points, made at prepare time (declared types) and again at run time (the tensors).
#pragma once

#include <string>
#include <vector>

#include "ops/kernel.h"

namespace pointrt::quant {

/// Names of a node's inputs in the graph ("" for an omitted optional input).
inline std::vector<std::string> input_names(const KernelInit& init) {
  std::vector<std::string> names;
  for (size_t i = 0; i < init.num_inputs(); ++i) names.push_back(init.has_input(i) ? init.input_value(i)->name : "");
  return names;
}

/// Declared element type of input i (kUndefined when absent or unknown).
inline DType declared_type(const KernelInit& init, size_t i) {
  const Value* v = init.input_value(i);
  return v ? v->dtype : DType::kUndefined;
}

/// A zero point must have the type of the tensor it belongs to.
inline void check_zero_point_type(const std::string& where, const std::string& zp_name, DType zp,
                                  const std::string& x_name, DType x) {
  if (zp == DType::kUndefined || x == DType::kUndefined || zp == x) return;
  fail(where, ": zero point '", zp_name, "' has element type ", dtype_name(zp), ", but '", x_name, "' is ",
       dtype_name(x), " (a zero point has the type of the tensor it belongs to)");
}

/// Element type check of a named input; `allowed` lists the types, `what` says them in words.
inline void check_input_type(const std::string& where, const char* role, const std::string& name, DType t,
                             const std::vector<DType>& allowed, const char* what) {
  if (t == DType::kUndefined) return;
  for (DType a : allowed)
    if (a == t) return;
  fail(where, ": ", role, " '", name, "' has element type ", dtype_name(t), ", expected ", what);
}

}  // namespace pointrt::quant
