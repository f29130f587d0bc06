// The fold-if pass: an If whose condition is a constant in prepare is replaced by the nodes of the
// branch it chooses (its values keep their names; each branch output becomes the If's output, by
// renaming the branch node that produces it or, for an output the branch passes through, by an
// Identity). An If whose chosen branch defines a name the enclosing graph already has stays an If;
// its kernel then builds only the chosen branch (if.cc).
#include <algorithm>

#include "ops/onnx/control/fold_if.h"

namespace pointrt::control {

namespace {

bool is_outer(const Graph& b, int id) {
  const Value& v = b.values[id];
  return v.producer < 0 && !v.constant && std::find(b.inputs.begin(), b.inputs.end(), id) == b.inputs.end();
}

// The branch an If with a constant condition takes, or null.
const Graph* chosen_branch(const Graph& g, const Node& n) {
  if (n.op_type != "If" || !n.domain.empty() || n.inputs.empty() || n.inputs[0] < 0) return nullptr;
  const auto& cond = g.values[n.inputs[0]].constant;
  if (!cond || cond->numel() != 1 || cond->dtype() != DType::kBool || !cond->data()) return nullptr;
  auto it = n.attrs.items.find(*cond->data_as<uint8_t>() != 0 ? "then_branch" : "else_branch");
  if (it == n.attrs.items.end() || !it->second.g) return nullptr;
  const Graph& b = *it->second.g;
  if (!b.inputs.empty() || b.outputs.size() != n.outputs.size()) return nullptr;  // the kernel reports it
  return &b;
}

// Branch outputs that a branch node produces, named once among the outputs: they become the If's outputs.
std::vector<bool> renamable_outputs(const Graph& b) {
  std::vector<bool> r(b.outputs.size());
  for (size_t i = 0; i < b.outputs.size(); ++i)
    r[i] = b.values[b.outputs[i]].producer >= 0 && std::count(b.outputs.begin(), b.outputs.end(), b.outputs[i]) == 1;
  return r;
}

// The nodes replacing `n` (none when a name would clash: then `g` is unchanged); adds the branch's values to `g`.
std::vector<Node> inline_branch(Graph& g, const Node& n, const Graph& b) {
  const std::vector<bool> renamed = renamable_outputs(b);
  std::vector<int> map(b.values.size(), -1);
  for (size_t i = 0; i < b.outputs.size(); ++i)
    if (renamed[i]) map[b.outputs[i]] = n.outputs[i];
  for (size_t v = 0; v < b.values.size(); ++v)
    if (map[v] < 0 && !is_outer(b, static_cast<int>(v)) && g.find_value(b.values[v].name) >= 0) return {};
  for (size_t v = 0; v < b.values.size(); ++v) {
    if (map[v] >= 0) continue;
    const std::string& name = b.values[v].name;
    if (is_outer(b, static_cast<int>(v))) {
      map[v] = g.find_value(name);
      if (map[v] >= 0) continue;  // else a name of a graph enclosing g: an outer reference of g now
    }
    map[v] = g.add_value(name);
    Value& copy = g.values[map[v]];
    copy = b.values[v];
    copy.producer = -1;
  }
  std::vector<Node> nodes;
  for (const Node& bn : b.nodes) {
    Node copy = bn;
    for (int& v : copy.inputs) v = v >= 0 ? map[v] : -1;
    for (int& v : copy.outputs) v = v >= 0 ? map[v] : -1;
    nodes.push_back(std::move(copy));
  }
  for (size_t i = 0; i < b.outputs.size(); ++i) {
    if (renamed[i] || n.outputs[i] < 0) continue;
    Node id;
    id.name = str_cat(n.name, "/output_", i);
    id.op_type = "Identity";
    id.opset = g.opsets.count("") ? g.opsets.at("") : n.opset;
    id.inputs = {map[b.outputs[i]]};
    id.outputs = {n.outputs[i]};
    id.attrs.owner = id.describe();
    nodes.push_back(std::move(id));
  }
  return nodes;
}

}  // namespace

bool fold_constant_ifs(Graph& g) {
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size();) {
    const Graph* branch = chosen_branch(g, g.nodes[i]);
    std::vector<Node> nodes = branch ? inline_branch(g, g.nodes[i], *branch) : std::vector<Node>{};
    if (nodes.empty()) {
      ++i;
      continue;
    }
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));  // `branch` dies with it: copied above
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(i), nodes.begin(), nodes.end());
    g.compact();
    changed = true;  // i stays: the inlined nodes may hold constant Ifs of their own
  }
  return changed;
}

}  // namespace pointrt::control
