// Loader, session and bad-input behaviour of the runtime core.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "graph/onnx_import.h"
#include "io/npy.h"
#include "io/tensor_compare.h"
#include "support/expect_error.h"
#include "support/model_builder.h"
#include "unit/control_flow_util.h"

using namespace pointrt;
using pointrt::test::expect_error_with;
using pointrt::test::ModelBuilder;

namespace {

ModelBuilder relu_model() {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {std::string("B"), int64_t(4)});
  b.node("Relu", {"x"}, {"y"}, "", "relu1");
  b.output("y", DType::kFloat32);
  return b;
}

}  // namespace

TEST(Loader, EmptyGarbageAndTruncatedFilesAreClearErrors) {
  expect_error_with([] { Model::load_from_bytes("", 0, "", "empty.onnx"); }, {"empty.onnx", "empty"});
  std::string garbage = "this is not a protobuf at all \xff\xff\xff";
  expect_error_with([&] { Model::load_from_bytes(garbage.data(), garbage.size(), "", "garbage.onnx"); },
                    {"garbage.onnx", "not a valid ONNX"});
  std::string full = relu_model().bytes();
  for (size_t cut : {full.size() / 3, full.size() / 2, full.size() - 1}) {
    try {
      Model m = Model::load_from_bytes(full.data(), cut, "", "truncated.onnx");
      Session s(m);  // if the prefix happens to parse, it must still fail cleanly or run
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("truncated.onnx"), std::string::npos) << e.what();
    }
  }
  expect_error_with([] { Model::load("/nonexistent/model.onnx"); }, {"/nonexistent/model.onnx", "cannot open"});
}

// ONNX's shape inference (in a child process) types the values the file leaves untyped: for a
// graph without subgraphs after conversion (the two overlap), with subgraphs before it. Both
// must reach the intermediate values, the outputs and the values inside a branch.
TEST(Loader, InferredShapesReachIntermediatesOutputsAndBranches) {
  auto shape_of = [](const Graph& g, const std::string& name) {
    const int id = g.find_value(name);
    EXPECT_GE(id, 0) << name;
    if (id < 0 || !g.values[id].has_shape) return std::string("none");
    std::string s = dtype_name(g.values[id].dtype);
    for (const Dim& d : g.values[id].shape) s += " " + (d.is_fixed() ? std::to_string(d.value) : d.symbol);
    return s;
  };
  for (bool with_if : {false, true}) {
    SCOPED_TRACE(with_if ? "with an If" : "without subgraphs");
    ModelBuilder b(13);
    b.input("x", DType::kFloat32, {int64_t(2), int64_t(3)});
    ModelBuilder::attr_ints(b.node("Transpose", {"x"}, {"t"}), "perm", {1, 0});
    b.node("Relu", {"t"}, {"r"});
    if (with_if) {
      b.input("cond", DType::kBool, {});
      onnx::GraphProto then_g, else_g;
      then_g.set_name("then");
      else_g.set_name("else");
      test::sub_node(then_g, "Neg", {"r"}, {"inner"});
      test::sub_node(then_g, "Abs", {"inner"}, {"t_out"});
      test::sub_value(then_g.mutable_output(), "t_out", DType::kFloat32);
      test::sub_node(else_g, "Identity", {"r"}, {"e_out"});
      test::sub_value(else_g.mutable_output(), "e_out", DType::kFloat32);
      auto& n = b.node("If", {"cond"}, {"y"}, "", "if0");
      test::attr_graph(n, "then_branch", then_g);
      test::attr_graph(n, "else_branch", else_g);
    } else {
      b.node("Sigmoid", {"r"}, {"y"});
    }
    b.output("y");  // untyped in the file
    Model m = b.load("typed.onnx");
    const Graph& g = m.impl()->graph;
    EXPECT_EQ(shape_of(g, "t"), "float32 3 2");
    EXPECT_EQ(shape_of(g, "r"), "float32 3 2");
    EXPECT_EQ(shape_of(g, "y"), "float32 3 2");
    if (with_if) {
      const Node* if_node = nullptr;
      for (const Node& n : g.nodes) if_node = n.op_type == "If" ? &n : if_node;
      ASSERT_NE(if_node, nullptr);
      EXPECT_EQ(shape_of(*if_node->attrs.items.at("then_branch").g, "inner"), "float32 3 2");
    }
    EXPECT_TRUE(m.impl()->import_notes.empty()) << m.impl()->import_notes.front();
  }
}

