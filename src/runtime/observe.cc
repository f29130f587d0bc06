#include "runtime/observe.h"

#include <algorithm>

namespace pointrt {

std::vector<int> add_observed_outputs(Graph& g, const std::vector<std::string>& observe, const std::string& file) {
  std::vector<char> is_output(g.values.size(), 0), seen(g.values.size(), 0);
  for (int o : g.outputs) is_output[o] = 1;
  std::vector<int> ids;
  auto add = [&](int id) {
    if (seen[id] || g.values[id].constant || g.values[id].producer < 0) return;
    seen[id] = 1;
    ids.push_back(id);
    if (!is_output[id]) g.outputs.push_back(id);
  };
  for (const std::string& name : observe) {
    if (name == "*") {
      for (const Node& n : g.nodes)
        for (int o : n.outputs)
          if (o >= 0) add(o);
      continue;
    }
    int id = g.find_value(name);
    if (id < 0) fail(file, ": SessionOptions::observe names '", name, "', which is no value of the graph");
    add(id);
  }
  return ids;
}

std::vector<char> take_observed_outputs(Graph& g, const std::vector<int>& observed_ids, size_t model_outputs) {
  std::vector<char> observed(g.values.size(), 0);
  for (int id : observed_ids)
    if (g.values[id].producer >= 0 && !g.values[id].constant) observed[id] = 1;
  g.outputs.resize(std::min(model_outputs, g.outputs.size()));
  return observed;
}

void check_replacement(const std::string& file, const Value& value, const Tensor& produced, const Tensor& replacement) {
  if (replacement.dtype() != produced.dtype() || replacement.shape() != produced.shape())
    fail(file, ": RunHooks::on_value replaced '", value.name, "' (", dtype_name(produced.dtype()), " ",
         shape_to_string(produced.shape()), ") by a ", dtype_name(replacement.dtype()), " ",
         shape_to_string(replacement.shape()), " tensor; a replacement must have the same element type and shape");
}

}  // namespace pointrt
