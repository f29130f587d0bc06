// Run one node through a real Session (import, shape inference, prepare, run), for operator tests
// that also check the error messages a user sees. Until tests/support/ lands.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/common.h"
#include "test_util/model_builder.h"

namespace pointrt::test {

struct NamedInput {
  std::string name;
  Tensor value;  // undefined = the node gets "" (an absent optional input)
};

/// A pointrt-domain node `op` with the given inputs, outputs and attributes (set by `attrs`), run once.
inline std::vector<Tensor> run_pointrt_node(const std::string& op, const std::vector<NamedInput>& inputs,
                                            const std::vector<std::string>& outputs,
                                            const std::function<void(onnx::NodeProto&)>& attrs) {
  ModelBuilder b;
  b.add_opset("pointrt", 1);
  std::vector<std::string> names;
  std::map<std::string, Tensor> feeds;
  for (const auto& in : inputs) {
    names.push_back(in.value.defined() ? in.name : "");
    if (!in.value.defined()) continue;
    std::vector<DimSpec> dims(in.value.shape().begin(), in.value.shape().end());
    b.input(in.name, in.value.dtype(), dims);
    feeds[in.name] = in.value;
  }
  auto& node = b.node(op, names, outputs, "pointrt", "node_under_test");
  if (attrs) attrs(node);
  for (const auto& o : outputs) b.output(o);
  Session session(b.load());
  return session.run(feeds);
}

template <typename T>
Tensor make_tensor(Shape shape, const std::vector<T>& values) {
  Tensor t = Tensor::allocate(DTypeOf<T>::value, shape);
  EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
  if (!values.empty()) std::memcpy(t.data(), values.data(), values.size() * sizeof(T));
  return t;
}

/// Expect a pointrt::Error whose message contains every fragment.
template <typename F>
void expect_error_with(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
    ADD_FAILURE() << "expected pointrt::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& frag : fragments)
      EXPECT_NE(msg.find(frag), std::string::npos) << "missing '" << frag << "' in: " << msg;
  }
}

}  // namespace pointrt::test
