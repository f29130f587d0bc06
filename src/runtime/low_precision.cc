#include "runtime/low_precision.h"

#include <algorithm>
#include <map>

namespace pointrt {

namespace {

bool lists(const OpEntry& e, DType t) { return std::find(e.types.begin(), e.types.end(), t) != e.types.end(); }

// A node of `g` needs casts when its typed input is float16/bfloat16 and its row serves that
// type only through float32.
bool needs_casts(const Graph& g, const Node& n, const OpEntry* e) {
  if (!e || e->typed_input < 0) return false;  // (runs_via_float32 checks the types)
  const size_t ti = static_cast<size_t>(e->typed_input);
  if (ti >= n.inputs.size() || n.inputs[ti] < 0) return false;
  const Value& v = g.values[n.inputs[ti]];
  const DType t = v.dtype;
  return v.is_tensor() && runs_via_float32(*e, t);
}

// A value name not used in `g` yet: `base`, else base_1, base_2, ...
std::string fresh_name(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 1; g.find_value(name) >= 0; ++k) name = str_cat(base, "_", k);
  return name;
}

Node cast_node(const std::string& name, int from, int to, DType dtype) {
  Node c;
  c.name = name;
  c.op_type = "Cast";
  c.opset = 13;
  c.inputs = {from};
  c.outputs = {to};
  c.attrs.owner = c.describe();
  c.attrs.items["to"] = Attribute::make_int(static_cast<int64_t>(dtype));
  return c;
}

// A new value like `like` (its shape) but of element type `dtype`.
int add_like(Graph& g, int like, DType dtype, const std::string& suffix) {
  const int id = g.add_value(fresh_name(g, g.values[like].name + suffix));
  Value& v = g.values[id];
  v.dtype = dtype;
  v.has_shape = g.values[like].has_shape;
  v.shape = g.values[like].shape;
  return id;
}

class CastInserter {
 public:
  CastInserter(Graph& g, const OpTable& table) : g_(g), table_(table) {}

  bool run() {
    std::vector<Node> nodes = std::move(g_.nodes);
    g_.nodes.clear();
    for (Node& n : nodes) {
      if (n.removed || !needs_casts(g_, n, table_.find(n.domain, n.op_type, n.opset))) {
        g_.nodes.push_back(std::move(n));
        continue;
      }
      for (int& v : n.inputs)
        if (v >= 0 && g_.values[v].is_tensor() && is_half_type(g_.values[v].dtype)) v = widened(v);
      std::vector<Node> narrowing;
      for (int& o : n.outputs) {
        if (o < 0 || !g_.values[o].is_tensor() || !is_half_type(g_.values[o].dtype)) continue;
        const int f32 = add_like(g_, o, DType::kFloat32, "/float32");
        narrowing.push_back(cast_node(fresh_cast_name(n.name, g_.values[o].name), f32, o, g_.values[o].dtype));
        narrowed_[o] = f32;
        o = f32;
      }
      g_.nodes.push_back(std::move(n));
      for (Node& c : narrowing) g_.nodes.push_back(std::move(c));
      changed_ = true;
    }
    drop_unread_narrowing();
    return changed_;
  }

 private:
  // The float32 version of value v: the float32 result it was rounded from, else a new Cast.
  int widened(int v) {
    if (auto it = narrowed_.find(v); it != narrowed_.end()) return it->second;
    if (auto it = widened_.find(v); it != widened_.end()) return it->second;
    const int f32 = add_like(g_, v, DType::kFloat32, "/float32");
    g_.nodes.push_back(cast_node(fresh_cast_name(g_.values[v].name, "to_float32"), v, f32, DType::kFloat32));
    widened_[v] = f32;
    return f32;
  }

  std::string fresh_cast_name(const std::string& a, const std::string& b) {
    return str_cat(a, "/", b, "/cast", cast_count_++);
  }

  // A rounding Cast whose low-precision result nothing reads any more (every reader took the
  // float32 value) is removed.
  void drop_unread_narrowing() {
    std::vector<int> readers(g_.values.size(), 0);
    for (int o : g_.outputs) ++readers[o];
    for (const Node& n : g_.nodes)
      for (int v : values_read_by(g_, n)) ++readers[v];
    for (Node& n : g_.nodes)
      if (n.op_type == "Cast" && n.outputs.size() == 1 && narrowed_.count(n.outputs[0]) && readers[n.outputs[0]] == 0)
        n.removed = true;
    g_.compact();
  }

  Graph& g_;
  const OpTable& table_;
  std::map<int, int> narrowed_;  // low-precision value -> the float32 result it rounds
  std::map<int, int> widened_;   // low-precision value -> its float32 cast
  int cast_count_ = 0;
  bool changed_ = false;
};

}  // namespace

bool runs_via_float32(const OpEntry& e, DType t) {
  return is_half_type(t) && e.typed_input >= 0 && !lists(e, t) && lists(e, DType::kFloat32);
}

bool runs_element_type(const OpEntry& e, DType t) {
  return e.types.empty() || t == DType::kUndefined || lists(e, t) || runs_via_float32(e, t);
}

bool compute_low_precision_in_float32(Graph& g, const OpTable& table) { return CastInserter(g, table).run(); }

}  // namespace pointrt
