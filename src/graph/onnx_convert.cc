// ONNX GraphProto -> pointrt Graph (see onnx_convert.h).
#include "graph/onnx_convert.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <set>

#include "onnx/onnx_pb.h"

namespace pointrt {

namespace {

// Attribute names pointrt's graph passes add to nodes they rewrite (see src/ops/onnx/nn, quant).
constexpr const char* kInternalAttributePrefix = "__pointrt_";

// The tensor type under sequence/optional wrappers, marking the wrappers on `info`; null when the
// type is none of these (a map, a sparse tensor) or nests deeper than optional(seq(tensor)).
const onnx::TypeProto_Tensor* unwrap_type(const onnx::TypeProto& t, ValueInfo& info) {
  if (t.has_tensor_type()) return &t.tensor_type();
  if (t.has_sequence_type() && !info.sequence && t.sequence_type().has_elem_type()) {
    info.sequence = true;
    return unwrap_type(t.sequence_type().elem_type(), info);
  }
  if (t.has_optional_type() && !info.optional && !info.sequence && t.optional_type().has_elem_type()) {
    info.optional = true;
    return unwrap_type(t.optional_type().elem_type(), info);
  }
  return nullptr;
}

void fill_type(const onnx::TypeProto& type, const std::string& name, ValueInfo& v) {
  ValueInfo kind;
  const onnx::TypeProto_Tensor* tt = unwrap_type(type, kind);
  if (!tt) return;
  v.sequence = kind.sequence;
  v.optional = kind.optional;
  if (tt->elem_type() != 0) {
    try {
      v.dtype = dtype_from_onnx_code(tt->elem_type(), "value '" + name + "'");
    } catch (const Error&) {}
  }
  if (tt->has_shape()) {
    v.has_shape = true;
    v.shape.clear();
    for (const auto& d : tt->shape().dim()) {
      Dim dim;
      if (d.has_dim_value())
        dim.value = d.dim_value();
      else if (d.has_dim_param())
        dim.symbol = d.dim_param();
      v.shape.push_back(dim);
    }
  }
}

void fill_value_info(const onnx::ValueInfoProto& vi, Value& v) {
  if (!vi.has_type()) return;
  ValueInfo info = value_info_of(v);
  fill_type(vi.type(), vi.name(), info);
  v.dtype = info.dtype;
  v.sequence = info.sequence;
  v.optional = info.optional;
  if (info.has_shape) {
    v.has_shape = true;
    v.shape = info.shape;
  }
}

Attribute convert_attribute(const onnx::AttributeProto& a, const ExternalDataRoots& roots, const std::string& where) {
  Attribute r;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      r.kind = Attribute::Kind::kFloat;
      r.f = a.f();
      break;
    case onnx::AttributeProto::INT:
      r.kind = Attribute::Kind::kInt;
      r.i = a.i();
      break;
    case onnx::AttributeProto::STRING:
      r.kind = Attribute::Kind::kString;
      r.s = a.s();
      break;
    case onnx::AttributeProto::TENSOR:
      r.kind = Attribute::Kind::kTensor;
      r.t = tensor_from_proto(a.t(), roots, where);
      break;
    case onnx::AttributeProto::GRAPH: r.kind = Attribute::Kind::kGraph; break;  // converted by add_nodes
    case onnx::AttributeProto::FLOATS:
      r.kind = Attribute::Kind::kFloats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      r.kind = Attribute::Kind::kInts;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      r.kind = Attribute::Kind::kStrings;
      r.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto::TENSORS: r.kind = Attribute::Kind::kTensors; break;
    case onnx::AttributeProto::TYPE_PROTO:
      r.kind = Attribute::Kind::kType;
      fill_type(a.tp(), a.name(), r.type);
      break;
    default:
      // Old files leave `type` unset; infer it from the populated field.
      if (a.has_f()) {
        r.kind = Attribute::Kind::kFloat;
        r.f = a.f();
      } else if (a.has_i()) {
        r.kind = Attribute::Kind::kInt;
        r.i = a.i();
      } else if (a.has_s()) {
        r.kind = Attribute::Kind::kString;
        r.s = a.s();
      } else if (a.has_t()) {
        r.kind = Attribute::Kind::kTensor;
        r.t = tensor_from_proto(a.t(), roots, where);
      } else if (a.floats_size()) {
        r.kind = Attribute::Kind::kFloats;
        r.floats.assign(a.floats().begin(), a.floats().end());
      } else if (a.ints_size()) {
        r.kind = Attribute::Kind::kInts;
        r.ints.assign(a.ints().begin(), a.ints().end());
      } else if (a.strings_size()) {
        r.kind = Attribute::Kind::kStrings;
        r.strings.assign(a.strings().begin(), a.strings().end());
      } else
        fail(where, ": attribute '", a.name(), "' has no value");
  }
  return r;
}

// Constant node -> tensor.
Tensor constant_node_value(const Node& n) {
  const auto& items = n.attrs.items;
  if (items.size() != 1) fail(n.describe(), ": a Constant node needs exactly one value attribute");
  const auto& [key, a] = *items.begin();
  if (key == "value") return a.t;
  if (key == "value_float") {
    Tensor t = Tensor::allocate(DType::kFloat32, {});
    *t.data_as<float>() = a.f;
    return t;
  }
  if (key == "value_int") {
    Tensor t = Tensor::allocate(DType::kInt64, {});
    *t.data_as<int64_t>() = a.i;
    return t;
  }
  if (key == "value_floats") {
    Tensor t = Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(a.floats.size())});
    std::copy(a.floats.begin(), a.floats.end(), t.data_as<float>());
    return t;
  }
  if (key == "value_ints") {
    Tensor t = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(a.ints.size())});
    std::copy(a.ints.begin(), a.ints.end(), t.data_as<int64_t>());
    return t;
  }
  fail(n.describe(), ": Constant attribute '", key, "' is not supported");
}

