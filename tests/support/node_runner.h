// Runs one ONNX node in a session, for operator tests: inputs are fed (or given as
// initializers), attributes set by a callback, outputs returned. Errors are returned as text
// by node_error so tests can assert on the message.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/common.h"
#include "support/expect_error.h"  // error_text
#include "support/model_builder.h"

namespace pointrt::test {

struct NodeCase {
  std::string op;
  int64_t opset = 17;
  std::string domain;  // "" = ai.onnx
  /// (name, value); an empty name is an omitted optional input. Fed at run time unless
  /// `constant_inputs`, then they are initializers (constant folding may then run the node).
  std::vector<std::pair<std::string, Tensor>> inputs;
  std::vector<std::string> outputs = {"node_out"};  // a name no test input takes
  std::function<void(onnx::NodeProto&)> attrs;
  bool constant_inputs = false;
  bool optimize = false;
};

inline Model node_model(const NodeCase& c) {
  ModelBuilder b(c.domain.empty() ? c.opset : 21);
  if (!c.domain.empty()) b.add_opset(c.domain, c.opset);
  std::vector<std::string> in_names;
  for (const auto& [name, t] : c.inputs) {
    in_names.push_back(name);
    if (name.empty()) continue;
    if (c.constant_inputs) {
      b.initializer(name, t);
    } else {
      std::vector<DimSpec> dims(t.shape().begin(), t.shape().end());
      b.input(name, t.dtype(), dims);
    }
  }
  auto& n = b.node(c.op, in_names, c.outputs, c.domain, "node0");
  if (c.attrs) c.attrs(n);
  for (const auto& o : c.outputs)
    if (!o.empty()) b.output(o);
  return b.load();
}

inline std::vector<Tensor> run_node(const NodeCase& c) {
  Model m = node_model(c);
  SessionOptions opt;
  opt.optimize = c.optimize;
  Session s(m, opt);
  std::map<std::string, Tensor> feeds;
  if (!c.constant_inputs)
    for (const auto& [name, t] : c.inputs)
      if (!name.empty()) feeds[name] = t;
  return s.run(feeds);
}

inline std::string node_error(const NodeCase& c) {
  return error_text([&] { run_node(c); });
}

template <typename T>
Tensor tensor_of(Shape shape, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(DTypeOf<T>::value, std::move(shape));
  if (static_cast<int64_t>(values.size()) != t.numel()) throw Error("tensor_of: wrong number of values");
  std::copy(values.begin(), values.end(), t.data_as<T>());
  return t;
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  return std::vector<T>(t.data_as<T>(), t.data_as<T>() + t.numel());
}

}  // namespace pointrt::test
