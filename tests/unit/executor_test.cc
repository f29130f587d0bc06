// The executor (runtime/executor.h): a plan built for any Graph, run with bound inputs; a kernel
// runs a subgraph through the same executor, which reads outer-scope values from the enclosing
// frame; profile rows carry the subgraph's scope.
#include <gtest/gtest.h>

#include "ops/registry.h"
#include "runtime/executor.h"
#include "runtime/prepare.h"

using namespace pointrt;

namespace {

Node make_node(Graph& g, const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
               const std::vector<std::string>& outputs, int64_t opset = 14) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.opset = opset;
  n.attrs.owner = n.describe();
  for (const auto& i : inputs) {
    int id = g.find_value(i);
    n.inputs.push_back(id >= 0 ? id : g.add_value(i));
  }
  for (const auto& o : outputs) n.outputs.push_back(g.add_value(o));
  return n;
}

Tensor floats(std::vector<float> v) {
  Tensor t = Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.data_as<float>());
  return t;
}

class HeapAllocatorForTests : public Allocator {
 public:
  Tensor allocate(DType dtype, const Shape& shape) override { return Tensor::allocate(dtype, shape); }
};

// A test operator "RunBody": runs its `body` graph attribute (no inputs of its own) with the
// executor, the enclosing scope being the running frame, and returns the body's first output.
class RunBodyKernel : public OpKernel {
 public:
  RunBodyKernel(const Graph& body, const OpTable& table) : plan_(body, table, "test") {}
  void run(KernelContext& ctx) const override {
    RunCache cache;
    RunContext body = ctx.run_context().nested(cache, ctx.node().name + "/body");
    ctx.set_output(0, plan_.run(body, {}, ctx.frame()).at(0));
  }

 private:
  ExecutionPlan plan_;
};

// main: y = Relu(x); z = RunBody{ body: s = Add(x, y) }  (x and y read from the enclosing scope)
struct NestedModel {
  Graph main;
  std::shared_ptr<Graph> body = std::make_shared<Graph>();
  OpTable table;

  NestedModel() {
    Graph& b = *body;
    b.name = "body";
    b.nodes.push_back(make_node(b, "add", "Add", {"x", "y"}, {"s"}));
    b.outputs.push_back(b.find_value("s"));
    b.compact();

    main.name = "main";
    main.inputs.push_back(main.add_value("x"));
    main.nodes.push_back(make_node(main, "relu", "Relu", {"x"}, {"y"}));
    Node run = make_node(main, "run", "RunBody", {}, {"z"}, 1);
    Attribute a;
    a.kind = Attribute::Kind::kGraph;
    a.g = body;
    run.attrs.items["body"] = a;
    main.nodes.push_back(run);
    main.outputs.push_back(main.find_value("z"));
    main.compact();

    table.add(*op_table().find("", "Relu", 14));
    table.add(*op_table().find("", "Add", 14));
    const OpTable* self = &table;
    table.add({"", "RunBody", 1, 100, {}, [self](const KernelInit& init) -> std::unique_ptr<OpKernel> {
                 return std::make_unique<RunBodyKernel>(*init.attrs().items.at("body").g, *self);
               }});
  }
};

}  // namespace

TEST(Executor, RunsAPlanWithBoundInputs) {
  Graph g;
  g.inputs.push_back(g.add_value("x"));
  g.nodes.push_back(make_node(g, "relu", "Relu", {"x"}, {"y"}));
  g.outputs.push_back(g.find_value("y"));
  g.compact();
  ExecutionPlan plan(g, op_table(), "unit.onnx");
  EXPECT_TRUE(plan.outer_scope_values().empty());
  HeapAllocatorForTests alloc;
  RunCache cache;
  RunContext rc(alloc, cache);
  auto out = plan.run(rc, {floats({-1, 2, -3})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data_as<float>()[0], 0.0f);
  EXPECT_EQ(out[0].data_as<float>()[1], 2.0f);
  try {
    plan.run(rc, {});
    FAIL() << "expected an error for a missing input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unit.onnx"), std::string::npos) << e.what();
  }
}

