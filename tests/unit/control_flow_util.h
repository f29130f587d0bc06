// Builders for the control-flow tests (if_test.cc, loop_test.cc, scan_test.cc): subgraphs as
// onnx::GraphProto attached to nodes, scalars and small tensors, one-line error capture.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "support/model_builder.h"

namespace pointrt::test {

/// Adds a node to a subgraph.
inline onnx::NodeProto& sub_node(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& in,
                                 const std::vector<std::string>& out, const std::string& name = "") {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_" + std::to_string(g.node_size()) : name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return *n;
}

/// Declares a subgraph input or output (element type only when given).
inline void sub_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                      DType t = DType::kUndefined, int rank = -1) {
  auto* v = list->Add();
  v->set_name(name);
  if (t == DType::kUndefined) return;
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(t));
  if (rank >= 0) {
    auto* s = tt->mutable_shape();
    for (int d = 0; d < rank; ++d) s->add_dim()->set_dim_param("d" + std::to_string(d));
  }
}

inline void attr_graph(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

inline void sub_initializer(onnx::GraphProto& g, const std::string& name, const Tensor& t) {
  ModelBuilder::fill_tensor(g.add_initializer(), name, t);
}

template <typename T>
Tensor scalar_of(DType dtype, T v) {
  Tensor t = Tensor::allocate(dtype, {});
  *t.data_as<T>() = v;
  return t;
}
inline Tensor bool_scalar(bool v) { return scalar_of<bool>(DType::kBool, v); }
inline Tensor int64_scalar(int64_t v) { return scalar_of<int64_t>(DType::kInt64, v); }
inline Tensor float_tensor(const Shape& s, const std::vector<float>& v) {
  Tensor t = Tensor::allocate(DType::kFloat32, s);
  std::copy(v.begin(), v.end(), t.data_as<float>());
  return t;
}
inline std::vector<float> values_of(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.numel());
}

/// The message of the Error that `f` throws ("" when none).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

/// A Loop body (i, cond_in, v) -> (cond_in, v_out) whose v_out is If(`cond`) of the two branches
/// (node "choose"); the caller adds the nodes that compute `cond`.
inline onnx::GraphProto body_around_if(const std::string& cond, const onnx::GraphProto& then_g,
                                       const onnx::GraphProto& else_g) {
  onnx::GraphProto body;
  body.set_name("body");
  sub_value(body.mutable_input(), "i", DType::kInt64, 0);
  sub_value(body.mutable_input(), "cond_in", DType::kBool, 0);
  sub_value(body.mutable_input(), "v", DType::kFloat32);
  auto& n_if = sub_node(body, "If", {cond}, {"v_out"}, "choose");
  attr_graph(n_if, "then_branch", then_g);
  attr_graph(n_if, "else_branch", else_g);
  sub_node(body, "Identity", {"cond_in"}, {"cond_out"});
  sub_value(body.mutable_output(), "cond_out", DType::kBool);
  sub_value(body.mutable_output(), "v_out", DType::kFloat32);
  return body;
}

/// Loop(M, "", v0) -> v over `body`, with inputs x and v0 (float32 [1]) and M.
inline Model single_value_loop(const onnx::GraphProto& body, const std::string& node_name) {
  ModelBuilder b(17);
  b.input("x", DType::kFloat32, {int64_t{1}});
  b.input("v0", DType::kFloat32, {int64_t{1}});
  b.input("M", DType::kInt64, {});
  auto& n = b.node("Loop", {"M", "", "v0"}, {"v"}, "", node_name);
  attr_graph(n, "body", body);
  b.output("v");
  return b.load();
}

/// Runs a model in a session (optimised or not) with feeds.
inline std::vector<Tensor> run_model(const Model& m, const std::map<std::string, Tensor>& feeds, bool optimize = true) {
  SessionOptions o;
  o.optimize = optimize;
  Session s(m, o);
  return s.run(feeds);
}

}  // namespace pointrt::test
