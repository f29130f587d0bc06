// Helpers for the quantization operator tests: seeded random int8/float tensors and a one-node
// model whose inputs are each either fed or constant (the constant ones let the kernel take its
// packed oneDNN path, the fed ones force the reference kernel with the same values).
#pragma once

#include <random>
#include <string>
#include <vector>

#include "graph/onnx_import.h"
#include "ops/kernel.h"
#include "support/node_runner.h"

namespace pointrt::test {

template <typename T>
Tensor random_ints(Shape shape, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  Tensor t = Tensor::allocate(DTypeOf<T>::value, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<T>()[i] = static_cast<T>(d(rng));
  return t;
}

inline Tensor random_floats(Shape shape, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Tensor t = Tensor::allocate(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = d(rng);
  return t;
}

inline Tensor scalar_of(float v) { return tensor_of<float>({}, {v}); }
template <typename T>
Tensor scalar_int(T v) {
  return tensor_of<T>({}, {v});
}

struct MixedInput {
  std::string name;  // "" = omitted optional input
  Tensor value;
  bool constant = false;
};

/// A one-node model of `op` whose inputs marked constant are initializers, the others inputs.
inline Model mixed_model(const std::string& op, int64_t opset, const std::vector<MixedInput>& inputs,
                         const std::function<void(onnx::NodeProto&)>& attrs, size_t num_outputs,
                         std::map<std::string, Tensor>& feeds) {
  ModelBuilder b(opset);
  std::vector<std::string> names, outs;
  for (const auto& in : inputs) {
    names.push_back(in.name);
    if (in.name.empty()) continue;
    if (in.constant) {
      b.initializer(in.name, in.value);
    } else {
      b.input(in.name, in.value.dtype(), std::vector<DimSpec>(in.value.shape().begin(), in.value.shape().end()));
      feeds[in.name] = in.value;
    }
  }
  for (size_t i = 0; i < num_outputs; ++i) outs.push_back("y" + std::to_string(i));
  auto& n = b.node(op, names, outs, "", "node0");
  if (attrs) attrs(n);
  for (const auto& o : outs) b.output(o);
  return b.load();
}

/// Runs `op` once with the given inputs; those marked constant are initializers.
inline std::vector<Tensor> run_mixed(const std::string& op, int64_t opset, const std::vector<MixedInput>& inputs,
                                     const std::function<void(onnx::NodeProto&)>& attrs = {}, size_t num_outputs = 1) {
  std::map<std::string, Tensor> feeds;
  Model m = mixed_model(op, opset, inputs, attrs, num_outputs, feeds);
  SessionOptions opt;
  opt.optimize = false;
  Session s(m, opt);
  return s.run(feeds);
}

/// The kernel the operator table builds for the model's only node (for implementation names).
inline std::unique_ptr<OpKernel> only_node_kernel(const Model& m) {
  const Graph& g = m.impl()->graph;
  const Node& n = g.nodes.at(0);
  return op_table().find(n.domain, n.op_type, n.opset)->factory(KernelInit{n, g});
}

/// The same inputs, all fed (the reference kernel runs) and with `constant` as marked.
inline std::vector<MixedInput> all_fed(std::vector<MixedInput> in) {
  for (auto& i : in) i.constant = false;
  return in;
}

}  // namespace pointrt::test
