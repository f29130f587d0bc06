// The NVIDIA scn.onnx import: the rewrite's structure, runs against the reference chain (float16
// features), and ordinary models left alone; a pointrt-domain Voxelize -> SparseConv ->
// ScatterDense model through Session (built with ScnBuilder's attribute helpers).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/half.h"
#include "graph/onnx_import.h"
#include "graph/scn_import.h"
#include "onnx/onnx_pb.h"
#include "unit/sparse/sparse_test_util.h"

namespace pointrt {
namespace sparse {
namespace {

using namespace test_helpers;

struct ScnBuilder {
  onnx::ModelProto model;
  onnx::GraphProto* g = model.mutable_graph();
  std::mt19937 rng{91};
  std::map<std::string, Tensor> weights;  // float32 values after half rounding

  void half_initializer(const std::string& name, Shape shape) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT16);
    for (auto d : shape) t->add_dims(d);
    Tensor f = Tensor::allocate(DType::kFloat32, shape);
    std::string raw;
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    for (int64_t i = 0; i < f.numel(); ++i) {
      uint16_t h = float_to_half(u(rng));
      f.data_as<float>()[i] = half_to_float(h);
      raw.append(reinterpret_cast<const char*>(&h), 2);
    }
    t->set_raw_data(raw);
    weights[name] = f;
  }
  static void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void integer(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void string(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  // NVIDIA's exporter writes every attribute, including the ones the rewrite ignores.
  void conv(const std::string& name, const std::string& x, const std::string& y, int64_t cin, int64_t cout,
            Shape3 in_shape, Shape3 out_shape, int subm, int inverse, const std::string& key, const std::string& act,
            Shape3 stride, Shape3 pad) {
    half_initializer(name + ".weight", {cout, 3, 3, 3, cin});
    half_initializer(name + ".bias", {cout});
    auto* n = g->add_node();
    n->set_name(name);
    n->set_op_type("SparseConvolution");
    n->add_input(x);
    n->add_input(name + ".weight");
    n->add_input(name + ".bias");
    n->add_output(y);
    integer(n, "ndim", 3);
    ints(n, "input_spatial_shape", {in_shape[0], in_shape[1], in_shape[2]});
    ints(n, "output_spatial_shape", {out_shape[0], out_shape[1], out_shape[2]});
    integer(n, "in_channels", cin);
    integer(n, "out_channels", cout);
    ints(n, "kernel_size", {3, 3, 3});
    integer(n, "output_bound", 200000);
    ints(n, "stride", {stride[0], stride[1], stride[2]});
    ints(n, "dilation", {1, 1, 1});
    ints(n, "padding", {pad[0], pad[1], pad[2]});
    integer(n, "transposed", inverse);
    integer(n, "inverse", inverse);
    ints(n, "output_padding", {0, 0, 0});
    integer(n, "groups", 1);
    integer(n, "subm", subm);
    string(n, "rulebook", key);
    string(n, "activation", act);
    ints(n, "input_shape", {-1, cin});
    ints(n, "output_shape", {-1, cout});
    string(n, "precision", "fp16");
    string(n, "output_precision", "fp16");
  }
  void simple(const std::string& op, std::vector<std::string> in, const std::string& out) {
    auto* n = g->add_node();
    n->set_name(op + "_" + out);
    n->set_op_type(op);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
  }
};

const Shape3 kScnShape{5, 8, 9}, kScnDown{3, 4, 5};
const int64_t kScnCin = 4, kScnC = 6, kScnN = 70;

// An scn.onnx in NVIDIA's format. full = with Add between sparse tensors and the Transpose /
// Reshape `dims` tail (ops of other families); otherwise Relu only, ending at ScatterDense.
std::string build_scn(ScnBuilder& b, bool full) {
  const Shape3 shape = kScnShape, down = kScnDown;
  const int64_t c_in = kScnCin, c = kScnC;
  b.g->set_name("scn");
  auto* in = b.g->add_input();
  in->set_name("0");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(kScnN);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(c_in);
  b.conv("conv0", "0", "1", c_in, c, shape, shape, 1, 0, "subm1", "ReLU", {1, 1, 1}, {0, 0, 0});
  b.conv("conv1", "1", "2", c, c, shape, shape, 1, 0, "subm1", "None", {1, 1, 1}, {0, 0, 0});
  if (full)
    b.simple("Add", {"2", "1"}, "3");
  else
    b.simple("Relu", {"2"}, "3");
  b.simple("Relu", {"3"}, "4");
  b.conv("conv2", "4", "5", c, c, shape, down, 0, 0, "spconv2", "ReLU", {2, 2, 2}, {1, 1, 1});
  b.conv("conv3", "5", "6", c, c, down, shape, 0, 1, "spconv2", "None", {1, 1, 1}, {0, 0, 0});
  if (full)
    b.simple("Add", {"6", "4"}, "7");
  else
    b.simple("Relu", {"6"}, "7");
  auto* sd = b.g->add_node();
  sd->set_name("scatter0");
  sd->set_op_type("ScatterDense");
  sd->add_input("7");
  sd->add_output("8");
  ScnBuilder::ints(sd, "input_spatial_shape", {shape[0], shape[1], shape[2]});
  ScnBuilder::string(sd, "format", "zyx");
  ScnBuilder::ints(sd, "output_shape", {1, c, shape[0], shape[1], shape[2]});
  std::string out_name = "8";
  if (full) {
    auto* tr = b.g->add_node();
    tr->set_name("transpose0");
    tr->set_op_type("Transpose");
    tr->add_input("8");
    tr->add_output("9");
    ScnBuilder::ints(tr, "dims", {0, 1, 2, 4, 3});
    auto* rs = b.g->add_node();
    rs->set_name("reshape0");
    rs->set_op_type("Reshape");
    rs->add_input("9");
    rs->add_output("10");
    ScnBuilder::ints(rs, "dims", {1, c * shape[0], shape[2], shape[1]});
    out_name = "10";
  }
  auto* out = b.g->add_output();
  out->set_name(out_name);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT16);
  auto* op = b.model.add_opset_import();
  op->set_domain("ai.onnx");
  op->set_version(11);
  b.model.set_ir_version(7);
  b.model.set_producer_name("pytorch");
  std::string bytes;
  b.model.SerializeToString(&bytes);
  return bytes;
}

TEST(ScnImport, RewriteStructure) {
  ScnBuilder b;
  build_scn(b, true);
  onnx::ModelProto m = b.model;
  std::vector<std::string> notes;
  ASSERT_TRUE(rewrite_nvidia_scn(m, notes));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("rewritten from NVIDIA scn.onnx: 4 SparseConvolution -> pointrt::SparseConv, 1 ScatterDense"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("(batch, z, y, x)"), std::string::npos) << notes[0];
  // Weights, features and outputs keep the file's float16 (prepare casts around the float32 kernels).
  for (const auto& t : m.graph().initializer())
    if (t.name().find(".weight") != std::string::npos) {
      EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT16) << t.name();
    }
  ASSERT_EQ(m.graph().input_size(), 2);
  EXPECT_EQ(m.graph().input(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT16);
  EXPECT_EQ(m.graph().input(0).type().tensor_type().shape().dim(0).dim_param(), "N");
  EXPECT_EQ(m.graph().input(1).name(), "indices");
  EXPECT_EQ(m.graph().input(1).type().tensor_type().elem_type(), onnx::TensorProto::INT32);
  EXPECT_EQ(m.graph().output(0).type().tensor_type().elem_type(), onnx::TensorProto::FLOAT16);
  std::map<std::string, const onnx::NodeProto*> by_name;
  for (const auto& n : m.graph().node()) by_name[n.name()] = &n;
  const auto& conv0 = *by_name["conv0"];
  EXPECT_EQ(conv0.domain(), "pointrt");
  EXPECT_EQ(conv0.op_type(), "SparseConv");
  ASSERT_EQ(conv0.input_size(), 4);
  EXPECT_EQ(conv0.input(1), "indices");
  ASSERT_EQ(conv0.output_size(), 2);
  std::set<std::string> attrs;
  for (const auto& a : conv0.attribute()) attrs.insert(a.name());
  EXPECT_EQ(attrs, (std::set<std::string>{"kernel_size", "stride", "padding", "dilation", "subm", "inverse", "rulebook",
                                          "activation", "input_spatial_shape", "output_spatial_shape"}));
  // conv1 reads conv0's sites; the sparse Add keeps conv1's sites; conv2 reads them.
  EXPECT_EQ(by_name["conv1"]->input(1), conv0.output(1));
  EXPECT_EQ(by_name["conv2"]->input(1), by_name["conv1"]->output(1));
  EXPECT_EQ(by_name["conv3"]->input(1), by_name["conv2"]->output(1));
  const auto& sd = *by_name["scatter0"];
  EXPECT_EQ(sd.domain(), "pointrt");
  EXPECT_EQ(sd.input(1), by_name["conv3"]->output(1));
  const auto& tr = *by_name["transpose0"];
  ASSERT_EQ(tr.attribute_size(), 1);
  EXPECT_EQ(tr.attribute(0).name(), "perm");
  EXPECT_EQ(std::vector<int64_t>(tr.attribute(0).ints().begin(), tr.attribute(0).ints().end()),
            (std::vector<int64_t>{0, 1, 2, 4, 3}));
  const auto& rs = *by_name["reshape0"];
  ASSERT_EQ(rs.input_size(), 2);
  EXPECT_EQ(rs.attribute_size(), 0);
  bool found = false;
  for (const auto& t : m.graph().initializer())
    if (t.name() == rs.input(1)) {
      found = true;
      EXPECT_EQ(t.data_type(), onnx::TensorProto::INT64);
      EXPECT_EQ(std::vector<int64_t>(t.int64_data().begin(), t.int64_data().end()),
                (std::vector<int64_t>{1, kScnC * kScnShape[0], kScnShape[2], kScnShape[1]}));
    }
  EXPECT_TRUE(found);
  bool pointrt_domain = false;
  for (const auto& o : m.opset_import()) pointrt_domain |= o.domain() == "pointrt" && o.version() == 1;
  EXPECT_TRUE(pointrt_domain);
}

// `t` (float32) rounded to float16.
Tensor to_float16(const Tensor& t) {
  Tensor h = Tensor::allocate(DType::kFloat16, t.shape());
  float32_to_half(t, h);
  return h;
}

// Run a rewritten model on float16 features, as NVIDIA's runtime feeds them, and compare with the
// chain of float32 reference kernels (on the same float16-representable inputs and weights).
void run_scn_and_compare(bool full) {
  ScnBuilder b;
  std::string bytes = build_scn(b, full);
  Model model = Model::load_from_bytes(bytes.data(), bytes.size(), "", "scn.onnx");
  const auto& notes = model.impl()->import_notes;
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("rewritten from NVIDIA scn.onnx"), std::string::npos) << notes[0];
  ASSERT_EQ(model.inputs().size(), 2u);
  EXPECT_EQ(model.inputs()[0].dtype, DType::kFloat16);
  EXPECT_EQ(model.inputs()[1].name, "indices");
  for (const char* op : {"Add", "Transpose", "Reshape"})
    if (full && op_table().find_all("", op).empty())
      GTEST_SKIP() << "ai.onnx " << op << " is not in this branch's operator table (other family); "
                   << "the rewrite structure is checked by RewriteStructure";
  Session session(model);
  const Shape3 shape = kScnShape, down = kScnDown;
  const int64_t c = kScnC;
  std::mt19937 rng(92);
  const Tensor x16 = to_float16(float_tensor({kScnN, kScnCin}, rng));
  const Tensor x = to_float32(x16);
  Tensor idx = random_sites(kScnN, 1, shape, rng);
  auto result16 = session.run({{"0", x16}, {"indices", idx}});
  ASSERT_EQ(result16.size(), 1u);
  ASSERT_EQ(result16[0].dtype(), DType::kFloat16);
  const std::vector<Tensor> result = {to_float32(result16[0])};
  // A float32 feed is refused: the file declares float16.
  EXPECT_THROW(session.run({{"0", x}, {"indices", idx}}), Error);