TEST(Executor, SubgraphReadsOuterScopeValuesThroughTheSameExecutor) {
  NestedModel m;
  EXPECT_EQ(outer_scope_names(*m.body), (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(outer_scope_names(m.main).empty());
  // The RunBody node reads x and y through its subgraph: both stay alive until it has run.
  auto read = values_read_by(m.main, m.main.nodes[1]);
  EXPECT_EQ(read, (std::vector<int>{m.main.find_value("x"), m.main.find_value("y")}));

  ExecutionPlan plan(m.main, m.table, "nested.onnx");
  EXPECT_TRUE(plan.nodes()[0].free_after.empty()) << "y is read later by the subgraph";
  HeapAllocatorForTests alloc;
  RunCache cache;
  std::vector<NodeProfile> rows;
  RunContext rc(alloc, cache, &rows);
  auto out = plan.run(rc, {floats({-1, 2})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data_as<float>()[0], -1.0f);  // -1 + relu(-1)
  EXPECT_EQ(out[0].data_as<float>()[1], 4.0f);   // 2 + relu(2)
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.node_name);
  EXPECT_EQ(names, (std::vector<std::string>{"relu", "run/body/add", "run"}));
}

TEST(Executor, MissingOuterScopeValueIsAClearError) {
  NestedModel m;
  ExecutionPlan body(*m.body, m.table, "nested.onnx");
  HeapAllocatorForTests alloc;
  RunCache cache;
  RunContext rc(alloc, cache);
  try {
    body.run(rc, {});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("graph 'body' reads 'x' from an enclosing scope"), std::string::npos) << msg;
  }
}

TEST(Prepare, PassListIsNamedAndOrdered) {
  std::vector<std::string> names;
  for (const auto& p : prepare_passes(SessionOptions{}, "m.onnx")) names.push_back(p.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"check-supported", "float16-via-float32", "prepare-subgraphs", "fold-constants",
                                      "eliminate-common-subexpressions", "fold-if", "tensor-fold-expand-into-gather",
                                      "quant-qdq", "nn-fuse-conv", "fold-constants", "eliminate-dead-nodes"}));
  SessionOptions plain;
  plain.optimize = false;
  names.clear();
  for (const auto& p : prepare_passes(plain, "m.onnx")) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"check-supported", "float16-via-float32", "prepare-subgraphs",
                                             "eliminate-dead-nodes"}));
}

TEST(Registry, FamiliesRegisterRowsPassesSchemasAndImportersOnce) {
  const Registry& r = registry();
  EXPECT_EQ(r.families,
            (std::vector<std::string>{"onnx/control", "onnx/elementwise", "onnx/tensor", "onnx/reduce", "onnx/quant",
                                      "onnx/nn", "onnx/image", "onnx/rnn", "onnx/signal", "onnx/strings",
                                      "onnx/training", "onnx/sequence", "pointnet2", "sparse", "pose", "detect"}));
  EXPECT_EQ(r.importers.size(), 1u);  // NVIDIA scn.onnx (sparse)
  ASSERT_EQ(r.passes.size(), 4u);
  EXPECT_EQ(r.passes[0].name, "fold-if");
  EXPECT_EQ(r.passes[1].name, "tensor-fold-expand-into-gather");
  EXPECT_EQ(r.passes[2].name, "quant-qdq");
  EXPECT_EQ(r.passes[3].name, "nn-fuse-conv");
  EXPECT_NE(r.table.find("pointrt", "BallQuery", 1), nullptr);
  // The pointrt-domain schemas are known to ONNX (shape inference at import uses them).
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("BallQuery", 1, "pointrt"), nullptr);
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("MeanShift", 1, "pointrt"), nullptr);
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("BoxNMS", 1, "pointrt"), nullptr);
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("QLinearAdd", 1, "com.microsoft"), nullptr);
  EXPECT_EQ(&registry(), &r);
}
