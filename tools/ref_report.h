// `run --ref`: each output against a saved reference, reported with its errors.
#pragma once

#include <string>
#include <vector>

#include "io/tensor_compare.h"
#include "pointrt/pointrt.h"

namespace pointrt {

/// Compare outputs[i] (named names[i]) with the array of the same name in `ref_path` (.npz,
/// or Polygraphy's --save-outputs JSON); print one block per output and a verdict line.
/// Returns the number of outputs that differ or are missing from the reference.
int report_against_reference(const std::vector<std::string>& names, const std::vector<Tensor>& outputs,
                             const std::string& ref_path, const CompareOptions& options);

/// "elementwise" or "magnitude" (anything else: an Error naming the choices).
Tolerance parse_tolerance(const std::string& text);

}  // namespace pointrt
