// The in-memory graph pointrt works on: values (edges), nodes, attributes.
// Built by onnx_import.cc, rewritten by the passes, turned into a plan by the session.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/common.h"
#include "pointrt/pointrt.h"

namespace pointrt {

struct Graph;

/// An ONNX attribute, decoded.
struct Attribute {
  // kType: a TYPE_PROTO attribute (Optional's `type`), decoded into `type` (kind, element type, shape).
  enum class Kind { kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors, kType };
  Kind kind = Kind::kInt;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  ValueInfo type;  // kType

  static Attribute make_int(int64_t v) {
    Attribute a;
    a.kind = Kind::kInt;
    a.i = v;
    return a;
  }
  static Attribute make_float(float v) {
    Attribute a;
    a.kind = Kind::kFloat;
    a.f = v;
    return a;
  }
  static Attribute make_string(std::string v) {
    Attribute a;
    a.kind = Kind::kString;
    a.s = std::move(v);
    return a;
  }
  static Attribute make_ints(std::vector<int64_t> v) {
    Attribute a;
    a.kind = Kind::kInts;
    a.ints = std::move(v);
    return a;
  }
  static Attribute make_floats(std::vector<float> v) {
    Attribute a;
    a.kind = Kind::kFloats;
    a.floats = std::move(v);
    return a;
  }
};

/// A node's attributes with typed accessors. Every accessor names the node on error.
class Attributes {
 public:
  std::map<std::string, Attribute> items;
  std::string owner;  // "node 'conv1' (Conv)" for messages

  bool has(const std::string& name) const { return items.count(name) != 0; }
  int64_t get_int(const std::string& name, int64_t dflt) const;
  int64_t get_int(const std::string& name) const;  // required
  float get_float(const std::string& name, float dflt) const;
  float get_float(const std::string& name) const;  // required
  std::string get_string(const std::string& name, const std::string& dflt) const;
  std::vector<int64_t> get_ints(const std::string& name, std::vector<int64_t> dflt) const;
  std::vector<int64_t> get_ints(const std::string& name) const;  // required
  std::vector<float> get_floats(const std::string& name, std::vector<float> dflt) const;
  std::vector<float> get_floats(const std::string& name) const;  // required
  std::vector<std::string> get_strings(const std::string& name) const;
  const Tensor* get_tensor(const std::string& name) const;  // nullptr when absent

 private:
  const Attribute& require(const std::string& name, Attribute::Kind kind, const char* kind_name) const;
};

/// A graph edge: a tensor, or (ONNX's sequence and optional types) a sequence of tensors or an
/// optional tensor/sequence. For those, dtype and shape describe the tensor or the elements.
/// At run time a sequence or an empty optional is an AnyValue in the executor's side table
/// (runtime/executor.h); an optional that holds a tensor is that tensor.
struct Value {
  std::string name;
  DType dtype = DType::kUndefined;  // from the model or inference; undefined if unknown
  bool has_shape = false;
  std::vector<Dim> shape;
  bool sequence = false;  // seq(dtype)
  bool optional = false;  // optional(dtype) or, with `sequence`, optional(seq(dtype))
  bool is_tensor() const { return !sequence && !optional; }
  std::optional<Tensor> constant;  // initializer or folded constant
  int producer = -1;               // node index, -1 for graph inputs / constants
};

struct Node {
  std::string name;  // never empty after import ("<op>_<index>" when the file has none)
  std::string op_type;
  std::string domain;        // "" for ai.onnx
  int64_t opset = 0;         // the model's opset for this node's domain
  std::vector<int> inputs;   // value ids; -1 = omitted optional input
  std::vector<int> outputs;  // value ids; -1 = omitted optional output
  Attributes attrs;
  bool removed = false;  // set by passes; compacted away before planning

  std::string describe() const {
    return str_cat("node '", name, "' (", domain.empty() ? "" : domain + "::", op_type, ")");
  }
};

struct Graph {
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs;  // graph inputs that are fed (initializers excluded)
  std::vector<int> outputs;
  std::map<std::string, int64_t> opsets;  // domain -> version ("" = ai.onnx)
  std::map<std::string, int> value_ids;

  int find_value(const std::string& name) const {
    auto it = value_ids.find(name);
    return it == value_ids.end() ? -1 : it->second;
  }
  int add_value(const std::string& name);  // errors on a duplicate name
  /// Remove nodes marked `removed` and recompute producers (values keep their ids).
  void compact();
};

/// The value's type as ValueInfo::type_string() writes it: "float32 [2, N]", "seq(int64)".
std::string value_type_string(const Value& v);
/// The ValueInfo of a value (name, type, kind).
ValueInfo value_info_of(const Value& v);

/// Values of `g` that node `n` reads: its inputs and, for a node with subgraphs (graph
/// attributes: If/Loop/Scan bodies), the values of `g` those subgraphs read from the enclosing
/// scope. Liveness and dead-node elimination use it so that such values stay alive.
std::vector<int> values_read_by(const Graph& g, const Node& n);

/// Per value: how many times the live nodes read it (values_read_by, so subgraph reads count) plus
/// one if it is a graph output. A value with count 0 is dead; 1 has a single reader.
std::vector<int> reader_counts(const Graph& g);

/// The input slots that read each value, over the live nodes (direct inputs only, not subgraph
/// reads), in one flat array: for passes that recompute it after each rewrite (a vector per value
/// cost milliseconds per 10k nodes). Valid until the graph changes.
struct ValueReaders {
  struct Reader {
    int node, input;  // g.nodes[node].inputs[input] reads the value
  };
  struct Span {
    const Reader *first, *last;
    size_t size() const { return static_cast<size_t>(last - first); }
    bool empty() const { return first == last; }
    const Reader& operator[](size_t i) const { return first[i]; }
    const Reader* begin() const { return first; }
    const Reader* end() const { return last; }
  };
  std::vector<int> offsets;  // value v's readers: entries[offsets[v], offsets[v + 1])
  std::vector<Reader> entries;
  std::vector<bool> graph_output;
  Span of(int v) const { return {entries.data() + offsets[v], entries.data() + offsets[v + 1]}; }
  /// The node of v's only reader (v read once, and not a graph output), else -1.
  int sole_reader(int v) const { return v >= 0 && of(v).size() == 1 && !graph_output[v] ? of(v)[0].node : -1; }
};
ValueReaders value_readers(const Graph& g);

/// Names `g` reads without defining them (ONNX outer-scope references of a subgraph): values that
/// no node produces and that are neither inputs nor constants, and names its own subgraphs read
/// that `g` has no value for. In order of first use. Empty for a model's main graph.
std::vector<std::string> outer_scope_names(const Graph& g);

}  // namespace pointrt
