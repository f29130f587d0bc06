// Helpers shared by the image family tests (tests/unit/image/*_test.cc): small tensors from
// values, and one node run through its kernel with chosen constants and declared shape.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ops/kernel.h"
#include "support/kernel_runner.h"
#include "support/op_tester.h"
#include "support/random.h"

namespace pointrt::image::test_helpers {

using pointrt::test::float_attr;
using pointrt::test::floats_attr;
using pointrt::test::int_attr;
using pointrt::test::ints_attr;
using pointrt::test::random_values;
using pointrt::test::string_attr;

inline Tensor floats(const Shape& shape, std::vector<float> v) {
  Tensor t = Tensor::allocate(DType::kFloat32, shape);
  std::copy(v.begin(), v.end(), t.data_as<float>());
  return t;
}
inline Tensor int64s(const Shape& shape, std::vector<int64_t> v) {
  Tensor t = Tensor::allocate(DType::kInt64, shape);
  std::copy(v.begin(), v.end(), t.data_as<int64_t>());
  return t;
}

// One node through its operator-table factory. `prepare_inputs`: the inputs' types (nullopt =
// omitted); `constants`: which of them prepare knows the value of; `declared`: a fixed shape
// declared for input 0.
struct NodeHarness {
  NodeHarness(const std::string& op, int64_t opset, std::map<std::string, Attribute> attrs,
              const std::vector<std::optional<Tensor>>& prepare_inputs, const std::vector<bool>& constants = {},
              std::optional<Shape> declared = std::nullopt)
      : harness(op, opset, std::move(attrs), kernel_inputs(prepare_inputs, constants, declared)) {}

  Tensor run(const std::vector<std::optional<Tensor>>& inputs) const { return harness.run(inputs)[0]; }

  static std::vector<test::KernelInput> kernel_inputs(const std::vector<std::optional<Tensor>>& prepare_inputs,
                                                      const std::vector<bool>& constants,
                                                      const std::optional<Shape>& declared) {
    std::vector<test::KernelInput> ins(prepare_inputs.size());
    for (size_t i = 0; i < prepare_inputs.size(); ++i) {
      ins[i].value = prepare_inputs[i];
      ins[i].constant = i < constants.size() && constants[i];
      if (i == 0) ins[i].declared = declared;
    }
    return ins;
  }

  test::KernelHarness harness;
};

}  // namespace pointrt::image::test_helpers