TEST(Loader, MissingNodeInputNamesNodeAndTensor) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {int64_t(2)});
  b.node("Relu", {"nope"}, {"y"}, "", "relu_missing");
  b.output("y");
  expect_error_with([&] { b.load("m.onnx"); }, {"m.onnx", "relu_missing", "'nope'"});
}

TEST(Loader, UnknownOperatorsAreAllReportedTogether) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {int64_t(2)});
  b.node("FancyOp", {"x"}, {"a"}, "", "first_unknown");
  b.node("OtherOp", {"a"}, {"y"}, "", "second_unknown");
  b.output("y");
  Model m = b.load("m.onnx");
  expect_error_with([&] { Session s(m); },
                    {"2 node(s) cannot run", "first_unknown", "FancyOp", "second_unknown", "OtherOp"});
}

TEST(Loader, UnimportedDomainIsAnError) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {int64_t(2)});
  b.node("Relu", {"x"}, {"y"}, "com.example", "r");
  b.output("y");
  expect_error_with([&] { b.load("m.onnx"); }, {"com.example", "opset_import"});
}

TEST(Loader, InternalAttributeFromAFileIsAnError) {
  // pointrt's passes mark rewritten nodes with __pointrt_* attributes (layouts, fused epilogues); a
  // file must not be able to set them.
  ModelBuilder b;
  b.input("x", DType::kFloat32, {int64_t(1), int64_t(1), int64_t(4), int64_t(4)});
  auto& pool = b.node("MaxPool", {"x"}, {"y"}, "", "pool_with_marks");
  ModelBuilder::attr_ints(pool, "kernel_shape", {2, 2});
  ModelBuilder::attr_int(pool, "__pointrt_int8_nhwc", 1);
  b.output("y", DType::kFloat32);
  expect_error_with([&] { b.load("marks.onnx"); },
                    {"marks.onnx", "pool_with_marks", "'__pointrt_int8_nhwc'", "reserved"});
  // A look-alike that is not the prefix is an ordinary (unknown, ignored) attribute.
  ModelBuilder ok;
  ok.input("x", DType::kFloat32, {int64_t(2)});
  ModelBuilder::attr_int(ok.node("Relu", {"x"}, {"y"}, "", "r"), "_pointrt_x", 1);
  ok.output("y", DType::kFloat32);
  EXPECT_NO_THROW(ok.load("ok.onnx"));
}

