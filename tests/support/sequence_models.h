// Helpers for tests of sequence and optional values: inputs declared seq(T) / optional(...),
// attributes the ONNX builder lacks (graphs, types), and running a model with Session::run_any.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/model_builder.h"
#include "support/node_runner.h"

namespace pointrt::test {

enum class Wrap { kSequence, kOptionalTensor, kOptionalSequence };

/// The TypeProto of `wrap` around a tensor of `t` (no shape).
inline void set_wrapped_type(onnx::TypeProto* type, DType t, Wrap wrap) {
  onnx::TypeProto* inner = type;
  if (wrap != Wrap::kSequence) inner = type->mutable_optional_type()->mutable_elem_type();
  if (wrap != Wrap::kOptionalTensor) inner = inner->mutable_sequence_type()->mutable_elem_type();
  inner->mutable_tensor_type()->set_elem_type(static_cast<int>(t));
}

inline void wrapped_input(ModelBuilder& b, const std::string& name, DType t, Wrap wrap) {
  auto* v = b.proto().mutable_graph()->add_input();
  v->set_name(name);
  set_wrapped_type(v->mutable_type(), t, wrap);
}

inline void wrapped_output(ModelBuilder& b, const std::string& name, DType t, Wrap wrap) {
  auto* v = b.proto().mutable_graph()->add_output();
  v->set_name(name);
  set_wrapped_type(v->mutable_type(), t, wrap);
}

inline void attr_graph(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  *a->mutable_g() = g;
}

inline void attr_type(onnx::NodeProto& n, const std::string& name, DType t, bool sequence) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TYPE_PROTO);
  onnx::TypeProto* inner = a->mutable_tp();
  if (sequence) inner = inner->mutable_sequence_type()->mutable_elem_type();
  inner->mutable_tensor_type()->set_elem_type(static_cast<int>(t));
}

inline Tensor f32(Shape s, std::vector<float> v) { return tensor_of<float>(std::move(s), v); }
inline Tensor i64(int64_t v) { return tensor_of<int64_t>({}, {v}); }

inline Sequence seq_of(std::vector<Tensor> items, DType t = DType::kFloat32) { return Sequence(t, std::move(items)); }

/// Runs `m` once with run_any.
inline std::vector<AnyValue> run_any(const Model& m, const std::map<std::string, AnyValue>& feeds) {
  Session s(m);
  return s.run_any(feeds);
}

inline std::string run_any_error(const Model& m, const std::map<std::string, AnyValue>& feeds) {
  return error_text([&] { run_any(m, feeds); });
}

}  // namespace pointrt::test