  TestGraph tg;
  auto attrs = [&](Shape3 in_s, int subm, int inverse, const std::string& key, const std::string& act, Shape3 st,
                   Shape3 pd) {
    std::map<std::string, Attribute> a = {{"kernel_size", ints_attr({3, 3, 3})},
                                          {"stride", ints_attr({st[0], st[1], st[2]})},
                                          {"padding", ints_attr({pd[0], pd[1], pd[2]})},
                                          {"input_spatial_shape", ints_attr({in_s[0], in_s[1], in_s[2]})},
                                          {"subm", int_attr(subm)},
                                          {"inverse", int_attr(inverse)},
                                          {"rulebook", string_attr(key)},
                                          {"activation", string_attr(act)}};
    return a;
  };
  int n0 = tg.add("SparseConv", "conv0", 4, 2, attrs(shape, 1, 0, "subm1", "ReLU", {1, 1, 1}, {0, 0, 0}));
  int n1 = tg.add("SparseConv", "conv1", 4, 2, attrs(shape, 1, 0, "subm1", "None", {1, 1, 1}, {0, 0, 0}));
  int n2 = tg.add("SparseConv", "conv2", 4, 2, attrs(shape, 0, 0, "spconv2", "ReLU", {2, 2, 2}, {1, 1, 1}));
  int n3 = tg.add("SparseConv", "conv3", 4, 2, attrs(down, 0, 1, "spconv2", "None", {1, 1, 1}, {0, 0, 0}));
  int ns = tg.add("ScatterDense", "scatter", 2, 1, {{"spatial_shape", ints_attr({shape[0], shape[1], shape[2]})}});
  RunCache cache;
  auto w = [&](const std::string& s) { return &b.weights[s]; };
  auto y1 = tg.run(*tg.kernel(n0, true), n0, {&x, &idx, w("conv0.weight"), w("conv0.bias")}, cache);
  auto y2 = tg.run(*tg.kernel(n1, true), n1, {&y1[0], &y1[1], w("conv1.weight"), w("conv1.bias")}, cache);
  Tensor y4 = y2[0].clone();
  for (int64_t i = 0; i < y4.numel(); ++i)
    y4.data_as<float>()[i] = std::max(0.f, y4.data_as<float>()[i] + (full ? y1[0].data_as<float>()[i] : 0.f));
  auto y5 = tg.run(*tg.kernel(n2, true), n2, {&y4, &y1[1], w("conv2.weight"), w("conv2.bias")}, cache);
  auto y6 = tg.run(*tg.kernel(n3, true), n3, {&y5[0], &y5[1], w("conv3.weight"), w("conv3.bias")}, cache);
  Tensor y7 = y6[0].clone();
  for (int64_t i = 0; i < y7.numel(); ++i) {
    float& v = y7.data_as<float>()[i];
    v = full ? v + y4.data_as<float>()[i] : std::max(0.f, v);
  }
  auto dense = tg.run(*tg.kernel(ns, true), ns, {&y7, &y6[1]}, cache);
  const float* d = dense[0].data_as<float>();
  const float* r = result[0].data_as<float>();
  if (full)
    ASSERT_EQ(result[0].shape(), (Shape{1, c * shape[0], shape[2], shape[1]}));
  else
    ASSERT_EQ(result[0].shape(), dense[0].shape());
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t z = 0; z < shape[0]; ++z)
      for (int64_t y = 0; y < shape[1]; ++y)
        for (int64_t xx = 0; xx < shape[2]; ++xx) {
          float expect = d[((ch * shape[0] + z) * shape[1] + y) * shape[2] + xx];
          // full: result[0, ch*S0 + z, x, y] = dense[0, ch, z, y, x]
          float got = full ? r[((ch * shape[0] + z) * shape[2] + xx) * shape[1] + y]
                           : r[((ch * shape[0] + z) * shape[1] + y) * shape[2] + xx];
          // The sparse Add/Relu between the convolutions run in float16 (they have float16 kernels):
          // each rounds to 11 significant bits.
          ASSERT_NEAR(got, expect, 4e-3f * (1 + std::fabs(expect))) << ch << " " << z << " " << y << " " << xx;
        }
  // Concurrent runs of one session: each run has its own rulebook cache.
  {
    std::vector<Tensor> concurrent[2];
    std::thread t0([&] { concurrent[0] = session.run({{"0", x16}, {"indices", idx}}); });
    std::thread t1([&] { concurrent[1] = session.run({{"0", x16}, {"indices", idx}}); });
    t0.join();
    t1.join();
    for (auto& c : concurrent) {
      ASSERT_EQ(c.size(), 1u);
      ASSERT_EQ(0, std::memcmp(c[0].data(), result16[0].data(), result16[0].nbytes()));
    }
  }
  // A different number of voxels works with the same session (N is symbolic after the rewrite).
  Tensor idx2 = random_sites(11, 1, shape, rng);
  Tensor x2 = to_float16(float_tensor({11, kScnCin}, rng));
  EXPECT_NO_THROW(session.run({{"0", x2}, {"indices", idx2}}));
}

