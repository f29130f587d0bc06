// Runs one node straight through its operator-table factory, without a session: no import, no
// shape inference, no graph passes. For kernel tests that must control exactly what the kernel's
// prepare step sees (which inputs are constants, which shapes are declared) or that call a kernel
// the session would fold away. For a node through the whole pipeline use node_runner.h.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/common.h"
#include "ops/kernel.h"

namespace pointrt::test {

/// Every output in its own heap tensor (what a session's arena would hand out, without reuse).
class HeapAllocator : public Allocator {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
};

inline Attribute int_attr(int64_t v) { return Attribute::make_int(std::move(v)); }
inline Attribute ints_attr(std::vector<int64_t> v) { return Attribute::make_ints(std::move(v)); }
inline Attribute float_attr(float v) { return Attribute::make_float(std::move(v)); }
inline Attribute floats_attr(std::vector<float> v) { return Attribute::make_floats(std::move(v)); }
inline Attribute string_attr(std::string v) { return Attribute::make_string(std::move(v)); }
inline Attribute tensor_attr(Tensor t) {
  Attribute a;
  a.kind = Attribute::Kind::kTensor;
  a.t = std::move(t);
  return a;
}

/// What the kernel's prepare step knows of one input.
struct KernelInput {
  std::optional<Tensor> value;    // its dtype (and value when `constant`); none = an omitted optional input
  bool constant = false;          // an initializer: prepare may read the value
  std::optional<Shape> declared;  // the shape the model declares; none = unknown until run
  std::string name;               // the graph value's name (in messages); "" = "in<i>"
};

/// A node `op` named `node_name` (ai.onnx domain unless `domain` is given), its kernel made once.
class KernelHarness {
 public:
  KernelHarness(const std::string& op, int64_t opset, std::map<std::string, Attribute> attrs,
                const std::vector<KernelInput>& inputs, size_t num_outputs = 1, const std::string& node_name = "n0",
                const std::string& domain = "") {
    Node n;
    n.name = node_name;
    n.op_type = op;
    n.domain = domain;
    n.opset = opset;
    n.attrs.items = std::move(attrs);
    n.attrs.owner = n.describe();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const KernelInput& in = inputs[i];
      if (!in.value) {
        n.inputs.push_back(-1);
        continue;
      }
      int id = graph_.add_value(in.name.empty() ? "in" + std::to_string(i) : in.name);
      Value& v = graph_.values[id];
      v.dtype = in.value->dtype();
      if (in.constant) v.constant = *in.value;
      if (in.declared) {
        v.has_shape = true;
        for (int64_t d : *in.declared) v.shape.push_back(Dim{d, ""});
      }
      n.inputs.push_back(id);
    }
    for (size_t o = 0; o < num_outputs; ++o) n.outputs.push_back(graph_.add_value("out" + std::to_string(o)));
    graph_.nodes.push_back(std::move(n));
    const OpEntry* e = op_table().find(domain, op, opset);
    if (e == nullptr) throw Error(str_cat("no table row for ", op, " at opset ", opset));
    kernel_ = e->factory(KernelInit{graph_.nodes[0], graph_});
  }

  /// One run on `inputs` (null = omitted); a fresh RunCache each time.
  std::vector<Tensor> run(const std::vector<const Tensor*>& inputs) const {
    std::vector<Tensor> outs(graph_.nodes[0].outputs.size());
    HeapAllocator alloc;
    RunCache cache;
    KernelContext ctx(graph_.nodes[0], inputs, outs, alloc, cache);
    kernel_->run(ctx);
    return outs;
  }
  std::vector<Tensor> run(const std::vector<std::optional<Tensor>>& inputs) const {
    std::vector<const Tensor*> ptrs;
    for (const auto& t : inputs) ptrs.push_back(t ? &*t : nullptr);
    return run(ptrs);
  }

  const Graph& graph() const { return graph_; }
  const Node& node() const { return graph_.nodes[0]; }

 private:
  Graph graph_;
  std::unique_ptr<OpKernel> kernel_;
};

}  // namespace pointrt::test
