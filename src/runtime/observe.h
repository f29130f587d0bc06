// SessionOptions::observe and RunHooks: values a tool sees (and may replace) during a run.
#pragma once

#include <string>
#include <vector>

#include "graph/ir.h"

namespace pointrt {

/// Append the observed values to g.outputs so that prepare's passes keep them as the file
/// defines them (the passes keep graph outputs); returns their value ids. Unknown names are an
/// Error naming the file.
std::vector<int> add_observed_outputs(Graph& g, const std::vector<std::string>& observe, const std::string& file);

/// After the passes: mark (per value id) the observed values still computed by a node, and
/// truncate g.outputs back to the model's `model_outputs` first entries.
std::vector<char> take_observed_outputs(Graph& g, const std::vector<int>& observed_ids, size_t model_outputs);

/// Check a RunHooks replacement for `value` against the tensor the node produced.
void check_replacement(const std::string& file, const Value& value, const Tensor& produced, const Tensor& replacement);

}  // namespace pointrt