TEST(Loader, ExternalDataIsReadRelativeToTheModel) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "pointrt_external_test";
  fs::create_directories(dir);
  Tensor w = test::iota_tensor({4}, -2.f);
  {
    std::ofstream f(dir / "weights.bin", std::ios::binary);
    std::string pad(16, '\0');
    f.write(pad.data(), 16);
    f.write(static_cast<const char*>(w.data()), static_cast<std::streamsize>(w.nbytes()));
  }
  ModelBuilder b;
  b.node("Relu", {"w"}, {"y"}, "", "relu_w");
  b.output("y");
  auto* init = b.proto().mutable_graph()->add_initializer();
  init->set_name("w");
  init->set_data_type(onnx::TensorProto::FLOAT);
  init->add_dims(4);
  init->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [&](const char* k, const std::string& v) {
    auto* e = init->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", "weights.bin");
  kv("offset", "16");
  kv("length", "16");
  {
    std::ofstream f(dir / "model.onnx", std::ios::binary);
    std::string bytes = b.bytes();
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  Session s(Model::load((dir / "model.onnx").string()));
  auto out = s.run({});
  ASSERT_EQ(out.size(), 1u);
  const float* y = out[0].data_as<float>();
  EXPECT_EQ(y[0], 0.f);
  EXPECT_EQ(y[3], 1.f);
  // The constant subgraph folded away at prepare.
  EXPECT_TRUE(s.execution_plan().empty());

  kv("location", "../escape.bin");
  init->mutable_external_data()->DeleteSubrange(0, 3);
  kv("location", "missing.bin");
  std::string bytes = b.bytes();
  expect_error_with([&] { Model::load_from_bytes(bytes.data(), bytes.size(), dir.string(), "ext.onnx"); },
                    {"ext.onnx", "'w'", "missing.bin"});
}

TEST(Session, FeedsAreCheckedByNameDtypeRankAndShape) {
  Model m = relu_model().load("relu.onnx");
  Session s(m);
  Tensor ok = test::iota_tensor({3, 4}, -5.f);
  auto out = s.run({{"x", ok}});
  EXPECT_EQ(out[0].shape(), (Shape{3, 4}));
  expect_error_with([&] { s.run({}); }, {"relu.onnx", "input 'x'", "not fed"});
  expect_error_with([&] { s.run({{"x", ok}, {"z", ok}}); }, {"'z'", "not an input", "x"});
  Tensor wrong_type = Tensor::zeros(DType::kInt64, {3, 4});
  expect_error_with([&] { s.run({{"x", wrong_type}}); }, {"input 'x'", "float32", "int64"});
  Tensor wrong_rank = test::iota_tensor({12});
  expect_error_with([&] { s.run({{"x", wrong_rank}}); }, {"input 'x'", "rank 2", "rank 1"});
  Tensor wrong_dim = test::iota_tensor({3, 5});
  expect_error_with([&] { s.run({{"x", wrong_dim}}); }, {"input 'x'", "dimension 1", "must be 4", "got 5"});
}

TEST(Session, SymbolicDimensionsMustAgreeAcrossInputs) {
  ModelBuilder b;
  b.input("a", DType::kFloat32, {std::string("N"), int64_t(3)});
  b.input("c", DType::kFloat32, {std::string("N")});
  b.node("Relu", {"a"}, {"ya"}, "", "ra");
  b.node("Relu", {"c"}, {"yc"}, "", "rc");
  b.output("ya");
  b.output("yc");
  Session s(b.load());
  EXPECT_NO_THROW(s.run({{"a", test::iota_tensor({5, 3})}, {"c", test::iota_tensor({5})}}));
  EXPECT_NO_THROW(s.run({{"a", test::iota_tensor({0, 3})}, {"c", test::iota_tensor({0})}}));
  expect_error_with(
      [&] {
        s.run({{"a", test::iota_tensor({5, 3})}, {"c", test::iota_tensor({6})}});
      },
      {"'N'", "6", "5"});
}

TEST(Session, ConcurrentRunsGiveIdenticalResults) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {std::string("N")});
  b.node("Relu", {"x"}, {"h"}, "", "r1");
  b.node("Relu", {"h"}, {"y"}, "", "r2");
  b.output("y");
  Session s(b.load());
  const int kThreads = 4, kRuns = 50;
  std::vector<std::thread> threads;
  std::vector<int> bad(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        int64_t n = 1000 + 37 * t + r;
        Tensor x = test::iota_tensor({n}, -float(n) / 2);
        Tensor y = s.run({{"x", x}})[0];
        for (int64_t i = 0; i < n; ++i) {
          float e = std::max(0.f, x.data_as<float>()[i]);
          if (y.data_as<float>()[i] != e) {
            ++bad[t];
            break;
          }
        }
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(bad[t], 0) << "thread " << t;
}

TEST(Session, OutputsIntoCallerBuffersAndZeroCopyFeeds) {
  Session s(relu_model().load());
  std::vector<float> in = {-1, 2, -3, 4}, out(4, 7.f);
  std::vector<Tensor> outs = {Tensor::wrap(DType::kFloat32, {1, 4}, out.data())};
  s.run({{"x", Tensor::wrap(DType::kFloat32, {1, 4}, in.data())}}, outs);
  EXPECT_EQ(out, (std::vector<float>{0, 2, 0, 4}));
  std::vector<Tensor> bad = {Tensor::wrap(DType::kFloat32, {4}, out.data())};
  expect_error_with(
      [&] {
        s.run({{"x", Tensor::wrap(DType::kFloat32, {1, 4}, in.data())}}, bad);
      },
      {"output 'y'", "[1, 4]", "[4]"});
}