TEST(ScnImport, RunsLikeTheReferenceChain) { run_scn_and_compare(false); }
TEST(ScnImport, FullModelWithAddTransposeReshape) { run_scn_and_compare(true); }

// A pointrt-domain model through Session: Voxelize -> SparseConv (subm) -> ScatterDense.
TEST(SparseSession, VoxelizeConvScatterModel) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  op = m.add_opset_import();
  op->set_domain("pointrt");
  op->set_version(1);
  auto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("points");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("P");
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(4);
  auto* vox = g->add_node();
  vox->set_name("vox");
  vox->set_op_type("Voxelize");
  vox->set_domain("pointrt");
  vox->add_input("points");
  for (const char* o : {"vf", "coords", "count"}) vox->add_output(o);
  auto floats = [](onnx::NodeProto* n, const char* name, std::vector<float> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float x : v) a->add_floats(x);
  };
  floats(vox, "voxel_size", {0.5f, 0.5f, 1.f});
  floats(vox, "point_cloud_range", {0.f, -4.f, -2.f, 8.f, 4.f, 3.f});  // grid x 16, y 16, z 5
  ScnBuilder::integer(vox, "max_points_per_voxel", 4);
  ScnBuilder::integer(vox, "max_voxels", 500);
  auto* conv = g->add_node();
  conv->set_name("conv");
  conv->set_op_type("SparseConv");
  conv->set_domain("pointrt");
  for (const char* i : {"vf", "coords", "w", "b"}) conv->add_input(i);
  conv->add_output("y");
  conv->add_output("y_idx");
  ScnBuilder::ints(conv, "kernel_size", {3, 3, 3});
  ScnBuilder::ints(conv, "input_spatial_shape", {5, 16, 16});
  ScnBuilder::integer(conv, "subm", 1);
  ScnBuilder::string(conv, "activation", "LeakyReLU");
  std::mt19937 rng(101);
  Tensor w = float_tensor({8, 3, 3, 3, 4}, rng), b = float_tensor({8}, rng);
  for (auto [name, t] : {std::pair<const char*, Tensor*>{"w", &w}, {"b", &b}}) {
    auto* init = g->add_initializer();
    init->set_name(name);
    init->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : t->shape()) init->add_dims(d);
    init->set_raw_data(std::string(static_cast<const char*>(t->data()), t->nbytes()));
  }
  auto* sd = g->add_node();
  sd->set_name("bev");
  sd->set_op_type("ScatterDense");
  sd->set_domain("pointrt");
  sd->add_input("y");
  sd->add_input("y_idx");
  sd->add_output("dense");
  ScnBuilder::ints(sd, "spatial_shape", {5, 16, 16});
  g->add_output()->set_name("dense");
  g->add_output()->set_name("count");
  std::string bytes;
  m.SerializeToString(&bytes);
  Session session(Model::load_from_bytes(bytes.data(), bytes.size()));

  Tensor pts = float_tensor({3000, 4}, rng, -5.f, 9.f);
  auto out = session.run({{"points", pts}});
  ASSERT_EQ(out[0].shape(), (Shape{1, 8, 5, 16, 16}));

  // The same chain from the reference kernels.
  TestGraph tg;
  int nv = tg.add("Voxelize", "vox", 1, 3,
                  {{"voxel_size", floats_attr({0.5f, 0.5f, 1.f})},
                   {"point_cloud_range", floats_attr({0.f, -4.f, -2.f, 8.f, 4.f, 3.f})},
                   {"max_points_per_voxel", int_attr(4)},
                   {"max_voxels", int_attr(500)}});
  int nc = tg.add("SparseConv", "conv", 4, 2,
                  {{"kernel_size", ints_attr({3, 3, 3})},
                   {"input_spatial_shape", ints_attr({5, 16, 16})},
                   {"subm", int_attr(1)},
                   {"activation", string_attr("LeakyReLU")}});
  int ns = tg.add("ScatterDense", "bev", 2, 1, {{"spatial_shape", ints_attr({5, 16, 16})}});
  RunCache cache;
  auto v = tg.run(*tg.kernel(nv, true), nv, {&pts}, cache);
  EXPECT_GT(v[0].dim(0), 100);
  auto y = tg.run(*tg.kernel(nc, true), nc, {&v[0], &v[1], &w, &b}, cache);
  auto d = tg.run(*tg.kernel(ns, true), ns, {&y[0], &y[1]}, cache);
  ASSERT_EQ(0, std::memcmp(out[1].data(), v[2].data(), v[2].nbytes()));
  for (int64_t i = 0; i < d[0].numel(); ++i)
    ASSERT_NEAR(out[0].data_as<float>()[i], d[0].data_as<float>()[i], 1e-4f) << i;
}

TEST(ScnImport, LeavesOrdinaryModelsAlone) {
  onnx::ModelProto m;
  auto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(2);
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  g->add_output()->set_name("y");
  m.add_opset_import()->set_version(13);
  m.set_ir_version(7);
  std::string bytes;
  m.SerializeToString(&bytes);
  Model model = Model::load_from_bytes(bytes.data(), bytes.size());
  for (const auto& note : model.impl()->import_notes) EXPECT_EQ(note.find("scn.onnx"), std::string::npos);
}

}  // namespace
}  // namespace sparse
}  // namespace pointrt
