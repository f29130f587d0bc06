// MatMul: broadcasting and awkward shapes against the reference, pre-packed constant weights,
// one session run from several threads, errors.
#include <gtest/gtest.h>
#include <omp.h>

#include <thread>

#include "graph/onnx_import.h"
#include "io/tensor_compare.h"
#include "onnx/onnx_pb.h"
#include "ops/onnx/reduce/matmul.h"
#include "ops/onnx/reduce/softmax.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

TEST(MatMul, MatchesReferenceOnBroadcastAndAwkwardShapes) {
  struct Case {
    Shape a, b;
  };
  const std::vector<Case> cases = {{{3}, {3}},
                                   {{4}, {4, 5}},
                                   {{2, 3, 4}, {4}},
                                   {{1, 1}, {1, 1}},
                                   {{15, 16}, {16, 17}},
                                   {{17, 15}, {15, 16}},
                                   {{0, 4}, {4, 3}},
                                   {{3, 0}, {0, 5}},
                                   {{2, 0, 3}, {3, 4}},
                                   {{2, 5, 3}, {3, 4}},
                                   {{2, 5, 3}, {2, 3, 4}},
                                   {{1, 5, 3}, {4, 3, 2}},
                                   {{4, 1, 5, 3}, {2, 3, 7}},
                                   {{3, 2}, {5, 2, 3}},
                                   {{2, 1, 3, 4, 5}, {3, 1, 5, 2}},
                                   {{65, 33}, {33, 129}},
                                   {{40, 8, 8}, {40, 8, 8}}};
  uint32_t seed = 71;
  for (const Case& c : cases)
    for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}) {
      Tensor a = random_tensor(dt, c.a, seed++), b = random_tensor(dt, c.b, seed++);
      Shape out = matmul_output_shape(c.a, c.b, "test");
      Tensor y = Tensor::allocate(dt, out), r = Tensor::allocate(dt, out);
      matmul_optimized(a, b, y);
      matmul_reference(a, b, r);
      test::expect_close(y, r, test::Tol{1e-4, 1e-4},
                         str_cat("matmul ", dtype_name(dt), " ", shape_str(c.a), " x ", shape_str(c.b)));
    }
  EXPECT_EQ(matmul_output_shape({3}, {3}, "t"), Shape{});
  EXPECT_EQ(matmul_output_shape({2, 3, 4}, {4}, "t"), (Shape{2, 3}));
  EXPECT_EQ(matmul_output_shape({4}, {2, 4, 5}, "t"), (Shape{2, 5}));
}

TEST(MatMul, ConstantWeightsArePrepackedAndStillCorrect) {
  Tensor a = random_tensor(DType::kFloat32, {2, 17, 33}, 5), w = random_tensor(DType::kFloat32, {33, 65}, 6);
  Tensor r = Tensor::allocate(DType::kFloat32, {2, 17, 65});
  matmul_reference(a, w, r);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(3);
  auto y = run_node({"MatMul", 13, {}, {a, w}, {false, true}});
  // A product this small ran on the calling thread alone; the thread count is restored after.
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(saved);
  test::expect_close(y[0], r, test::Tol{1e-4, 1e-4}, "packed matmul");
  // A kernel prepared for another shape of A falls back to sgemm.
  Tensor a2 = random_tensor(DType::kFloat32, {3, 33}, 7), r2 = Tensor::allocate(DType::kFloat32, {3, 65});
  matmul_reference(a2, w, r2);
  y = run_node({"MatMul", 13, {}, {a2, w}, {false, true}, 1, {{0, Shape{2, 17, 33}}}});
  test::expect_close(y[0], r2, test::Tol{1e-4, 1e-4}, "matmul fallback");
}

// A whole model (Gemm with constant weights -> MatMul with constant weights -> Softmax) run from
// several threads at once: the pre-packed oneDNN primitives must be safe to share.
TEST(MatMul, PackedSessionRunsConcurrently) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("g");
  auto add_value = [](onnx::ValueInfoProto* v, const char* name, std::vector<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  add_value(g->add_input(), "x", {8, 64});
  add_value(g->add_output(), "y", {8, 24});
  auto add_init = [&](const char* name, std::vector<int64_t> dims, uint32_t seed) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    Tensor r = random_tensor(DType::kFloat32, dims, seed);
    for (int64_t i = 0; i < r.numel(); ++i) t->add_float_data(r.data_as<float>()[i]);
  };
  add_init("w1", {32, 64}, 1);  // Gemm with transB: [N, K]
  add_init("b1", {32}, 2);
  add_init("w2", {32, 24}, 3);
  auto add_node = [&](const char* op, std::vector<const char*> ins, const char* out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    for (const char* i : ins) n->add_input(i);
    n->add_output(out);
    return n;
  };
  onnx::NodeProto* gemm = add_node("Gemm", {"x", "w1", "b1"}, "h");
  onnx::AttributeProto* tb = gemm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  add_node("MatMul", {"h", "w2"}, "z");
  add_node("Softmax", {"z"}, "y");
  std::string bytes = model.SerializeAsString();
  Session session(Model::load_from_bytes(bytes.data(), bytes.size()));
  Tensor x = random_tensor(DType::kFloat32, {8, 64}, 9);
  const Tensor expected = session.run({{"x", x}})[0];
  std::vector<std::thread> threads;
  std::vector<int> ok(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      bool all = true;
      for (int i = 0; i < 20; ++i) all &= compare_tensors(session.run({{"x", x}})[0], expected, 0, 0).ok;
      ok[t] = all;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_TRUE(ok[t]) << "thread " << t;
  // And the result is right: reference Gemm -> MatMul -> Softmax.
  Model loaded = Model::load_from_bytes(bytes.data(), bytes.size());
  const Graph& graph = loaded.impl()->graph;
  auto init = [&](const char* name) { return *graph.values[graph.find_value(name)].constant; };
  Tensor h = Tensor::allocate(DType::kFloat32, {8, 32}), z = Tensor::allocate(DType::kFloat32, {8, 24}),
         y = Tensor::allocate(DType::kFloat32, {8, 24});
  Tensor b1 = init("b1");
  gemm_reference(x, init("w1"), &b1, false, true, 1.f, 1.f, h);
  matmul_reference(h, init("w2"), z);
  softmax_reference(z, 8, 24, 1, false, y);
  test::expect_close(expected, y, test::Tol{1e-5, 1e-4}, "packed session");
}

TEST(MatMul, Errors) {
  Tensor a = random_tensor(DType::kFloat32, {2, 3}, 1), b = random_tensor(DType::kFloat32, {4, 5}, 2);
  expect_error_with([&] { run_node({"MatMul", 13, {}, {a, b}}); }, {"n0", "[2, 3]", "[4, 5]", "inner"});
  Tensor c = random_tensor(DType::kFloat32, {2, 3, 4}, 3), d = random_tensor(DType::kFloat32, {3, 4, 5}, 4);
  expect_error_with([&] { run_node({"MatMul", 13, {}, {c, d}}); }, {"n0", "broadcast", "[2, 3, 4]", "[3, 4, 5]"});
  Tensor s = Tensor::allocate(DType::kFloat32, {});
  expect_error_with([&] { run_node({"MatMul", 13, {}, {s, b}}); }, {"n0", "rank"});
}

}  // namespace
