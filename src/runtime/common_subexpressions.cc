#include "runtime/common_subexpressions.h"

#include <cstring>
#include <set>
#include <unordered_map>

namespace pointrt {

bool is_nondeterministic(const Node& n) {
  static const std::set<std::string> random = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                               "Multinomial",  "Bernoulli",     "Dropout"};
  return (n.domain.empty() || n.domain == "ai.onnx") && random.count(n.op_type) != 0;
}

namespace {

template <typename T>
void append_bytes(std::string& key, const T* p, size_t n) {
  key.append(reinterpret_cast<const char*>(p), n * sizeof(T));
}

// The attribute's kind and exact content (floats by their bits) appended to `key`; false for kinds
// not compared here (graphs, type protos), whose nodes are then never merged.
bool append_attribute(std::string& key, const Attribute& a) {
  const int64_t kind = static_cast<int64_t>(a.kind);
  append_bytes(key, &kind, 1);
  switch (a.kind) {
    case Attribute::Kind::kInt: append_bytes(key, &a.i, 1); return true;
    case Attribute::Kind::kFloat: append_bytes(key, &a.f, 1); return true;
    case Attribute::Kind::kString: key += a.s; break;
    case Attribute::Kind::kInts: append_bytes(key, a.ints.data(), a.ints.size()); break;
    case Attribute::Kind::kFloats: append_bytes(key, a.floats.data(), a.floats.size()); break;
    case Attribute::Kind::kStrings:
      for (const std::string& s : a.strings) {
        const int64_t len = static_cast<int64_t>(s.size());
        append_bytes(key, &len, 1);
        key += s;
      }
      break;
    case Attribute::Kind::kTensor: {
      const int64_t dtype = static_cast<int64_t>(a.t.dtype());
      append_bytes(key, &dtype, 1);
      append_bytes(key, a.t.shape().data(), a.t.shape().size());
      if (a.t.nbytes()) append_bytes(key, static_cast<const char*>(a.t.data()), a.t.nbytes());
      break;
    }
    default: return false;
  }
  const int64_t end = -1;  // variable-length content ends here
  append_bytes(key, &end, 1);
  return true;
}

// The node's identity as a string, or "" when it must not be merged.
std::string node_key(const Node& n) {
  if (!(n.domain.empty() || n.domain == "pointrt") || n.outputs.empty() || is_nondeterministic(n)) return "";
  std::string key = str_cat(n.domain, '\0', n.op_type, '\0', n.opset, '\0');
  append_bytes(key, n.inputs.data(), n.inputs.size());
  key += '\0';
  for (int o : n.outputs) key += o >= 0 ? '1' : '0';  // which optional outputs are present
  for (const auto& [name, a] : n.attrs.items) {
    key += name;
    key += '\0';
    if (!append_attribute(key, a)) return "";
  }
  return key;
}

}  // namespace

bool eliminate_common_subexpressions(Graph& g) {
  // Values that must keep their producer: graph outputs and whatever a subgraph reads by name.
  std::vector<char> pinned(g.values.size(), 0);
  for (int v : g.outputs) pinned[v] = 1;
  for (const Node& n : g.nodes) {
    bool has_subgraph = false;
    for (const auto& item : n.attrs.items) has_subgraph |= item.second.kind == Attribute::Kind::kGraph;
    if (!n.removed && has_subgraph)
      for (int v : values_read_by(g, n))
        if (v >= 0) pinned[v] = 1;
  }
  std::vector<int> replacement(g.values.size());
  for (size_t v = 0; v < replacement.size(); ++v) replacement[v] = static_cast<int>(v);
  std::unordered_map<std::string, size_t> first;  // node key -> index of the node that computes it
  bool changed = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (n.removed) continue;
    for (int& v : n.inputs)
      if (v >= 0) v = replacement[v];
    const std::string key = node_key(n);
    if (key.empty()) continue;
    auto [it, inserted] = first.emplace(key, i);
    if (inserted) continue;
    bool keep = false;
    for (int o : n.outputs) keep |= o >= 0 && pinned[o];
    if (keep) continue;
    const Node& kept = g.nodes[it->second];
    for (size_t k = 0; k < n.outputs.size(); ++k)
      if (n.outputs[k] >= 0) replacement[n.outputs[k]] = kept.outputs[k];
    n.removed = true;
    changed = true;
  }
  if (changed)  // readers placed before their producer's duplicate (not in topological order)
    for (Node& n : g.nodes)
      for (int& v : n.inputs)
        if (v >= 0) v = replacement[v];
  return changed;
}

}  // namespace pointrt