void topological_sort(Graph& g, const std::string& file) {
  size_t n = g.nodes.size();
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (size_t i = 0; i < n; ++i)
    for (int in : values_read_by(g, g.nodes[i])) {
      int p = g.values[in].producer;
      if (p >= 0) {
        ++indegree[i];
        consumers[p].push_back(static_cast<int>(i));
      }
    }
  // Keep file order among ready nodes (a min-heap on the original index) for stable plans.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (!indegree[i]) ready.push(static_cast<int>(i));
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[i])
      if (--indegree[c] == 0) ready.push(c);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (indegree[i]) fail(file, ": the graph has a cycle through ", g.nodes[i].describe());
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (int i : order) sorted.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(sorted);
  g.compact();
}

// Initializers (constants) and the graph inputs that are not initializers.
void add_initializers_and_inputs(const onnx::GraphProto& gp, const ExternalDataRoots& roots, const std::string& file,
                                 Graph& g) {
  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) fail(file, ": an initializer has no name");
    int id = g.add_value(init.name());
    g.values[id].constant = tensor_from_proto(init, roots, file + ":");
    g.values[id].dtype = g.values[id].constant->dtype();
    g.values[id].has_shape = true;
    for (int64_t d : g.values[id].constant->shape()) g.values[id].shape.push_back(Dim{d, ""});
  }
  for (const auto& in : gp.input()) {
    int id = g.find_value(in.name());
    if (id >= 0) continue;  // an input that is also an initializer: a constant with a default
    id = g.add_value(in.name());
    fill_value_info(in, g.values[id]);
    g.inputs.push_back(id);
  }
}

// The id of `name` in g; in a subgraph an unknown name becomes an outer-scope reference.
int value_or_outer(Graph& g, const std::string& name, bool subgraph) {
  int id = g.find_value(name);
  if (id < 0 && subgraph) id = g.add_value(name);
  return id;
}

// A node's outputs as new values it produces ("" = omitted: -1). Every ONNX operator has at least
// one output; the graph passes and kernels may rely on outputs[0].
void add_node_outputs(Graph& g, const onnx::NodeProto& np, Node& n, const std::string& file) {
  for (const auto& o : np.output()) {
    if (o.empty()) {
      n.outputs.push_back(-1);
      continue;
    }
    if (g.find_value(o) >= 0)
      fail(file, ": ", n.describe(), " output '", o, "' is already produced elsewhere (SSA violation)");
    int id = g.add_value(o);
    g.values[id].producer = static_cast<int>(g.nodes.size());
    n.outputs.push_back(id);
  }
  if (std::none_of(n.outputs.begin(), n.outputs.end(), [](int id) { return id >= 0; }))
    fail(file, ": ", n.describe(), " has no outputs (every ONNX operator produces at least one)");
}

// One node without its inputs: type, domain, opset, attributes (subgraphs converted), outputs.
Node convert_node(const onnx::NodeProto& np, int index, const std::map<std::string, int64_t>& opsets,
                  const ExternalDataRoots& roots, const std::string& file, Graph& g) {
  Node n;
  n.op_type = np.op_type();
  n.domain = np.domain() == "ai.onnx" ? "" : np.domain();
  n.name = np.name().empty() ? str_cat(n.op_type, "_", index) : np.name();
  if (n.op_type.empty()) fail(file, ": node ", index, " has no op_type");
  auto ops = opsets.find(n.domain);
  if (ops == opsets.end())
    fail(file, ": ", n.describe(), " uses domain '", n.domain, "' which the model does not import (opset_import)");
  n.opset = ops->second;
  n.attrs.owner = n.describe();
  for (const auto& a : np.attribute()) {
    // pointrt's passes mark the nodes they rewrite with these (layouts, fused epilogues); a file
    // that sets one would change what a kernel reads without any check behind it.
    if (a.name().rfind(kInternalAttributePrefix, 0) == 0)
      fail(file, ": ", n.describe(), ": attribute '", a.name(), "' is reserved: names starting with '",
           kInternalAttributePrefix, "' are set only by pointrt's own graph passes, never read from a file");
    Attribute& attr = n.attrs.items[a.name()] = convert_attribute(a, roots, file + ": " + n.describe());
    if (attr.kind != Attribute::Kind::kGraph) continue;
    attr.g = std::make_shared<Graph>();
    attr.g->opsets = opsets;
    convert_graph(a.g(), opsets, roots, file, /*subgraph=*/true, *attr.g);
    if (attr.g->name.empty()) attr.g->name = a.name();
  }
  add_node_outputs(g, np, n, file);
  return n;
}

