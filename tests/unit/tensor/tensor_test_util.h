// Helpers shared by the tensor family tests (tests/unit/tensor/*_test.cc): random tensors and
// shapes, byte-exact comparison, one node run through the operator table, error capture.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ops/kernel.h"
#include "pointrt/pointrt.h"
#include "support/expect_error.h"
#include "support/kernel_runner.h"

namespace pointrt::tensor::test_helpers {

// One dtype per element size, float16 included: copy-type kernels move bytes.
inline const DType kSizes[] = {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kInt64};

inline Tensor random_tensor(DType dt, const Shape& s, std::mt19937& rng) {
  Tensor t = Tensor::allocate(dt, s);
  auto* p = static_cast<uint8_t*>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(rng());
  return t;
}

inline Tensor index_tensor(DType dt, const Shape& s, int64_t n, std::mt19937& rng) {
  Tensor t = Tensor::allocate(dt, s);
  std::uniform_int_distribution<int64_t> dist(-n, n - 1);
  for (int64_t i = 0; i < t.numel(); ++i) {
    int64_t v = n > 0 ? dist(rng) : 0;
    if (dt == DType::kInt64)
      t.data_as<int64_t>()[i] = v;
    else
      t.data_as<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return t;
}

template <typename T>
inline Tensor make(DType dt, const Shape& s, std::vector<T> v) {
  Tensor t = Tensor::allocate(dt, s);
  EXPECT_EQ(static_cast<int64_t>(v.size()), t.numel());
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(T));
  return t;
}
inline Tensor i64(const Shape& s, std::vector<int64_t> v) { return make(DType::kInt64, s, std::move(v)); }
inline Tensor f32(const Shape& s, std::vector<float> v) { return make(DType::kFloat32, s, std::move(v)); }

inline ::testing::AssertionResult same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return ::testing::AssertionFailure() << "dtype/shape differ: " << shape_to_string(a.shape()) << " vs "
                                         << shape_to_string(b.shape());
  if (a.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) != 0) {
    const size_t es = dtype_size(a.dtype());
    for (int64_t i = 0; i < a.numel(); ++i)
      if (std::memcmp(static_cast<const char*>(a.data()) + i * es, static_cast<const char*>(b.data()) + i * es, es))
        return ::testing::AssertionFailure()
               << "first difference at flat element " << i << " of " << shape_to_string(a.shape());
  }
  return ::testing::AssertionSuccess();
}

inline Shape random_shape(std::mt19937& rng, int rank, bool allow_zero = true) {
  static const int64_t dims[] = {0, 1, 1, 2, 3, 5, 7};
  Shape s(rank);
  for (auto& d : s) {
    d = dims[rng() % 7];
    if (!allow_zero && d == 0) d = 2;
  }
  return s;
}

// ---- running one node through the operator table
using pointrt::test::HeapAllocator;

inline Attribute attr_int(int64_t v) { return test::int_attr(v); }
inline Attribute attr_ints(std::vector<int64_t> v) { return test::ints_attr(std::move(v)); }
inline Attribute attr_str(std::string v) { return test::string_attr(std::move(v)); }
inline Attribute attr_float(float v) { return test::float_attr(v); }
inline Attribute attr_tensor(Tensor t) { return test::tensor_attr(std::move(t)); }

// The node "n1" through its kernel, its inputs named data, indices, updates, axes, steps (in
// messages), shapes unknown to prepare. Undefined tensors are omitted optional inputs.
inline std::vector<Tensor> run_op(const std::string& op, int opset, const std::vector<Tensor>& inputs,
                                  std::map<std::string, Attribute> attrs = {}, size_t num_outputs = 1) {
  const char* names[] = {"data", "indices", "updates", "axes", "steps"};
  std::vector<test::KernelInput> ins(inputs.size());
  std::vector<const Tensor*> fed;
  for (size_t i = 0; i < inputs.size(); ++i) {
    fed.push_back(inputs[i].defined() ? &inputs[i] : nullptr);
    if (!inputs[i].defined()) continue;
    ins[i].value = inputs[i];
    ins[i].name = i < 5 ? names[i] : "in" + std::to_string(i);
  }
  return test::KernelHarness(op, opset, std::move(attrs), ins, num_outputs, "n1").run(fed);
}

inline std::string error_of(const std::function<void()>& f) { return test::error_text(f); }

}  // namespace pointrt::tensor::test_helpers
