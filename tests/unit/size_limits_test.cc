// Checked size arithmetic: shapes whose element or byte counts overflow, and tensors above
// SessionOptions::max_tensor_bytes, are one-line Errors naming the node, the tensor and the shape,
// raised before any memory is asked for (issue 12, item 1).
#include <gtest/gtest.h>

#include "core/checked_size.h"
#include "support/expect_error.h"
#include "support/model_builder.h"

using namespace pointrt;
using pointrt::test::expect_error;
using pointrt::test::ModelBuilder;

namespace {

Tensor int64_tensor(const std::vector<int64_t>& v) {
  Tensor t = Tensor::allocate(DType::kInt64, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<int64_t>()[i] = v[i];
  return t;
}

constexpr int64_t k2to32 = int64_t(1) << 32;

// c: float32 [1] constant, expanded to `shape` by node 'expand_big', then sliced by 'slice1'.
ModelBuilder folded_expand_then_slice(const std::vector<int64_t>& shape) {
  ModelBuilder b;
  b.initializer("c", test::iota_tensor({1}, 1.f));
  b.initializer("shape", int64_tensor(shape));
  b.initializer("starts", int64_tensor({0}));
  b.initializer("ends", int64_tensor({1}));
  b.node("Expand", {"c", "shape"}, {"e"}, "", "expand_big");
  b.node("Slice", {"e", "starts", "ends"}, {"y"}, "", "slice1");
  b.output("y");
  return b;
}

}  // namespace

TEST(CheckedSize, CountsOverflowAndNegativeDimensionsAreErrors) {
  EXPECT_EQ(checked_numel({}, "t"), 1);
  EXPECT_EQ(checked_numel({3, 0, k2to32, k2to32}, "t"), 0);  // a zero anywhere: empty, not overflow
  EXPECT_EQ(checked_numel({k2to32, 1 << 30}, "t"), int64_t(1) << 62);
  expect_error(
      [] {
        checked_numel({k2to32, k2to32}, "tensor 'x'");
      },
      {"tensor 'x'", "[4294967296, 4294967296]", "more elements than int64"});
  expect_error([] { checked_numel({2, -1}, "tensor 'x'"); }, {"tensor 'x'", "[2, -1]", "negative"});
  expect_error([] { checked_nbytes(DType::kFloat64, {int64_t(1) << 61}, "w"); }, {"w", "float64", "more bytes"});
  expect_error([] { shape_numel({k2to32, k2to32, 4}); }, {"[4294967296, 4294967296, 4]", "int64"});
  expect_error([] { Tensor::wrap(DType::kInt64, {int64_t(1) << 62}, nullptr).nbytes(); }, {"int64", "more bytes"});
  expect_error([] { check_tensor_size(DType::kFloat32, {1000}, 3999, "node 'n' (Relu): output 0 'y'"); },
               {"node 'n' (Relu)", "output 0 'y'", "float32 [1000]", "needs 4000 bytes (3.9 KiB)", "above the limit",
                "3999 bytes"});
  EXPECT_EQ(check_tensor_size(DType::kFloat32, {1000}, 4000, "y"), 4000u);
}

TEST(CheckedSize, TensorAllocateRefusesWrappedSizes) {
  expect_error([] { Tensor::allocate(DType::kFloat32, {k2to32, k2to32}); }, {"[4294967296, 4294967296]"});
  expect_error([] { Tensor::zeros(DType::kFloat32, {4, -2}); }, {"[4, -2]", "negative"});
}

TEST(CheckedSize, StrictIntegerAndByteCountParsing) {
  EXPECT_EQ(parse_int64_strict("0", "o"), 0);
  EXPECT_EQ(parse_int64_strict("9223372036854775807", "o"), INT64_MAX);
  EXPECT_EQ(parse_int64_strict("-3", "o", true), -3);
  for (const char* bad : {"", "-3", "+3", "3x", " 3", "3 ", "1e3", "0x10", "abc", "9223372036854775808"})
    expect_error([&] { parse_int64_strict(bad, "external data offset"); }, {"external data offset", bad});
  EXPECT_EQ(parse_byte_count("1000", "o"), 1000u);
  EXPECT_EQ(parse_byte_count("512M", "o"), size_t(512) << 20);
  EXPECT_EQ(parse_byte_count("1.5GiB", "o"), size_t(3) << 29);
  for (const char* bad : {"", "-1", "0", "12Q", "1..5G", "G", "1e12", "99999999999T"})
    expect_error([&] { parse_byte_count(bad, "--max-tensor-bytes"); }, {"--max-tensor-bytes"});
}

TEST(HostileModel, WrappingExpandFoldedThenSlicedIsAnErrorNamingTheNode) {
  // [2^32, 2^32, 4] has 2^66 elements: the product wraps to 0 in unchecked arithmetic.
  Model m = folded_expand_then_slice({k2to32, k2to32, 4}).load("expand.onnx");
  expect_error(
      [&] {
        Session s(m);
        s.run({});
      },
      {"expand.onnx", "expand_big", "Expand", "'e'", "[4294967296, 4294967296, 4]"});
}

TEST(HostileModel, HugeExpandAboveTheLimitNamesSizeAndLimit) {
  Model m = folded_expand_then_slice({1 << 20, 1 << 20, 1 << 20}).load("expand.onnx");
  expect_error(
      [&] {
        Session s(m);
        s.run({});
      },
      {"expand.onnx", "node 'expand_big' (Expand)", "output 0 'e'", "float32 [1048576, 1048576, 1048576]", "(4.0 EiB)",
       "above the limit"});
}

TEST(HostileModel, WrappingExpandAtRunTimeIsAnError) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {int64_t(1)});
  b.initializer("shape", int64_tensor({k2to32, k2to32, 4}));
  b.node("Expand", {"x", "shape"}, {"y"}, "", "expand_wrap");
  b.output("y");
  Session s(b.load("wrap.onnx"));
  Tensor x = test::iota_tensor({1});
  expect_error([&] { s.run({{"x", x}}); }, {"wrap.onnx", "expand_wrap", "'y'", "[4294967296, 4294967296, 4]"});
}

