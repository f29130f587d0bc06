// Builds small ONNX models in tests without Python: inputs, initializers, nodes, outputs.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "core/subbyte.h"
#include "onnx/onnx_pb.h"
#include "pointrt/pointrt.h"

namespace pointrt::test {

using DimSpec = std::variant<int64_t, std::string>;  // fixed size or symbol

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17) {
    model_.set_ir_version(8);
    model_.set_producer_name("pointrt-tests");
    add_opset("", opset);
    model_.mutable_graph()->set_name("test");
  }
  ModelBuilder& add_opset(const std::string& domain, int64_t version) {
    auto* o = model_.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
    return *this;
  }
  ModelBuilder& input(const std::string& name, DType t, const std::vector<DimSpec>& dims) {
    value_info(model_.mutable_graph()->add_input(), name, t, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, DType t = DType::kUndefined, const std::vector<DimSpec>& dims = {},
                       bool with_shape = false) {
    auto* v = model_.mutable_graph()->add_output();
    v->set_name(name);
    if (t != DType::kUndefined) {
      v->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(t));
      if (with_shape) set_dims(v, dims);
    }
    return *this;
  }
  ModelBuilder& initializer(const std::string& name, const Tensor& t) {
    auto* p = model_.mutable_graph()->add_initializer();
    fill_tensor(p, name, t);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& domain = "",
                        const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_domain(domain);
    n->set_name(name.empty() ? op + "_" + std::to_string(model_.graph().node_size()) : name);
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return *n;
  }
  static void attr_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_float(onnx::NodeProto& n, const std::string& name, float v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr_ints(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr_floats(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (auto x : v) a->add_floats(x);
  }
  static void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  static void fill_tensor(onnx::TensorProto* p, const std::string& name, const Tensor& t) {
    p->set_name(name);
    p->set_data_type(static_cast<int>(t.dtype()));
    for (auto d : t.shape()) p->add_dims(d);
    if (is_int4_type(t.dtype())) {  // files hold 4-bit values packed, two per byte
      std::string packed(packed_int4_bytes(t.numel()), '\0');
      pack_int4(t.data_as<uint8_t>(), t.numel(), reinterpret_cast<uint8_t*>(&packed[0]));
      p->set_raw_data(packed);
      return;
    }
    p->set_raw_data(std::string(static_cast<const char*>(t.data()), t.nbytes()));
  }
  onnx::ModelProto& proto() { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }
  Model load(const std::string& display = "test.onnx") const {
    std::string b = bytes();
    return Model::load_from_bytes(b.data(), b.size(), "", display);
  }

 private:
  static void set_dims(onnx::ValueInfoProto* v, const std::vector<DimSpec>& dims) {
    auto* shape = v->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (const auto& d : dims) {
      auto* dim = shape->add_dim();
      if (std::holds_alternative<int64_t>(d))
        dim->set_dim_value(std::get<int64_t>(d));
      else
        dim->set_dim_param(std::get<std::string>(d));
    }
  }
  static void value_info(onnx::ValueInfoProto* v, const std::string& name, DType t, const std::vector<DimSpec>& dims) {
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(t));
    set_dims(v, dims);
  }
  onnx::ModelProto model_;
};

/// A float32 tensor filled with a deterministic pattern.
inline Tensor iota_tensor(const Shape& s, float start = 0.f, float step = 1.f) {
  Tensor t = Tensor::allocate(DType::kFloat32, s);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = start + step * static_cast<float>(i);
  return t;
}

}  // namespace pointrt::test