TEST(Npy, RoundTripsAndRejectsGarbage) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path();
  Tensor a = test::iota_tensor({2, 3, 5}, 1.5f);
  Tensor b = Tensor::zeros(DType::kInt64, {7});
  b.data_as<int64_t>()[3] = -42;
  write_npy((dir / "a.npy").string(), a);
  Tensor a2 = read_npy((dir / "a.npy").string());
  EXPECT_TRUE(compare_tensors(a2, a, 0, 0).ok);
  write_npz((dir / "ab.npz").string(), {{"a", a}, {"b", b}});
  auto m = read_npz((dir / "ab.npz").string());
  ASSERT_EQ(m.size(), 2u);
  EXPECT_TRUE(compare_tensors(m["a"], a, 0, 0).ok);
  EXPECT_EQ(m["b"].data_as<int64_t>()[3], -42);
  std::string junk = "\x93NUMPY\x01\x00\x10\x00{'descr': '<f4'";
  expect_error_with([&] { parse_npy(junk.data(), junk.size(), "junk.npy"); }, {"junk.npy"});
  Tensor scalar = Tensor::allocate(DType::kFloat32, {});
  *scalar.data_as<float>() = 3.f;
  std::string sb = npy_bytes(scalar);
  Tensor s2 = parse_npy(sb.data(), sb.size(), "scalar");
  EXPECT_EQ(s2.rank(), 0u);
  EXPECT_EQ(*s2.data_as<float>(), 3.f);
}

TEST(Compare, ReportsWorstElementAndToleranceRules) {
  Tensor a = test::iota_tensor({4}), b = test::iota_tensor({4});
  b.data_as<float>()[2] += 0.5f;
  CompareResult r = compare_tensors(a, b, 1e-3, 1e-3);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_NE(r.message.find("[2]"), std::string::npos) << r.message;
  EXPECT_TRUE(compare_tensors(a, b, 0.6, 0).ok);
  EXPECT_FALSE(compare_tensors(a, test::iota_tensor({2, 2}), 1, 1).ok);
}

TEST(Session, OutputViewingACallerBufferIsCopied) {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {int64_t(2), int64_t(3)});
  b.initializer("shape", [] {
    Tensor s = Tensor::allocate(DType::kInt64, {1});
    s.data_as<int64_t>()[0] = 6;
    return s;
  }());
  b.node("Reshape", {"x", "shape"}, {"y"}, "", "flatten");
  b.output("y");
  Session s(b.load());
  std::vector<float> in = {1, 2, 3, 4, 5, 6};
  Tensor y = s.run({{"x", Tensor::wrap(DType::kFloat32, {2, 3}, in.data())}})[0];
  EXPECT_EQ(y.shape(), (Shape{6}));
  EXPECT_NE(y.data(), static_cast<void*>(in.data()));
  in[0] = 100;
  EXPECT_EQ(y.data_as<float>()[0], 1.f);
}

// From 1 MiB on the copy is made by the run's threads in 256 KiB pieces: an odd size that ends
// inside a piece, on 1 and 3 threads, checked element by element.
TEST(Session, LargeOutputViewingACallerBufferIsCopiedWhole) {
  constexpr int64_t n = (int64_t(1) << 20) / 4 * 3 + 7;
  ModelBuilder b;
  b.input("x", DType::kFloat32, {n, int64_t(1)});
  b.initializer("shape", [] {
    Tensor s = Tensor::allocate(DType::kInt64, {1});
    s.data_as<int64_t>()[0] = n;
    return s;
  }());
  b.node("Reshape", {"x", "shape"}, {"y"}, "", "flatten");
  b.output("y");
  std::vector<float> in(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i % 1000003);
  for (int threads : {1, 3}) {
    SessionOptions o;
    o.intra_op_threads = threads;
    Session s(b.load(), o);
    Tensor y = s.run({{"x", Tensor::wrap(DType::kFloat32, {n, 1}, in.data())}})[0];
    ASSERT_EQ(y.shape(), (Shape{n}));
    EXPECT_NE(y.data(), static_cast<void*>(in.data()));
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i) differ += y.data_as<float>()[i] != in[static_cast<size_t>(i)];
    EXPECT_EQ(differ, 0) << threads << " threads";
  }
}