TEST(HostileModel, FeedWhoseShapeCannotBeCountedIsRefused) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {k2to32, k2to32});
  b.node("Relu", {"x"}, {"y"}, "", "relu1");
  b.output("y");
  Session s(b.load("huge_input.onnx"));
  float one = 1;
  expect_error(
      [&] {
        s.run({{"x", Tensor::wrap(DType::kFloat32, {k2to32, k2to32}, &one)}});
      },
      {"huge_input.onnx", "input 'x'", "[4294967296, 4294967296]"});
}

TEST(HostileModel, InitializerDeclaringMoreThanItsDataIsCheckedBeforeAllocating) {
  // [1e12] float32 is 4 TB: the data size is compared before any memory is reserved, so the
  // message is about the data, not about memory.
  ModelBuilder b;
  auto* w = b.proto().mutable_graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(1000000000000);
  w->set_raw_data(std::string(4, '\0'));
  b.node("Relu", {"w"}, {"y"}, "", "relu_w");
  b.output("y");
  expect_error([&] { b.load("init.onnx"); },
               {"init.onnx", "tensor 'w'", "has 4 bytes of data, expected 4000000000000", "[1000000000000]"});
  w->clear_raw_data();
  w->add_float_data(1.f);
  expect_error([&] { b.load("init.onnx"); }, {"init.onnx", "tensor 'w'", "has 1 values, expected 1000000000000"});
  w->set_dims(0, -4);
  expect_error([&] { b.load("init.onnx"); }, {"init.onnx", "tensor 'w'", "[-4]", "negative"});
  w->set_dims(0, k2to32);
  w->add_dims(k2to32);
  expect_error([&] { b.load("init.onnx"); }, {"init.onnx", "tensor 'w'", "more elements than int64"});
}

TEST(HostileModel, MaxTensorBytesRefusesLargeOutputsBeforeAllocating) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {std::string("N")});
  b.node("Relu", {"x"}, {"h"}, "", "relu1");
  b.node("Relu", {"h"}, {"y"}, "", "relu2");
  b.output("y");
  SessionOptions o;
  o.max_tensor_bytes = 4000;
  Session s(b.load("limit.onnx"), o);
  EXPECT_NO_THROW(s.run({{"x", test::iota_tensor({1000})}}));
  expect_error(
      [&] {
        s.run({{"x", test::iota_tensor({1001})}});
      },
      {"limit.onnx", "node 'relu1' (Relu)", "output 0 'h'", "float32 [1001]", "4004 bytes",
       "above the limit of 4000 bytes"});
  EXPECT_GT(SessionOptions().max_tensor_bytes, size_t(1) << 20);
  EXPECT_EQ(SessionOptions().max_tensor_bytes, default_max_tensor_bytes());
  EXPECT_LE(default_max_tensor_bytes(), usable_memory_bytes());
}

TEST(HostileModel, ConstantFoldingRespectsTheLimit) {
  // The folded Expand would be 40 KB; with a 4 KB limit it is left to run time, which refuses it.
  Model m = folded_expand_then_slice({10000}).load("fold.onnx");
  SessionOptions o;
  o.max_tensor_bytes = 4096;
  Session s(m, o);
  EXPECT_EQ(s.execution_plan().size(), 2u);
  expect_error([&] { s.run({}); }, {"fold.onnx", "expand_big", "float32 [10000]", "above the limit"});
  Session unlimited(m);
  EXPECT_TRUE(unlimited.execution_plan().empty());
}