void add_nodes(const onnx::GraphProto& gp, const std::map<std::string, int64_t>& opsets, const ExternalDataRoots& roots,
               const std::string& file, bool subgraph, Graph& g) {
  // Create every node's outputs first: files need not be topologically sorted.
  g.nodes.reserve(gp.node_size());
  for (int ni = 0; ni < gp.node_size(); ++ni) g.nodes.push_back(convert_node(gp.node(ni), ni, opsets, roots, file, g));
  for (int ni = 0; ni < gp.node_size(); ++ni) {
    Node& n = g.nodes[ni];
    for (const auto& in : gp.node(ni).input()) {
      if (in.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      int id = value_or_outer(g, in, subgraph);
      if (id < 0)
        fail(file, ": ", n.describe(), " input '", in,
             "' is not a graph input, an initializer or another node's output");
      n.inputs.push_back(id);
    }
  }
}

void add_outputs(const onnx::GraphProto& gp, const std::string& file, bool subgraph, Graph& g) {
  for (const auto& vi : gp.value_info()) {
    int id = g.find_value(vi.name());
    if (id >= 0 && !g.values[id].constant) fill_value_info(vi, g.values[id]);
  }
  for (const auto& out : gp.output()) {
    int id = value_or_outer(g, out.name(), subgraph);
    if (id < 0) fail(file, ": graph output '", out.name(), "' is not produced by any node");
    if (!g.values[id].constant) fill_value_info(out, g.values[id]);
    g.outputs.push_back(id);
  }
}

// Constant nodes become constants right away.
void fold_constant_nodes(const std::string& file, Graph& g) {
  for (auto& n : g.nodes) {
    if (n.op_type != "Constant" || !n.domain.empty()) continue;
    if (n.outputs.size() != 1 || n.outputs[0] < 0) fail(file, ": ", n.describe(), " must have one output");
    Value& v = g.values[n.outputs[0]];
    v.constant = constant_node_value(n);
    v.dtype = v.constant->dtype();
    v.has_shape = true;
    v.shape.clear();
    for (int64_t d : v.constant->shape()) v.shape.push_back(Dim{d, ""});
    n.removed = true;
  }
  g.compact();
}

// Every outer-scope name of the subgraphs of `g` must be defined by `g` or by a graph in `enclosing`.
void check_scopes(const Graph& g, const std::string& file, std::vector<const Graph*>& enclosing) {
  enclosing.push_back(&g);
  for (const Node& n : g.nodes)
    for (const auto& [key, a] : n.attrs.items) {
      if (a.kind != Attribute::Kind::kGraph || !a.g) continue;
      for (const std::string& name : outer_scope_names(*a.g)) {
        bool found = false;
        for (const Graph* e : enclosing) found = found || e->find_value(name) >= 0;
        if (!found)
          fail(file, ": ", n.describe(), ": subgraph '", key, "' reads '", name,
               "', which neither it nor an enclosing graph defines");
      }
      check_scopes(*a.g, file, enclosing);
    }
  enclosing.pop_back();
}

}  // namespace

void convert_graph(const onnx::GraphProto& gp, const std::map<std::string, int64_t>& opsets,
                   const ExternalDataRoots& roots, const std::string& file, bool subgraph, Graph& g) {
  if (g.name.empty()) g.name = gp.name();
  add_initializers_and_inputs(gp, roots, file, g);
  add_nodes(gp, opsets, roots, file, subgraph, g);
  add_outputs(gp, file, subgraph, g);
  topological_sort(g, file);
  fold_constant_nodes(file, g);
}

void apply_inferred_types(const onnx::GraphProto& typed, Graph& g) {
  for (const auto& vi : typed.value_info()) {
    int id = g.find_value(vi.name());
    if (id >= 0 && !g.values[id].constant) fill_value_info(vi, g.values[id]);
  }
  if (static_cast<size_t>(typed.output_size()) != g.outputs.size()) return;
  for (size_t i = 0; i < g.outputs.size(); ++i)
    if (!g.values[g.outputs[i]].constant) fill_value_info(typed.output(static_cast<int>(i)), g.values[g.outputs[i]]);
}

void check_outer_scopes(const Graph& g, const std::string& file) {
  std::vector<const Graph*> enclosing;
  check_scopes(g, file, enclosing);
}

}  // namespace pointrt
