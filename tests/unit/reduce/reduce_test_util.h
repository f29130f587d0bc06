// Helpers shared by the reduce family tests (tests/unit/reduce/*_test.cc): random tensors with
// frequent ties, awkward shapes (0, 1, odd, 15/16/17, ranks 0..5), one node run through its kernel.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ops/kernel.h"
#include "support/expect_error.h"
#include "support/kernel_runner.h"
#include "support/op_tester.h"

namespace pointrt::reduce::test_helpers {

using pointrt::test::expect_error_with;
using pointrt::test::float_attr;
using pointrt::test::int_attr;
using pointrt::test::ints_attr;
using pointrt::test::string_attr;

// Random tensor; `small_ints` draws from a tiny range so ties and repeats are common.
inline Tensor random_tensor(DType t, const Shape& s, uint32_t seed, bool small_ints = false) {
  Tensor r = Tensor::allocate(t, s);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> ints(small_ints ? -2 : -9, small_ints ? 2 : 9);
  dispatch_all(t, "random_tensor", [&](auto tag) {
    using T = decltype(tag);
    T* p = r.data_as<T>();
    for (int64_t i = 0; i < r.numel(); ++i) {
      if constexpr (std::is_same<T, bool>::value)
        p[i] = ints(gen) > 0;
      else if constexpr (std::is_floating_point<T>::value)
        p[i] = small_ints ? T(ints(gen)) : T(real(gen));
      else if constexpr (std::is_unsigned<T>::value)
        p[i] = T(ints(gen) + 9);
      else
        p[i] = T(ints(gen));
    }
  });
  return r;
}

inline std::string shape_str(const Shape& s) { return shape_to_string(s); }

struct NodeSpec {
  std::string op;
  int opset;
  std::map<std::string, Attribute> attrs;
  std::vector<Tensor> inputs;  // undefined = omitted optional input
  std::vector<bool> constant;  // per input: constant (initializer) or fed
  int num_outputs = 1;
  std::map<int, Shape> declared;  // input shapes the model declares, when they differ from the fed ones
};

// The node "n0" through its kernel, every input's shape declared (the fed one unless `declared`).
inline std::vector<Tensor> run_node(const NodeSpec& spec) {
  std::vector<test::KernelInput> ins(spec.inputs.size());
  std::vector<const Tensor*> fed;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    fed.push_back(spec.inputs[i].defined() ? &spec.inputs[i] : nullptr);
    if (!spec.inputs[i].defined()) continue;
    ins[i].value = spec.inputs[i];
    ins[i].constant = i < spec.constant.size() && spec.constant[i];
    auto decl = spec.declared.find(static_cast<int>(i));
    ins[i].declared = decl != spec.declared.end() ? decl->second : spec.inputs[i].shape();
  }
  return test::KernelHarness(spec.op, spec.opset, spec.attrs, ins, spec.num_outputs).run(fed);
}

inline Tensor int64_tensor(std::vector<int64_t> v, bool scalar = false) {
  Tensor t = Tensor::allocate(DType::kInt64, scalar ? Shape{} : Shape{static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
  return t;
}

template <typename T>
inline Tensor make_tensor(DType dt, Shape s, std::vector<T> v) {
  Tensor t = Tensor::allocate(dt, s);
  std::copy(v.begin(), v.end(), t.data_as<T>());
  return t;
}

inline std::vector<Shape> awkward_shapes() {
  return {{},
          {0},
          {1},
          {7},
          {16},
          {17},
          {3, 4},
          {1, 15},
          {16, 1},
          {0, 5},
          {5, 0},
          {2, 3, 4},
          {17, 1, 15},
          {3, 16, 5},
          {2, 0, 3},
          {2, 3, 4, 5},
          {1, 2, 1, 3},
          {4, 1, 17, 2},
          {2, 3, 1, 2, 3},
          {1, 1, 1, 1, 1}};
}

}  // namespace pointrt::reduce::test_helpers
