#include "graph/ir.h"

#include <algorithm>
#include <set>

namespace pointrt {

const Attribute& Attributes::require(const std::string& name, Attribute::Kind kind, const char* kind_name) const {
  auto it = items.find(name);
  if (it == items.end()) fail(owner, ": required attribute '", name, "' is missing");
  if (it->second.kind != kind) fail(owner, ": attribute '", name, "' must be ", kind_name);
  return it->second;
}

int64_t Attributes::get_int(const std::string& name, int64_t dflt) const { return has(name) ? get_int(name) : dflt; }
int64_t Attributes::get_int(const std::string& name) const { return require(name, Attribute::Kind::kInt, "an int").i; }
float Attributes::get_float(const std::string& name, float dflt) const { return has(name) ? get_float(name) : dflt; }
float Attributes::get_float(const std::string& name) const {
  auto it = items.find(name);
  // Exporters sometimes write an int where a float is meant (e.g. alpha=1).
  if (it != items.end() && it->second.kind == Attribute::Kind::kInt) return static_cast<float>(it->second.i);
  return require(name, Attribute::Kind::kFloat, "a float").f;
}
std::string Attributes::get_string(const std::string& name, const std::string& dflt) const {
  return has(name) ? require(name, Attribute::Kind::kString, "a string").s : dflt;
}
std::vector<int64_t> Attributes::get_ints(const std::string& name, std::vector<int64_t> dflt) const {
  return has(name) ? get_ints(name) : dflt;
}
std::vector<int64_t> Attributes::get_ints(const std::string& name) const {
  auto it = items.find(name);
  if (it != items.end() && it->second.kind == Attribute::Kind::kInt) return {it->second.i};
  return require(name, Attribute::Kind::kInts, "a list of ints").ints;
}
std::vector<float> Attributes::get_floats(const std::string& name, std::vector<float> dflt) const {
  return has(name) ? get_floats(name) : dflt;
}
std::vector<float> Attributes::get_floats(const std::string& name) const {
  auto it = items.find(name);
  if (it != items.end() && it->second.kind == Attribute::Kind::kFloat) return {it->second.f};
  return require(name, Attribute::Kind::kFloats, "a list of floats").floats;
}
std::vector<std::string> Attributes::get_strings(const std::string& name) const {
  return require(name, Attribute::Kind::kStrings, "a list of strings").strings;
}
const Tensor* Attributes::get_tensor(const std::string& name) const {
  auto it = items.find(name);
  if (it == items.end()) return nullptr;
  if (it->second.kind != Attribute::Kind::kTensor) fail(owner, ": attribute '", name, "' must be a tensor");
  return &it->second.t;
}

int Graph::add_value(const std::string& name) {
  if (!name.empty() && value_ids.count(name)) fail("graph '", this->name, "': value '", name, "' is defined twice");
  int id = static_cast<int>(values.size());
  values.push_back(Value{});
  values.back().name = name;
  if (!name.empty()) value_ids[name] = id;
  return id;
}

void Graph::compact() {
  std::vector<Node> kept;
  kept.reserve(nodes.size());
  for (auto& n : nodes)
    if (!n.removed) kept.push_back(std::move(n));
  nodes = std::move(kept);
  for (auto& v : values) v.producer = -1;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int o : nodes[i].outputs)
      if (o >= 0) values[o].producer = static_cast<int>(i);
}

namespace {

// A value that a graph reads but neither computes, holds nor takes as input.
bool is_outer_reference(const Graph& g, int id) {
  const Value& v = g.values[id];
  return v.producer < 0 && !v.constant && std::find(g.inputs.begin(), g.inputs.end(), id) == g.inputs.end();
}

template <typename Visit>
void for_each_subgraph_name(const Node& n, Visit visit) {
  for (const auto& [key, a] : n.attrs.items)
    if (a.kind == Attribute::Kind::kGraph && a.g)
      for (const std::string& name : outer_scope_names(*a.g)) visit(name);
}

}  // namespace

std::vector<int> values_read_by(const Graph& g, const Node& n) {
  std::vector<int> ids;
  for (int v : n.inputs)
    if (v >= 0) ids.push_back(v);
  for_each_subgraph_name(n, [&](const std::string& name) {
    int id = g.find_value(name);
    if (id >= 0) ids.push_back(id);
  });
  return ids;
}

std::vector<int> reader_counts(const Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (int o : g.outputs) ++uses[o];
  for (const Node& n : g.nodes)
    if (!n.removed)
      for (int v : values_read_by(g, n))
        if (v >= 0) ++uses[v];
  return uses;
}

ValueReaders value_readers(const Graph& g) {
  ValueReaders r;
  r.offsets.assign(g.values.size() + 1, 0);
  r.graph_output.assign(g.values.size(), false);
  for (const Node& n : g.nodes)
    if (!n.removed)
      for (int v : n.inputs)
        if (v >= 0) ++r.offsets[v + 1];
  for (size_t v = 0; v < g.values.size(); ++v) r.offsets[v + 1] += r.offsets[v];
  r.entries.resize(static_cast<size_t>(r.offsets.back()));
  std::vector<int> next(r.offsets.begin(), r.offsets.end() - 1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].removed) continue;
    for (size_t k = 0; k < g.nodes[i].inputs.size(); ++k)
      if (const int v = g.nodes[i].inputs[k]; v >= 0) r.entries[next[v]++] = {static_cast<int>(i), static_cast<int>(k)};
  }
  for (int o : g.outputs) r.graph_output[o] = true;
  return r;
}

std::vector<std::string> outer_scope_names(const Graph& g) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  auto add = [&](const std::string& name) {
    if (seen.insert(name).second) names.push_back(name);
  };
  auto visit = [&](int id) {
    if (id >= 0 && is_outer_reference(g, id)) add(g.values[id].name);
  };
  for (const Node& n : g.nodes) {
    for (int v : n.inputs) visit(v);
    for_each_subgraph_name(n, [&](const std::string& name) {
      int id = g.find_value(name);
      if (id < 0)
        add(name);
      else
        visit(id);
    });
  }
  for (int v : g.outputs) visit(v);
  return names;
}

}  // namespace pointrt

namespace pointrt {

ValueInfo value_info_of(const Value& v) {
  ValueInfo vi;
  vi.name = v.name;
  vi.dtype = v.dtype;
  vi.has_shape = v.has_shape;
  vi.shape = v.shape;
  vi.sequence = v.sequence;
  vi.optional = v.optional;
  return vi;
}

std::string value_type_string(const Value& v) { return value_info_of(v).type_string(); }

}  // namespace pointrt
