// The Conv+BatchNorm+Add+Relu fusion pass: the fused result equals the unfused (and reference)
// result, concurrent runs agree, residual blocks and PointNet's ReduceMax.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ops/onnx/nn/batchnorm.h"
#include "ops/onnx/nn/conv.h"
#include "ops/onnx/nn/nn_kernels.h"
#include "unit/nn/nn_test_util.h"

namespace pointrt::nn {
namespace {

using namespace test_helpers;

// conv -> BN -> relu -> maxpool -> conv -> BN -> relu -> GAP; the fused session must equal the
// unfused one and its plan must hold no BatchNormalization or Relu.
Model conv_bn_relu_chain(int64_t c1, bool symbolic_batch) {
  ModelBuilder mb(13);
  mb.input("X", {symbolic_batch ? -1 : 1, 3, 23, 19});
  auto add_bn = [&](const std::string& p, int64_t c, uint32_t seed) {
    mb.initializer(p + "_s", random_floats({c}, seed, 0.5f, 1.5f));
    mb.initializer(p + "_b", random_floats({c}, seed + 1));
    mb.initializer(p + "_m", random_floats({c}, seed + 2));
    mb.initializer(p + "_v", random_floats({c}, seed + 3, 0.5f, 2.f));
  };
  mb.initializer("W1", random_floats({c1, 3, 3, 3}, 10, -0.3f, 0.3f));
  mb.initializer("B1", random_floats({c1}, 11));
  add_bn("bn1", c1, 20);
  mb.initializer("W2", random_floats({32, c1, 3, 3}, 30, -0.1f, 0.1f));
  add_bn("bn2", 32, 40);
  auto* c = mb.node("Conv", {"X", "W1", "B1"}, {"c1"}, "conv1");
  ModelBuilder::ints(c, "pads", {1, 1, 1, 1});
  ModelBuilder::ints(c, "strides", {2, 2});
  mb.node("BatchNormalization", {"c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"}, {"n1"}, "bn1");
  mb.node("Relu", {"n1"}, {"r1"}, "relu1");
  auto* mp = mb.node("MaxPool", {"r1"}, {"p1"}, "pool1");
  ModelBuilder::ints(mp, "kernel_shape", {3, 3});
  ModelBuilder::ints(mp, "strides", {2, 2});
  ModelBuilder::ints(mp, "pads", {1, 1, 1, 1});
  auto* c2 = mb.node("Conv", {"p1", "W2"}, {"c2"}, "conv2");
  ModelBuilder::ints(c2, "pads", {1, 1, 1, 1});
  mb.node("BatchNormalization", {"c2", "bn2_s", "bn2_b", "bn2_m", "bn2_v"}, {"n2"}, "bn2");
  mb.node("Relu", {"n2"}, {"r2"}, "relu2");
  mb.node("GlobalAveragePool", {"r2"}, {"Y"}, "gap");
  mb.output("Y");
  mb.output("r1");  // a graph output in the middle stays plain
  return mb.build();
}

TEST(NnFusion, ConvBatchNormReluFoldsAndMatchesUnfused) {
  for (int64_t c1 : {16, 24}) {  // 16: blocked edges; 24: not a multiple of the block
    for (bool sym : {false, true}) {
      SCOPED_TRACE(str_cat("c1=", c1, " symbolic=", sym));
      Model m = conv_bn_relu_chain(c1, sym);
      SessionOptions plain;
      plain.optimize = false;
      Session fused(m), unfused(m, plain);
      auto plan = fused.execution_plan();
      std::string all;
      for (auto& p : plan) all += p + " ";
      EXPECT_EQ(all.find("BatchNormalization"), std::string::npos) << all;
      EXPECT_EQ(all.find("Relu"), std::string::npos) << all;
      EXPECT_NE(all.find("FusedConv:conv1"), std::string::npos) << all;
      EXPECT_NE(all.find("FusedConv:conv2"), std::string::npos) << all;
      for (int64_t batch : {1, 2}) {
        if (!sym && batch == 2) continue;
        Tensor x = random_floats({batch, 3, 23, 19}, 99 + batch);
        auto a = fused.run({{"X", x}});
        auto b = unfused.run({{"X", x}});
        expect_close(a[0], b[0], Tol{1e-4f, 1e-4f}.finite_only());
        expect_close(a[1], b[1], Tol{1e-4f, 1e-4f}.finite_only());
      }
    }
  }
}

// A prepared session is run from several threads at once; each new input shape builds its
// primitives under the cache's mutex, and per-thread buffers keep the runs apart.
TEST(NnFusion, ConcurrentRunsAgree) {
  Model m = conv_bn_relu_chain(16, true);
  Session s(m);
  std::vector<Tensor> inputs, expected;
  for (int64_t b = 1; b <= 4; ++b) {
    inputs.push_back(random_floats({b, 3, 23, 19}, 50 + b));
    expected.push_back(s.run({{"X", inputs.back()}})[0]);
  }
  Session fresh(m);  // nothing cached yet for batch > 1
  std::vector<std::thread> threads;
  std::vector<std::vector<Tensor>> got(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 3; ++rep)
        for (size_t i = 0; i < inputs.size(); ++i) got[t].push_back(fresh.run({{"X", inputs[(i + t) % 4]}})[0]);
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t)
    for (size_t k = 0; k < got[t].size(); ++k)
      expect_close(got[t][k], expected[(k % 4 + t) % 4], Tol{0.f, 0.f}.finite_only());
}

// The residual Add cannot run unfused in this family alone (Add is the elementwise family's),
// so the pass is applied to the graph directly and the FusedConv kernel is compared with
// reference conv + add + relu.
class MapAllocator : public Allocator {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
};

// Runs an optimised graph node by node (for graphs whose unfused form needs operators of
// other families, which check_supported would refuse in this family's build).
std::vector<Tensor> run_graph_by_hand(const Graph& g, const std::map<std::string, Tensor>& feeds) {
  MapAllocator alloc;
  RunCache cache;
  std::vector<Tensor> slots(g.values.size());
  for (size_t v = 0; v < g.values.size(); ++v)
    if (g.values[v].constant) slots[v] = *g.values[v].constant;
  for (auto& [name, t] : feeds) slots[g.find_value(name)] = t;
  for (const Node& n : g.nodes) {
    const OpEntry* e = op_table().find(n.domain, n.op_type, n.opset);
    if (!e) throw Error("no kernel for " + n.op_type);
    auto k = e->factory(KernelInit{n, g});
    std::vector<const Tensor*> ins;
    for (int v : n.inputs) ins.push_back(v >= 0 ? &slots[v] : nullptr);
    std::vector<Tensor> outs(n.outputs.size());
    KernelContext ctx(n, ins, outs, alloc, cache);
    k->run(ctx);
    for (size_t i = 0; i < outs.size(); ++i) slots[n.outputs[i]] = outs[i];
  }
  return slots;
}

TEST(NnFusion, ResidualAddReluBecomesSumPostOp) {
  // (channels, dilation of conv_b): 64 channels with dilation 2 runs conv_b as space-to-batch
  // Winograd with the residual sum, on blocked edges.
  for (auto [ch, dil] : std::vector<std::pair<int64_t, int64_t>>{{16, 1}, {64, 2}}) {
    SCOPED_TRACE(str_cat("channels ", ch, " dilation ", dil));
    int64_t hh = dil == 1 ? 9 : 10, ww = dil == 1 ? 7 : 12;
    ModelBuilder mb(13);
    mb.input("X", {1, ch, hh, ww});
    Tensor w1 = random_floats({ch, ch, 3, 3}, 1, -0.2f, 0.2f), w2 = random_floats({ch, ch, 3, 3}, 2, -0.1f, 0.1f);
    mb.initializer("W1", w1);
    mb.initializer("W2", w2);
    auto* a = mb.node("Conv", {"X", "W1"}, {"a"}, "conv_a");
    ModelBuilder::ints(a, "pads", {1, 1, 1, 1});
    auto* b = mb.node("Conv", {"a", "W2"}, {"b"}, "conv_b");
    ModelBuilder::ints(b, "pads", {dil, dil, dil, dil});
    ModelBuilder::ints(b, "dilations", {dil, dil});
    mb.node("Add", {"b", "a"}, {"s"}, "add");
    mb.node("Relu", {"s"}, {"Y"}, "relu");
    mb.output("Y");
    Model m = mb.build();
    Graph g = m.impl()->graph;
    ASSERT_TRUE(fuse_conv_batchnorm_relu(g));
    g.compact();
    ASSERT_EQ(g.nodes.size(), 2u);
    EXPECT_EQ(g.nodes[1].op_type, "FusedConv");
    EXPECT_EQ(g.nodes[1].inputs.size(), 4u);
    EXPECT_EQ(g.values[g.nodes[1].inputs[3]].name, "a");
    EXPECT_EQ(g.values[g.nodes[1].outputs[0]].name, "Y");
    // `a` is read twice (conv_b and the sum): not in place.
    EXPECT_EQ(g.nodes[1].attrs.get_int("__pointrt_sum_inplace", 0), 0);

    Tensor x = random_floats({1, ch, hh, ww}, 5);
    std::vector<Tensor> slots = run_graph_by_hand(g, {{"X", x}});
    // Blocked edges may hold blocked data internally; the graph output is plain.
    Tensor y = slots[g.find_value("Y")];
    ConvAttrs ca;
    ca.pads = {1, 1, 1, 1};
    ConvGeometry geo = conv_geometry(ca, x.shape(), w1.shape(), nullptr, "ref");
    ConvAttrs cb;
    cb.pads = {dil, dil, dil, dil};
    cb.dilations = {dil, dil};
    ConvGeometry geo_b = conv_geometry(cb, x.shape(), w2.shape(), nullptr, "ref");
    Tensor ra = Tensor::allocate(DType::kFloat32, geo.output_shape()),
           rb = Tensor::allocate(DType::kFloat32, geo.output_shape());
    conv_ref(geo, x.data_as<float>(), w1.data_as<float>(), nullptr, ra.data_as<float>());
    conv_ref(geo_b, ra.data_as<float>(), w2.data_as<float>(), nullptr, rb.data_as<float>());
    for (int64_t i = 0; i < rb.numel(); ++i)
      rb.data_as<float>()[i] = std::max(0.f, rb.data_as<float>()[i] + ra.data_as<float>()[i]);
    expect_close(y, rb, Tol{3e-4f, 3e-4f}.finite_only());
  }
}

// The same residual block through Session, fused against unfused. Add belongs to the elementwise
// family: until that family is in the build this test is skipped.
TEST(NnFusion, ResidualBlockSessionMatchesUnfused) {
  if (!op_table().find("", "Add", 13)) GTEST_SKIP() << "Add is not in this build's operator table";
  ModelBuilder mb(13);
  mb.input("X", {1, 32, 14, 10});
  for (const char* w : {"W1", "W2"}) mb.initializer(w, random_floats({32, 32, 3, 3}, w[1], -0.1f, 0.1f));
  for (const char* p : {"bn_s", "bn_b", "bn_m", "bn_v"}) mb.initializer(p, random_floats({32}, p[3], 0.5f, 1.5f));
  auto* a = mb.node("Conv", {"X", "W1"}, {"a"}, "conv_a");
  ModelBuilder::ints(a, "pads", {1, 1, 1, 1});
  mb.node("Relu", {"a"}, {"ra"}, "relu_a");
  auto* b = mb.node("Conv", {"ra", "W2"}, {"b"}, "conv_b");
  ModelBuilder::ints(b, "pads", {1, 1, 1, 1});
  mb.node("BatchNormalization", {"b", "bn_s", "bn_b", "bn_m", "bn_v"}, {"bn"}, "bn_b");
  mb.node("Add", {"bn", "X"}, {"sum"}, "add");
  mb.node("Relu", {"sum"}, {"Y"}, "relu_out");
  mb.output("Y");
  Model m = mb.build();
  SessionOptions plain;
  plain.optimize = false;
  Session fused(m), unfused(m, plain);
  std::string all;
  for (auto& p : fused.execution_plan()) all += p + " ";
  EXPECT_EQ(all, "FusedConv:conv_a FusedConv:conv_b ") << all;
  Tensor x = random_floats({1, 32, 14, 10}, 3);
  expect_close(fused.run({{"X", x}})[0], unfused.run({{"X", x}})[0], Tol{1e-4f, 1e-4f}.finite_only());
}

// PointNet: shared MLP then max over points (ReduceMax, keepdims 0) -> GlobalMaxPool [N, C].
// When the conv output has no other reader the max is folded into the conv (chunked running max);
// when it is also a graph output it stays, and the ReduceMax becomes a GlobalMaxPool.
TEST(NnFusion, PointNetReduceMaxBecomesGlobalMax) {
  for (int variant = 0; variant < 4; ++variant) {
    int opset = variant % 2 ? 18 : 13;
    bool conv_output_too = variant >= 2;
    SCOPED_TRACE(str_cat("opset ", opset, conv_output_too ? ", conv output also a graph output" : ""));
    ModelBuilder mb(opset);
    mb.input("X", {2, 3, 5001});  // 5001 points: two 2048-point chunks and a tail
    Tensor w1 = random_floats({64, 3, 1}, 1), w2 = random_floats({128, 64, 1}, 2, -0.2f, 0.2f);
    mb.initializer("W1", w1);
    mb.initializer("W2", w2);
    mb.node("Conv", {"X", "W1"}, {"a"}, "c1");
    mb.node("Relu", {"a"}, {"r"}, "relu");
    mb.node("Conv", {"r", "W2"}, {"b"}, "c2");
    onnx::NodeProto* rm;
    if (opset < 18) {
      rm = mb.node("ReduceMax", {"b"}, {"Y"}, "max");
      ModelBuilder::ints(rm, "axes", {-1});
    } else {
      Tensor axes = Tensor::allocate(DType::kInt64, {1});
      axes.data_as<int64_t>()[0] = 2;
      auto* tp = mb.graph->add_initializer();
      tp->set_name("axes");
      tp->set_data_type(7);
      tp->add_dims(1);
      tp->set_raw_data(std::string(static_cast<const char*>(axes.data()), 8));
      rm = mb.node("ReduceMax", {"b", "axes"}, {"Y"}, "max");
    }
    ModelBuilder::int1(rm, "keepdims", 0);
    mb.output("Y");
    if (conv_output_too) mb.output("b");
    // Shapes as an exporter declares them: opset 18 is newer than the ONNX library's shape
    // inference, so the pass must work from declared value_info alone.
    for (auto [name, channels] : {std::pair<const char*, int64_t>{"a", 64}, {"r", 64}, {"b", 128}}) {
      auto* vi = mb.graph->add_value_info();
      vi->set_name(name);
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(1);
      for (int64_t d : {int64_t(2), channels, int64_t(5001)})
        vi->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    }
    Model m = mb.build();
    Graph g = m.impl()->graph;
    ASSERT_TRUE(fuse_conv_batchnorm_relu(g));
    g.compact();
    if (conv_output_too) {
      ASSERT_EQ(g.nodes.size(), 3u);
      EXPECT_EQ(g.nodes[2].op_type, "GlobalMaxPool");
    } else {
      ASSERT_EQ(g.nodes.size(), 2u);
      EXPECT_EQ(g.nodes[1].op_type, "FusedConv");
      EXPECT_EQ(g.nodes[1].attrs.get_int("__pointrt_global_max", 0), 1);
      EXPECT_EQ(g.nodes[1].attrs.get_int("__pointrt_src_blocked", 0), 1);  // 64 channels arrive blocked
    }
    Tensor x = random_floats({2, 3, 5001}, 9);
    Tensor y = run_graph_by_hand(g, {{"X", x}})[g.find_value("Y")];
    ASSERT_EQ(y.shape(), (Shape{2, 128}));
    ConvAttrs ca;
    ConvGeometry g1 = conv_geometry(ca, x.shape(), w1.shape(), nullptr, "ref");
    Tensor a = Tensor::allocate(DType::kFloat32, g1.output_shape());
    conv_ref(g1, x.data_as<float>(), w1.data_as<float>(), nullptr, a.data_as<float>());
    for (int64_t i = 0; i < a.numel(); ++i) a.data_as<float>()[i] = std::max(0.f, a.data_as<float>()[i]);
    ConvGeometry g2 = conv_geometry(ca, a.shape(), w2.shape(), nullptr, "ref");
    Tensor b = Tensor::allocate(DType::kFloat32, g2.output_shape());
    conv_ref(g2, a.data_as<float>(), w2.data_as<float>(), nullptr, b.data_as<float>());
    Tensor ref = Tensor::allocate(DType::kFloat32, {2, 128});
    for (int64_t nc = 0; nc < 256; ++nc) {
      float mx = -INFINITY;
      for (int64_t i = 0; i < 5001; ++i) mx = std::max(mx, b.data_as<float>()[nc * 5001 + i]);
      ref.data_as<float>()[nc] = mx;
    }
    expect_close(y, ref, Tol{1e-4f, 1e-4f}.finite_only());
  }
}

TEST(NnFusion, ConvWithNonConstantWeightsIsNotFolded) {
  ModelBuilder mb(13);
  mb.input("X", {1, 3, 5, 5});
  mb.input("W", {4, 3, 3, 3});
  for (const char* p : {"s", "b", "m", "v"}) mb.initializer(p, random_floats({4}, 1, 0.5f, 1.f));
  mb.node("Conv", {"X", "W"}, {"c"}, "conv");
  mb.node("BatchNormalization", {"c", "s", "b", "m", "v"}, {"Y"}, "bn");
  mb.output("Y");
  Session s(mb.build());
  auto plan = s.execution_plan();
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[1], "BatchNormalization:bn");
}

}  // namespace
}  // namespace pointrt::nn
