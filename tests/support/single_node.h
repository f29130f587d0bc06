// pointrt-domain operator tests on top of node_runner.h: one node through a real Session (import,
// shape inference with the family's schema, prepare, run), and error-message expectations.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "support/expect_error.h"  // expect_error_with
#include "support/node_runner.h"

namespace pointrt::test {

struct NamedInput {
  std::string name;
  Tensor value;  // undefined = the node gets "" (an absent optional input)
};

/// A pointrt-domain node `op` (named "node0") with the given inputs, outputs and attributes, run once.
inline std::vector<Tensor> run_pointrt_node(const std::string& op, const std::vector<NamedInput>& inputs,
                                            const std::vector<std::string>& outputs,
                                            const std::function<void(onnx::NodeProto&)>& attrs) {
  NodeCase c;
  c.op = op;
  c.domain = "pointrt";
  c.opset = 1;
  for (const auto& in : inputs) c.inputs.push_back({in.value.defined() ? in.name : "", in.value});
  c.outputs = outputs;
  c.attrs = attrs;
  return run_node(c);
}

template <typename T>
Tensor make_tensor(Shape shape, const std::vector<T>& values) {
  return tensor_of<T>(std::move(shape), values);
}

}  // namespace pointrt::test
