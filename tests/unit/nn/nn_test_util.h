// Helpers shared by the nn family tests (tests/unit/nn/*_test.cc): ONNX models built node by
// node.
#pragma once

#include <string>
#include <vector>

#include "graph/onnx_import.h"
#include "onnx/onnx_pb.h"
#include "ops/kernel.h"
#include "pointrt/pointrt.h"
#include "support/op_tester.h"
#include "support/random.h"

namespace pointrt::nn::test_helpers {

using pointrt::test::expect_close;
using pointrt::test::random_floats;
using pointrt::test::Tol;

struct ModelBuilder {
  onnx::ModelProto model;
  onnx::GraphProto* graph;
  explicit ModelBuilder(int opset = 13) {
    model.set_ir_version(8);
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(opset);
    graph = model.mutable_graph();
    graph->set_name("test");
  }
  static void set_shape(onnx::ValueInfoProto* vi, const std::string& name, const Shape& shape, int elem = 1) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* sh = tt->mutable_shape();
    for (int64_t d : shape) {
      if (d < 0)
        sh->add_dim()->set_dim_param(sh->dim_size() == 0 ? "N" : "S" + std::to_string(sh->dim_size()));
      else
        sh->add_dim()->set_dim_value(d);
    }
  }
  void input(const std::string& name, const Shape& shape) { set_shape(graph->add_input(), name, shape); }
  void output(const std::string& name) {
    auto* vi = graph->add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
  }
  void initializer(const std::string& name, const Tensor& t) {
    auto* tp = graph->add_initializer();
    tp->set_name(name);
    tp->set_data_type(1);
    for (int64_t d : t.shape()) tp->add_dims(d);
    tp->set_raw_data(std::string(static_cast<const char*>(t.data()), t.nbytes()));
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& ins,
                        const std::vector<std::string>& outs, const std::string& name = "") {
    auto* n = graph->add_node();
    n->set_op_type(op);
    n->set_name(name.empty() ? op + std::to_string(graph->node_size()) : name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void int1(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void float1(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void str(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  Model build() const {
    std::string bytes = model.SerializeAsString();
    return Model::load_from_bytes(bytes.data(), bytes.size(), "", "nn_test");
  }
};

}  // namespace pointrt::nn::test_helpers
