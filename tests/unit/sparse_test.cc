// Tests of the pointrt sparse family: optimised vs naive vs dense oracle, every rule and error of
// OPS.md "Sparse-convolution family", and the NVIDIA scn.onnx import.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "core/half.h"
#include "graph/ir.h"
#include "graph/onnx_import.h"
#include "graph/scn_import.h"
#include "onnx/onnx_pb.h"
#include "ops/kernel.h"
#include "ops/sparse/scatter_dense.h"
#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/voxelize.h"
#include "pointrt/pointrt.h"

namespace pointrt {
namespace sparse {
namespace {

// ------------------------------------------------------------------ helpers

struct HeapAllocator : Allocator {
  Tensor allocate(DType d, const Shape& s) override { return Tensor::allocate(d, s); }
};

Attribute ints_attr(std::vector<int64_t> v) { return Attribute::make_ints(std::move(v)); }
Attribute int_attr(int64_t v) { return Attribute::make_int(std::move(v)); }
Attribute float_attr(float v) { return Attribute::make_float(std::move(v)); }
Attribute floats_attr(std::vector<float> v) { return Attribute::make_floats(std::move(v)); }
Attribute string_attr(std::string s) { return Attribute::make_string(std::move(s)); }

// A graph of pointrt nodes whose kernels are run directly on given tensors.
struct TestGraph {
  Graph g;
  int add(const std::string& op, const std::string& name, int inputs, int outputs,
          std::map<std::string, Attribute> attrs) {
    Node n;
    n.name = name;
    n.op_type = op;
    n.domain = "pointrt";
    n.opset = 1;
    for (int i = 0; i < inputs; ++i) n.inputs.push_back(g.add_value(str_cat(name, "_in", i)));
    for (int i = 0; i < outputs; ++i) n.outputs.push_back(g.add_value(str_cat(name, "_out", i)));
    n.attrs.items = std::move(attrs);
    n.attrs.owner = n.describe();
    g.nodes.push_back(std::move(n));
    return static_cast<int>(g.nodes.size()) - 1;
  }
  std::unique_ptr<OpKernel> kernel(int node, bool reference) {
    KernelInit init{g.nodes[node], g};
    const std::string& op = g.nodes[node].op_type;
    if (op == "SparseConv") return reference ? make_sparse_conv_reference_kernel(init) : make_sparse_conv_kernel(init);
    if (op == "Voxelize") return reference ? make_voxelize_reference_kernel(init) : make_voxelize_kernel(init);
    return reference ? make_scatter_dense_reference_kernel(init) : make_scatter_dense_kernel(init);
  }
  std::vector<Tensor> run(const OpKernel& k, int node, std::vector<const Tensor*> ins, RunCache& cache) {
    std::vector<Tensor> outs(g.nodes[node].outputs.size());
    HeapAllocator alloc;
    KernelContext ctx(g.nodes[node], std::move(ins), outs, alloc, cache);
    k.run(ctx);
    return outs;
  }
};

Tensor float_tensor(Shape s, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::allocate(DType::kFloat32, s);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

// n unique random sites in [0, batches) x shape; int32 or int64.
Tensor random_sites(int64_t n, int64_t batches, Shape3 shape, std::mt19937& rng, DType dt = DType::kInt32) {
  std::set<std::array<int64_t, 4>> used;
  std::vector<std::array<int64_t, 4>> rows;
  const int64_t capacity = batches * shape[0] * shape[1] * shape[2];
  n = std::min(n, capacity);
  while (static_cast<int64_t>(rows.size()) < n) {
    std::array<int64_t, 4> s{int64_t(rng() % batches), int64_t(rng() % shape[0]), int64_t(rng() % shape[1]),
                             int64_t(rng() % shape[2])};
    if (used.insert(s).second) rows.push_back(s);
  }
  Tensor t = Tensor::allocate(dt, {n, 4});
  for (int64_t r = 0; r < n; ++r)
    for (int c = 0; c < 4; ++c) {
      if (dt == DType::kInt32)
        t.data_as<int32_t>()[4 * r + c] = static_cast<int32_t>(rows[r][c]);
      else
        t.data_as<int64_t>()[4 * r + c] = rows[r][c];
    }
  return t;
}

Tensor int_tensor(Shape s, std::vector<int64_t> v, DType dt = DType::kInt32) {
  Tensor t = Tensor::allocate(dt, s);
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DType::kInt32)
      t.data_as<int32_t>()[i] = static_cast<int32_t>(v[i]);
    else
      t.data_as<int64_t>()[i] = v[i];
  }
  return t;
}

// Compare two sparse results row by row (same order) with a tolerance.
void expect_same(const Tensor& fa, const Tensor& ia, const Tensor& fb, const Tensor& ib, const std::string& what) {
  ASSERT_EQ(fa.shape(), fb.shape()) << what;
  ASSERT_EQ(ia.shape(), ib.shape()) << what;
  for (int64_t i = 0; i < ia.numel(); ++i)
    ASSERT_EQ(ia.data_as<int32_t>()[i], ib.data_as<int32_t>()[i]) << what << " site element " << i;
  for (int64_t i = 0; i < fa.numel(); ++i)
    ASSERT_NEAR(fa.data_as<float>()[i], fb.data_as<float>()[i], 1e-4f * (1 + std::fabs(fb.data_as<float>()[i])))
        << what << " feature element " << i;
}

// Compare a result with the dense oracle as a site -> features map.
void expect_matches_dense(const Tensor& f, const Tensor& idx, const SparseResult& dense, const std::string& what) {
  ASSERT_EQ(f.dim(0), dense.rows) << what;
  std::map<std::array<int32_t, 4>, int64_t> row_of;
  for (int64_t r = 0; r < dense.rows; ++r)
    row_of[{dense.sites[4 * r], dense.sites[4 * r + 1], dense.sites[4 * r + 2], dense.sites[4 * r + 3]}] = r;
  const int64_t c = f.dim(1);
  for (int64_t r = 0; r < f.dim(0); ++r) {
    const int32_t* s = idx.data_as<int32_t>() + 4 * r;
    auto it = row_of.find({s[0], s[1], s[2], s[3]});
    ASSERT_NE(it, row_of.end()) << what << ": site of row " << r << " is not an output of the dense convolution";
    for (int64_t k = 0; k < c; ++k)
      ASSERT_NEAR(f.data_as<float>()[r * c + k], dense.features[it->second * c + k],
                  1e-4f * (1 + std::fabs(dense.features[it->second * c + k])))
          << what << " row " << r << " channel " << k;
  }
}

bool sorted_sites(const Tensor& idx) {
  for (int64_t r = 1; r < idx.dim(0); ++r)
    if (!std::lexicographical_compare(idx.data_as<int32_t>() + 4 * (r - 1), idx.data_as<int32_t>() + 4 * r,
                                      idx.data_as<int32_t>() + 4 * r, idx.data_as<int32_t>() + 4 * r + 4))
      return false;
  return true;
}

struct ConvCase {
  std::string name;
  Shape3 shape;
  int64_t n, batches, cin, cout;
  Shape3 k, stride{1, 1, 1}, pad{0, 0, 0}, dil{1, 1, 1}, out_pad{0, 0, 0};
  int kind = 0;  // 0 subm, 1 regular, 2 transposed
  std::string act = "None";
  bool bias = true;
  DType index_type = DType::kInt32;
};

std::map<std::string, Attribute> conv_attrs(const ConvCase& c) {
  std::map<std::string, Attribute> a = {{"kernel_size", ints_attr({c.k[0], c.k[1], c.k[2]})},
                                        {"stride", ints_attr({c.stride[0], c.stride[1], c.stride[2]})},
                                        {"padding", ints_attr({c.pad[0], c.pad[1], c.pad[2]})},
                                        {"dilation", ints_attr({c.dil[0], c.dil[1], c.dil[2]})},
                                        {"input_spatial_shape", ints_attr({c.shape[0], c.shape[1], c.shape[2]})},
                                        {"activation", string_attr(c.act)}};
  if (c.kind == 0) a["subm"] = int_attr(1);
  if (c.kind == 2) {
    a["transposed"] = int_attr(1);
    a["output_padding"] = ints_attr({c.out_pad[0], c.out_pad[1], c.out_pad[2]});
  }
  if (c.act == "LeakyReLU") a["alpha"] = float_attr(0.2f);
  return a;
}

void run_conv_case(const ConvCase& c, uint32_t seed) {
  SCOPED_TRACE(c.name);
  std::mt19937 rng(seed);
  TestGraph tg;
  int node = tg.add("SparseConv", c.name, c.bias ? 4 : 3, 2, conv_attrs(c));
  Tensor x = float_tensor({std::min(c.n, c.batches * c.shape[0] * c.shape[1] * c.shape[2]), c.cin}, rng);
  Tensor idx = random_sites(c.n, c.batches, c.shape, rng, c.index_type);
  Tensor w = float_tensor({c.cout, c.k[0], c.k[1], c.k[2], c.cin}, rng);
  Tensor b = float_tensor({c.cout}, rng);
  std::vector<const Tensor*> ins = {&x, &idx, &w};
  if (c.bias) ins.push_back(&b);
  RunCache c1, c2;
  auto opt = tg.run(*tg.kernel(node, false), node, ins, c1);
  auto ref = tg.run(*tg.kernel(node, true), node, ins, c2);
  expect_same(opt[0], opt[1], ref[0], ref[1], "optimised vs reference");
  SparseConvAttrs attrs = parse_sparse_conv_attrs(tg.g.nodes[node].attrs, c.name);
  auto dense = sparse_conv_dense_oracle(attrs, x, idx, w, c.bias ? &b : nullptr);
  expect_matches_dense(opt[0], opt[1], dense, "optimised vs dense oracle");
  if (c.kind == 0) {
    // Output sites are the input sites, in input order.
    for (int64_t i = 0; i < idx.numel(); ++i)
      ASSERT_EQ(opt[1].data_as<int32_t>()[i],
                idx.dtype() == DType::kInt32 ? idx.data_as<int32_t>()[i] : int32_t(idx.data_as<int64_t>()[i]));
  } else {
    EXPECT_TRUE(sorted_sites(opt[1])) << "rows must be sorted by (batch, i0, i1, i2)";
  }
}

// ------------------------------------------------------------------ SparseConv

TEST(SparseConv, SubmanifoldMatchesOracles) {
  run_conv_case({"subm3", {5, 7, 9}, 120, 2, 3, 5, {3, 3, 3}}, 1);
  run_conv_case({"subm3_relu_int64",
                 {6, 5, 4},
                 60,
                 1,
                 4,
                 2,
                 {3, 3, 3},
                 {1, 1, 1},
                 {0, 0, 0},
                 {1, 1, 1},
                 {0, 0, 0},
                 0,
                 "ReLU",
                 true,
                 DType::kInt64},
                2);
  run_conv_case({"subm_dil2_leaky",
                 {7, 8, 9},
                 200,
                 3,
                 5,
                 3,
                 {3, 3, 3},
                 {1, 1, 1},
                 {0, 0, 0},
                 {2, 2, 2},
                 {0, 0, 0},
                 0,
                 "LeakyReLU"},
                3);
  run_conv_case({"subm_1x3x5_sigmoid_nobias",
                 {4, 9, 11},
                 100,
                 1,
                 2,
                 3,
                 {1, 3, 5},
                 {1, 1, 1},
                 {0, 0, 0},
                 {1, 1, 1},
                 {0, 0, 0},
                 0,
                 "Sigmoid",
                 false},
                4);
  run_conv_case({"subm_1x1x1", {3, 3, 3}, 20, 2, 7, 6, {1, 1, 1}}, 5);
  run_conv_case({"subm_single_site", {5, 5, 5}, 1, 1, 3, 4, {3, 3, 3}}, 6);
  run_conv_case({"subm_dense_grid", {3, 4, 5}, 60, 1, 3, 3, {3, 3, 3}}, 7);
  run_conv_case({"subm_empty", {5, 5, 5}, 0, 1, 3, 4, {3, 3, 3}}, 8);
  // Many output-row blocks (the parallel path) and odd channel counts.
  run_conv_case(
      {"subm_large", {20, 30, 41}, 5000, 2, 5, 7, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 0, "ReLU"}, 9);
}

TEST(SparseConv, RegularMatchesOracles) {
  run_conv_case({"reg_s2_p1", {9, 10, 11}, 150, 2, 3, 4, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1}, 11);
  run_conv_case(
      {"reg_s2_k2", {8, 7, 6}, 100, 1, 4, 5, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1, "ReLU"}, 12);
  run_conv_case({"reg_mixed",
                 {7, 9, 5},
                 90,
                 3,
                 3,
                 3,
                 {3, 1, 3},
                 {2, 1, 3},
                 {1, 0, 2},
                 {1, 1, 2},
                 {0, 0, 0},
                 1,
                 "LeakyReLU",
                 true,
                 DType::kInt64},
                13);
  run_conv_case({"reg_dilation", {9, 9, 9}, 80, 1, 2, 3, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {2, 3, 1}, {0, 0, 0}, 1}, 14);
  run_conv_case({"reg_1x1x1_s1", {4, 5, 6}, 40, 2, 3, 2, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1}, 15);
  run_conv_case({"reg_zstride_only", {11, 6, 6}, 60, 1, 3, 3, {3, 1, 1}, {2, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1},
                16);
  run_conv_case({"reg_single", {5, 5, 5}, 1, 1, 2, 2, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1}, 17);
  run_conv_case({"reg_empty", {5, 5, 5}, 0, 1, 2, 2, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1}, 18);
  run_conv_case({"reg_large", {21, 40, 33}, 6000, 2, 3, 9, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1},
                19);
}

TEST(SparseConv, TransposedMatchesOracles) {
  run_conv_case({"tr_s2_p1_op1", {4, 5, 3}, 30, 2, 3, 4, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 0, 1}, 2}, 21);
  run_conv_case({"tr_k2_s2", {3, 4, 5}, 25, 1, 2, 3, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 2, "ReLU"},
                22);
  run_conv_case({"tr_dil", {4, 4, 4}, 20, 1, 2, 2, {3, 2, 3}, {1, 2, 1}, {0, 0, 1}, {2, 1, 1}, {0, 0, 0}, 2}, 23);
  run_conv_case({"tr_empty", {4, 4, 4}, 0, 1, 2, 2, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 2}, 24);
}

// The sorted (radix sort + merge-join) rulebook must equal the hash-map one pair for pair: same
// output sites, same per-offset lists in the same order. Sites crowd the grid borders (where a
// shifted key could wrap into the next row without the padded keys) and several batches.
Sites sites_of(const Tensor& idx, const Shape3& shape) {
  return read_sites(idx, idx.dim(0), shape, IndexSource{"test", "indices", "input_spatial_shape"});
}
void expect_same_rulebook(const ConvCase& c, const Tensor& idx) {
  SCOPED_TRACE(c.name);
  std::map<std::string, Attribute> items = conv_attrs(c);
  Attributes attrs;
  attrs.items = items;
  SparseConvAttrs a = parse_sparse_conv_attrs(attrs, c.name);
  const IndexSource src{"test", "indices", "input_spatial_shape"};
  auto sorted = build_rulebook(a, sites_of(idx, c.shape), src, RulebookMethod::kSorted);
  auto hashed = build_rulebook(a, sites_of(idx, c.shape), src, RulebookMethod::kHash);
  auto autod = build_rulebook(a, sites_of(idx, c.shape), src);
  for (const Rulebook* rb : {sorted.get(), autod.get()}) {
    ASSERT_EQ(rb->pairs.num_out, hashed->pairs.num_out);
    ASSERT_EQ(rb->out_sites, hashed->out_sites);
    ASSERT_EQ(rb->pairs.identity_offset, hashed->pairs.identity_offset);
    ASSERT_EQ(rb->pairs.in_rows.size(), hashed->pairs.in_rows.size());
    for (size_t o = 0; o < rb->pairs.in_rows.size(); ++o) {
      ASSERT_EQ(rb->pairs.in_rows[o], hashed->pairs.in_rows[o]) << "offset " << o;
      ASSERT_EQ(rb->pairs.out_rows[o], hashed->pairs.out_rows[o]) << "offset " << o;
    }
  }
}

Tensor border_heavy_sites(int64_t n, int64_t batches, Shape3 shape, std::mt19937& rng) {
  std::set<std::array<int64_t, 4>> used;
  std::vector<int64_t> v;
  auto coord = [&](int64_t size) {
    const int64_t r = rng() % 4;
    return r == 0 ? 0 : r == 1 ? size - 1 : int64_t(rng() % size);
  };
  const int64_t capacity = batches * shape[0] * shape[1] * shape[2];
  n = std::min(n, capacity);
  for (int64_t tries = 0; static_cast<int64_t>(used.size()) < n && tries < 100 * n; ++tries) {
    std::array<int64_t, 4> s{int64_t(rng() % batches), coord(shape[0]), coord(shape[1]), coord(shape[2])};
    if (used.insert(s).second) v.insert(v.end(), s.begin(), s.end());
  }
  return int_tensor({static_cast<int64_t>(v.size() / 4), 4}, v);
}

TEST(SparseConv, SortedRulebookEqualsHashedRulebook) {
  std::vector<ConvCase> cases = {
      {"subm3", {5, 7, 9}, 150, 3, 1, 1, {3, 3, 3}},
      {"subm_dil2", {7, 8, 9}, 250, 2, 1, 1, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {2, 2, 2}},
      {"subm_dil_inner3", {6, 6, 10}, 200, 2, 1, 1, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {1, 2, 3}},
      {"subm_1x3x5", {4, 9, 11}, 150, 2, 1, 1, {1, 3, 5}},
      {"subm_5x1x3", {9, 3, 6}, 120, 1, 1, 1, {5, 1, 3}},
      {"subm_5x5x5", {6, 7, 8}, 200, 2, 1, 1, {5, 5, 5}},
      {"subm_1x1x1", {3, 3, 3}, 20, 2, 1, 1, {1, 1, 1}},
      {"subm_dense", {3, 4, 5}, 120, 2, 1, 1, {3, 3, 3}},
      {"subm_single", {5, 5, 5}, 1, 1, 1, 1, {3, 3, 3}},
      {"subm_empty", {5, 5, 5}, 0, 1, 1, 1, {3, 3, 3}},
      {"subm_large", {20, 30, 41}, 6000, 3, 1, 1, {3, 3, 3}},
      {"reg_s2_p1", {9, 10, 11}, 200, 3, 1, 1, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1},
      {"reg_k2_s2", {8, 7, 6}, 150, 2, 1, 1, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 1},
      {"reg_mixed", {7, 9, 5}, 120, 3, 1, 1, {3, 1, 3}, {2, 1, 3}, {1, 0, 2}, {1, 1, 2}, {0, 0, 0}, 1},
      {"reg_dil", {9, 9, 9}, 120, 2, 1, 1, {3, 3, 3}, {1, 1, 1}, {0, 0, 0}, {2, 3, 1}, {0, 0, 0}, 1},
      {"reg_big_stride", {20, 20, 20}, 300, 2, 1, 1, {3, 3, 3}, {5, 4, 5}, {1, 2, 0}, {1, 1, 1}, {0, 0, 0}, 1},
      {"reg_s1_pad", {6, 6, 6}, 100, 2, 1, 1, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1},
      {"reg_empty", {5, 5, 5}, 0, 1, 1, 1, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1},
      {"reg_large", {21, 40, 33}, 6000, 2, 1, 1, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1},
      {"tr_s2_op1", {4, 5, 3}, 40, 2, 1, 1, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 0, 1}, 2},
      {"tr_k2_s2", {3, 4, 5}, 40, 2, 1, 1, {2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}, 2},
      {"tr_dil", {4, 4, 4}, 30, 1, 1, 1, {3, 2, 3}, {1, 2, 1}, {0, 0, 1}, {2, 1, 1}, {0, 0, 0}, 2},
  };
  uint32_t seed = 100;
  for (const ConvCase& c : cases) {
    std::mt19937 rng(seed++);
    expect_same_rulebook(c, random_sites(c.n, c.batches, c.shape, rng));
    expect_same_rulebook(c, border_heavy_sites(c.n, c.batches, c.shape, rng));
  }
}

// A padded subm key space over 62 bits (huge grid, large batch index) falls back to the hash map.
TEST(SparseConv, SortedRulebookFallsBackOnHugeKeySpace) {
  const Shape3 shape{1 << 13, 1 << 13, 1 << 14};  // 2^40 cells: batch indices up to 2^22 - 1 are valid
  ConvCase c{"subm_huge", shape, 0, 1, 1, 1, {3, 3, 3}};
  const int64_t b = (int64_t(1) << 22) - 1;
  Tensor idx = int_tensor({5, 4}, {b, 0, 0, 0, b, 0, 0, 1, b, 1, 1, 1, b, 8191, 8191, 16383, 0, 5, 5, 5});
  expect_same_rulebook(c, idx);
  Attributes attrs;
  attrs.items = conv_attrs(c);
  auto rb = build_rulebook(parse_sparse_conv_attrs(attrs, c.name), sites_of(idx, shape),
                           IndexSource{"test", "indices", "input_spatial_shape"});
  EXPECT_EQ(rb->pairs.total_pairs(), 5 + 3 * 2);  // centre + the three neighbouring pairs among b's first three
}

// Both methods report a duplicate site with the same message (the first two rows in input order).
TEST(SparseConv, SortedRulebookDuplicateMessage) {
  Tensor idx = int_tensor({4, 4}, {0, 1, 1, 1, 0, 2, 2, 2, 0, 1, 1, 1, 0, 2, 2, 2});
  for (int kind : {0, 1, 2}) {
    ConvCase c{"dup", {5, 5, 5}, 0, 1, 1, 1, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, kind};
    Attributes attrs;
    attrs.items = conv_attrs(c);
    SparseConvAttrs a = parse_sparse_conv_attrs(attrs, c.name);
    std::string msg[2];
    for (int m = 0; m < 2; ++m) {
      try {
        build_rulebook(a, sites_of(idx, c.shape), IndexSource{"test", "indices", "input_spatial_shape"},
                       m ? RulebookMethod::kHash : RulebookMethod::kSorted);
        ADD_FAILURE() << "no error for kind " << kind;
      } catch (const Error& e) {
        msg[m] = e.what();
      }
    }
    EXPECT_EQ(msg[0], msg[1]);
    EXPECT_NE(msg[0].find("rows 0 and 2 are the same site (0, 1, 1, 1)"), std::string::npos) << msg[0];
  }
}

// regular conv (key "down") followed by its inverse; both optimised and reference, plus dense.
TEST(SparseConv, InverseMatchesOracles) {
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    std::mt19937 rng(31 + variant);
    Shape3 shape = variant == 0   ? Shape3{9, 8, 7}
                   : variant == 1 ? Shape3{5, 6, 7}
                   : variant == 2 ? Shape3{4, 4, 4}
                                  : Shape3{21, 30, 27};
    int64_t n = variant == 2 ? 0 : variant == 3 ? 4000 : 120;
    TestGraph tg;
    std::map<std::string, Attribute> down = {{"kernel_size", ints_attr({3, 3, 3})},
                                             {"stride", ints_attr({2, 2, 2})},
                                             {"padding", ints_attr({1, 1, 1})},
                                             {"input_spatial_shape", ints_attr({shape[0], shape[1], shape[2]})},
                                             {"rulebook", string_attr("down")}};
    if (variant == 1) down["kernel_size"] = ints_attr({2, 3, 2}), down["padding"] = ints_attr({0, 1, 0});
    int d = tg.add("SparseConv", "down", 4, 2, down);
    SparseConvAttrs da = parse_sparse_conv_attrs(tg.g.nodes[d].attrs, "down");
    std::map<std::string, Attribute> up = down;
    up.erase("stride");
    up.erase("padding");
    up["inverse"] = int_attr(1);
    up["input_spatial_shape"] = ints_attr({da.out_shape[0], da.out_shape[1], da.out_shape[2]});
    up["activation"] = string_attr("ReLU");
    int u = tg.add("SparseConv", "up", 4, 2, up);
    Tensor x = float_tensor({n, 3}, rng);
    Tensor idx = random_sites(n, 2, shape, rng);
    Tensor w1 = float_tensor({4, da.kernel[0], da.kernel[1], da.kernel[2], 3}, rng), b1 = float_tensor({4}, rng);
    Tensor w2 = float_tensor({5, da.kernel[0], da.kernel[1], da.kernel[2], 4}, rng), b2 = float_tensor({5}, rng);
    std::vector<Tensor> results[2];
    for (int ref = 0; ref < 2; ++ref) {
      RunCache cache;
      auto kd = tg.kernel(d, ref), ku = tg.kernel(u, ref);
      auto y = tg.run(*kd, d, {&x, &idx, &w1, &b1}, cache);
      results[ref] = tg.run(*ku, u, {&y[0], &y[1], &w2, &b2}, cache);
      if (!ref) {
        SparseConvAttrs ua = parse_sparse_conv_attrs(KernelInit{tg.g.nodes[u], tg.g});
        auto dense = sparse_conv_dense_oracle(ua, y[0], y[1], w2, &b2, &idx);
        expect_matches_dense(results[0][0], results[0][1], dense, "inverse vs dense oracle");
      }
    }
    expect_same(results[0][0], results[0][1], results[1][0], results[1][1], "inverse optimised vs reference");
    // Output sites are the forward convolution's input sites, in its input order.
    for (int64_t i = 0; i < idx.numel(); ++i) ASSERT_EQ(results[0][1].data_as<int32_t>()[i], idx.data_as<int32_t>()[i]);
  }
}

TEST(SparseConv, SharedRulebookGivesSameResult) {
  std::mt19937 rng(41);
  TestGraph tg;
  auto attrs = conv_attrs({"a", {6, 7, 8}, 0, 0, 0, 0, {3, 3, 3}});
  auto keyed = attrs;
  keyed["rulebook"] = string_attr("subm1");
  int plain = tg.add("SparseConv", "plain", 3, 2, attrs);
  int k1 = tg.add("SparseConv", "k1", 3, 2, keyed);
  int k2 = tg.add("SparseConv", "k2", 3, 2, keyed);
  Tensor idx = random_sites(150, 2, {6, 7, 8}, rng);
  Tensor x = float_tensor({150, 4}, rng), w = float_tensor({4, 3, 3, 3, 4}, rng);
  RunCache cache;
  auto kp = tg.kernel(plain, false), kk1 = tg.kernel(k1, false), kk2 = tg.kernel(k2, false);
  auto a = tg.run(*kp, plain, {&x, &idx, &w}, cache);
  auto b = tg.run(*kk1, k1, {&x, &idx, &w}, cache);
  EXPECT_EQ(cache.entries.size(), 1u);
  auto c = tg.run(*kk2, k2, {&b[0], &b[1], &w}, cache);  // reuses the pairing built by k1
  auto c_plain = tg.run(*kp, plain, {&b[0], &b[1], &w}, cache);
  expect_same(a[0], a[1], b[0], b[1], "keyed vs plain");
  expect_same(c[0], c[1], c_plain[0], c_plain[1], "shared rulebook vs fresh");
  // Same key, different sites: an error naming the key.
  Tensor other = random_sites(150, 2, {6, 7, 8}, rng);
  try {
    tg.run(*kk2, k2, {&x, &other, &w}, cache);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("subm1"), std::string::npos) << e.what();
  }
  // Same key, different dilation: an error.
  auto dil = keyed;
  dil["dilation"] = ints_attr({2, 2, 2});
  int k3 = tg.add("SparseConv", "k3", 3, 2, dil);
  auto kk3 = tg.kernel(k3, false);
  EXPECT_THROW(tg.run(*kk3, k3, {&x, &idx, &w}, cache), Error);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SparseConv, Errors) {
  std::mt19937 rng(51);
  ConvCase c{"bad", {4, 5, 6}, 3, 1, 2, 2, {3, 3, 3}};
  TestGraph tg;
  int node = tg.add("SparseConv", "conv", 3, 2, conv_attrs(c));
  auto k = tg.kernel(node, false), kr = tg.kernel(node, true);
  Tensor x = float_tensor({3, 2}, rng), w = float_tensor({2, 3, 3, 3, 2}, rng);
  RunCache cache;
  // index outside input_spatial_shape
  Tensor oob = int_tensor({3, 4}, {0, 1, 1, 1, 0, 2, 5, 1, 0, 3, 3, 3});
  std::string msg;
  for (auto* kern : {k.get(), kr.get()}) {
    msg = error_of([&] { tg.run(*kern, node, {&x, &oob, &w}, cache); });
    EXPECT_NE(msg.find("node 'conv'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'conv_in1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("row 1 column 2 (i1) = 5"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[0, 5)"), std::string::npos) << msg;
  }
  // (batch, x, y, z) given to a (z, y, x) shape: the message says so
  Tensor rev = int_tensor({3, 4}, {0, 5, 1, 1, 0, 1, 1, 0, 0, 2, 2, 2});
  msg = error_of([&] { tg.run(*k, node, {&x, &rev, &w}, cache); });
  EXPECT_NE(msg.find("row 0 column 1 (i0) = 5 is outside the valid range [0, 4)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the spatial columns are reversed"), std::string::npos) << msg;
  // negative batch (int64 indices)
  Tensor neg = int_tensor({3, 4}, {0, 1, 1, 1, -1, 2, 2, 1, 0, 3, 3, 3}, DType::kInt64);
  msg = error_of([&] { tg.run(*k, node, {&x, &neg, &w}, cache); });
  EXPECT_NE(msg.find("row 1 column 0 (batch) = -1 is negative"), std::string::npos) << msg;
  // duplicate site
  Tensor dup = int_tensor({3, 4}, {0, 1, 1, 1, 0, 2, 2, 1, 0, 1, 1, 1});
  msg = error_of([&] { tg.run(*k, node, {&x, &dup, &w}, cache); });
  EXPECT_NE(msg.find("rows 0 and 2 are the same site (0, 1, 1, 1)"), std::string::npos) << msg;
  EXPECT_NE(error_of([&] { tg.run(*kr, node, {&x, &dup, &w}, cache); }), "");
  // Cin mismatch
  Tensor w3 = float_tensor({2, 3, 3, 3, 3}, rng);
  Tensor good = int_tensor({3, 4}, {0, 1, 1, 1, 0, 2, 2, 1, 0, 3, 3, 3});
  msg = error_of([&] { tg.run(*k, node, {&x, &good, &w3}, cache); });
  EXPECT_NE(msg.find("Cin = 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expects Cin = 3"), std::string::npos) << msg;
  // weight kernel size mismatch
  Tensor w5 = float_tensor({2, 1, 3, 3, 2}, rng);
  EXPECT_NE(error_of([&] {
              tg.run(*k, node, {&x, &good, &w5}, cache);
            }).find("kernel_size [3, 3, 3]"),
            std::string::npos);
  // even kernel for subm (prepare time)
  auto even = conv_attrs({"even", {4, 5, 6}, 0, 0, 0, 0, {3, 2, 3}});
  int ne = tg.add("SparseConv", "even", 3, 2, even);
  msg = error_of([&] { tg.kernel(ne, false); });
  EXPECT_NE(msg.find("odd kernel sizes"), std::string::npos) << msg;
  // output_spatial_shape mismatch
  ConvCase r{"reg", {9, 9, 9}, 0, 0, 0, 0, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, 1};
  auto ra = conv_attrs(r);
  ra["output_spatial_shape"] = ints_attr({5, 5, 4});
  int nr = tg.add("SparseConv", "reg", 3, 2, ra);
  msg = error_of([&] { tg.kernel(nr, false); });
  EXPECT_NE(msg.find("output_spatial_shape [5, 5, 4] does not match the computed output spatial shape [5, 5, 5]"),
            std::string::npos)
      << msg;
  ra["output_spatial_shape"] = ints_attr({5, 5, 5});
  int nr2 = tg.add("SparseConv", "reg_ok", 3, 2, ra);
  EXPECT_NO_THROW(tg.kernel(nr2, false));
  // inverse with an unknown key (prepare) and with no forward conv in the run cache (run)
  auto inv = conv_attrs({"inv", {5, 5, 5}, 0, 0, 0, 0, {3, 3, 3}});
  inv.erase("subm");
  inv["inverse"] = int_attr(1);
  inv["rulebook"] = string_attr("spconv9");
  int ni = tg.add("SparseConv", "inv", 3, 2, inv);
  msg = error_of([&] { tg.kernel(ni, false); });
  EXPECT_NE(msg.find("rulebook key 'spconv9' names no earlier regular SparseConv"), std::string::npos) << msg;
  auto fwd = conv_attrs(r);
  fwd["rulebook"] = string_attr("spconv9");
  TestGraph tg2;
  tg2.add("SparseConv", "fwd", 3, 2, fwd);
  inv["input_spatial_shape"] = ints_attr({5, 5, 5});
  int ni2 = tg2.add("SparseConv", "inv", 3, 2, inv);
  auto kinv = tg2.kernel(ni2, false);
  Tensor idx5 = int_tensor({1, 4}, {0, 1, 1, 1});
  Tensor x1 = float_tensor({1, 2}, rng);
  RunCache empty;
  msg = error_of([&] { tg2.run(*kinv, ni2, {&x1, &idx5, &w}, empty); });
  EXPECT_NE(msg.find("'spconv9'"), std::string::npos) << msg;
  // inverse with a mismatching input_spatial_shape
  inv["input_spatial_shape"] = ints_attr({4, 5, 5});
  int ni3 = tg2.add("SparseConv", "inv3", 3, 2, inv);
  EXPECT_NE(error_of([&] { tg2.kernel(ni3, false); }).find("differs from the output spatial shape [5, 5, 5]"),
            std::string::npos);
  // unknown activation
  auto act = conv_attrs(c);
  act["activation"] = string_attr("Swish");
  int na = tg.add("SparseConv", "act", 3, 2, act);
  EXPECT_NE(error_of([&] { tg.kernel(na, false); }).find("'Swish'"), std::string::npos);
}

// ------------------------------------------------------------------ Voxelize

std::map<std::string, Attribute> vox_attrs(std::vector<float> size, std::vector<float> range, int64_t max_points,
                                           int64_t max_voxels) {
  return {{"voxel_size", floats_attr(size)},
          {"point_cloud_range", floats_attr(range)},
          {"max_points_per_voxel", int_attr(max_points)},
          {"max_voxels", int_attr(max_voxels)}};
}

std::vector<Tensor> voxelize(const std::map<std::string, Attribute>& attrs, const Tensor& pts, bool reference) {
  TestGraph tg;
  int n = tg.add("Voxelize", "vox", 1, 3, attrs);
  RunCache cache;
  return tg.run(*tg.kernel(n, reference), n, {&pts}, cache);
}

TEST(Voxelize, MatchesReferenceOnRandomClouds) {
  std::mt19937 rng(61);
  for (int trial = 0; trial < 5; ++trial) {
    const int64_t p = trial == 0 ? 0 : trial == 1 ? 1 : trial == 4 ? 30000 : 3000 + 1111 * trial, f = 3 + trial % 3;
    Tensor pts = float_tensor({p, f}, rng, -6.f, 6.f);
    auto attrs = vox_attrs({0.5f, 0.4f, 0.75f}, {-5.f, -4.f, -3.f, 5.f, 4.f, 3.f}, 1 + trial * 2, 50 + trial * 200);
    auto a = voxelize(attrs, pts, false), b = voxelize(attrs, pts, true);
    for (int o = 0; o < 3; ++o) {
      ASSERT_EQ(a[o].shape(), b[o].shape()) << "trial " << trial << " output " << o;
      ASSERT_EQ(0, std::memcmp(a[o].data(), b[o].data(), a[o].nbytes())) << "trial " << trial << " output " << o;
    }
  }
}

TEST(Voxelize, BoundariesAndRounding) {
  // x, y, z range [-3, 1) with size 0.1 on z: G = 40; the largest float below 1 has a quotient
  // that rounds up to 40 and is dropped; exactly max is dropped; exactly min is kept.
  const float below = std::nextafter(1.0f, 0.0f);
  std::vector<float> v = {0.5f, 0.5f, below,   // z quotient rounds to G -> dropped
                          0.5f, 0.5f, 1.0f,    // on max -> dropped
                          -3.f, -3.f, -3.f,    // on min -> kept, cell 0
                          0.5f, 0.5f, 0.95f};  // last cell, z = 39
  Tensor pts = Tensor::wrap(DType::kFloat32, {4, 3}, v.data());
  auto attrs = vox_attrs({0.1f, 0.1f, 0.1f}, {-3.f, -3.f, -3.f, 1.f, 1.f, 1.f}, 4, 10);
  for (bool ref : {false, true}) {
    auto out = voxelize(attrs, pts, ref);
    ASSERT_EQ(out[1].dim(0), 2);
    const int32_t* c = out[1].data_as<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(c, c + 8), (std::vector<int32_t>{0, 0, 0, 0, 0, 39, 35, 35}));
  }
}

TEST(Voxelize, TruncationAndMean) {
  // F = 5: voxel A gets 4 points (max 3 kept), voxel B 1, voxel C (third) dropped by max_voxels = 2,
  // then a late point of voxel A is still ignored (full) and one of B is added.
  std::vector<float> v = {
      0.1f, 0.1f, 0.1f, 1.f, 10.f,  // A
      0.2f, 0.2f, 0.2f, 2.f, 20.f,  // A
      1.5f, 0.1f, 0.1f, 7.f, 70.f,  // B
      0.3f, 0.3f, 0.3f, 3.f, 30.f,  // A
      2.5f, 0.1f, 0.1f, 9.f, 90.f,  // C -> dropped (max_voxels)
      0.4f, 0.4f, 0.4f, 4.f, 40.f,  // A -> ignored (max_points_per_voxel)
      1.7f, 0.2f, 0.2f, 5.f, 50.f,  // B
  };
  Tensor pts = Tensor::wrap(DType::kFloat32, {7, 5}, v.data());
  auto attrs = vox_attrs({1.f, 1.f, 1.f}, {0.f, 0.f, 0.f, 4.f, 4.f, 4.f}, 3, 2);
  for (bool ref : {false, true}) {
    auto out = voxelize(attrs, pts, ref);
    ASSERT_EQ(out[0].shape(), (Shape{2, 5}));
    const float* f = out[0].data_as<float>();
    EXPECT_NEAR(f[0], 0.2f, 1e-6);
    EXPECT_NEAR(f[3], 2.f, 1e-6);
    EXPECT_NEAR(f[4], 20.f, 1e-5);
    EXPECT_NEAR(f[5], 1.6f, 1e-6);
    EXPECT_NEAR(f[8], 6.f, 1e-6);
    EXPECT_NEAR(f[9], 60.f, 1e-5);
    EXPECT_EQ(out[2].data_as<int32_t>()[0], 3);
    EXPECT_EQ(out[2].data_as<int32_t>()[1], 2);
    const int32_t* c = out[1].data_as<int32_t>();
    EXPECT_EQ(std::vector<int32_t>(c, c + 8), (std::vector<int32_t>{0, 0, 0, 0, 0, 0, 0, 1}));
  }
}

TEST(Voxelize, Errors) {
  std::vector<float> v = {0.f, 0.f};
  Tensor bad = Tensor::wrap(DType::kFloat32, {1, 2}, v.data());
  auto attrs = vox_attrs({1.f, 1.f, 1.f}, {0.f, 0.f, 0.f, 4.f, 4.f, 4.f}, 3, 2);
  EXPECT_NE(error_of([&] { voxelize(attrs, bad, false); }).find("F >= 3"), std::string::npos);
  auto bad_range = vox_attrs({1.f, 1.f, 1.f}, {0.f, 0.f, 0.f, 4.f, 4.f}, 3, 2);
  EXPECT_NE(error_of([&] { voxelize(bad_range, bad, false); }).find("6 values"), std::string::npos);
  auto bad_size = vox_attrs({1.f, 0.f, 1.f}, {0.f, 0.f, 0.f, 4.f, 4.f, 4.f}, 3, 2);
  EXPECT_NE(error_of([&] { voxelize(bad_size, bad, false); }).find("voxel_size[1]"), std::string::npos);
}

// ------------------------------------------------------------------ ScatterDense

std::vector<Tensor> scatter(Shape3 shape, int64_t batch, const Tensor& x, const Tensor& idx, bool reference) {
  TestGraph tg;
  int n = tg.add("ScatterDense", "scatter", 2, 1,
                 {{"spatial_shape", ints_attr({shape[0], shape[1], shape[2]})}, {"batch_size", int_attr(batch)}});
  RunCache cache;
  return tg.run(*tg.kernel(n, reference), n, {&x, &idx}, cache);
}

TEST(ScatterDense, MatchesReference) {
  std::mt19937 rng(71);
  for (int trial = 0; trial < 4; ++trial) {
    Shape3 shape{2 + trial, 7, 5 + 2 * trial};
    int64_t n = trial == 0 ? 0 : trial == 1 ? 1 : 40 * trial;
    Tensor idx = random_sites(n, 2, shape, rng, trial % 2 ? DType::kInt64 : DType::kInt32);
    Tensor x = float_tensor({idx.dim(0), 3}, rng);
    auto a = scatter(shape, 2, x, idx, false), b = scatter(shape, 2, x, idx, true);
    ASSERT_EQ(a[0].shape(), (Shape{2, 3, shape[0], shape[1], shape[2]}));
    ASSERT_EQ(0, std::memcmp(a[0].data(), b[0].data(), a[0].nbytes()));
  }
}

TEST(ScatterDense, DiagnosesAllZerosCauses) {
  std::mt19937 rng(81);
  Tensor x = float_tensor({3, 2}, rng);
  // (batch, x, y, z) given to a (z, y, x) shape [2, 180, 200].
  Tensor xyz = int_tensor({3, 4}, {0, 150, 100, 1, 0, 20, 30, 0, 0, 199, 179, 1});
  std::string msg = error_of([&] { scatter({2, 180, 200}, 1, x, xyz, false); });
  EXPECT_NE(msg.find("node 'scatter'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("column 1 (i0) = 150 at row 0 is outside [0, 2)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max 199 exceeds the last valid index 1 by 198"), std::string::npos) << msg;
  EXPECT_NE(msg.find("the spatial columns look reversed"), std::string::npos) << msg;
  // voxelizer-resolution indices fed to a ScatterDense after downsampling.
  Tensor fine = int_tensor({3, 4}, {0, 40, 1500, 1400, 0, 3, 7, 9, 0, 10, 799, 100});
  msg = error_of([&] { scatter({2, 200, 176}, 1, x, fine, false); });
  EXPECT_NE(msg.find("need a grid of at least [41, 1501, 1401]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("out_indices of the last SparseConv"), std::string::npos) << msg;
  // batch beyond batch_size
  Tensor batch = int_tensor({3, 4}, {0, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0});
  msg = error_of([&] { scatter({2, 3, 3}, 1, x, batch, false); });
  EXPECT_NE(msg.find("column 0 (batch) = 1 at row 1 is outside [0, 1) of batch_size 1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("set batch_size to 3"), std::string::npos) << msg;
  // batch index in the last column
  Tensor last = int_tensor({3, 4}, {150, 100, 1, 0, 20, 30, 0, 0, 199, 179, 1, 0});
  msg = error_of([&] { scatter({2, 180, 200}, 1, x, last, false); });
  EXPECT_NE(msg.find("the batch index seems to be in column 3"), std::string::npos) << msg;
  // one short (mmdet3d's extra z layer)
  Tensor z41 = int_tensor({3, 4}, {0, 40, 10, 10, 0, 3, 1599, 1407, 0, 0, 0, 0});
  msg = error_of([&] { scatter({40, 1600, 1408}, 1, x, z41, false); });
  EXPECT_NE(msg.find("is one short on axis 0 (indices reach 40)"), std::string::npos) << msg;
  // padding rows of -1
  Tensor pad = int_tensor({3, 4}, {0, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1, -1});
  msg = error_of([&] { scatter({2, 3, 3}, 1, x, pad, false); });
  EXPECT_NE(msg.find("2 rows are all -1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("min -1 is below 0 by 1"), std::string::npos) << msg;
  // duplicate site
  Tensor dup = int_tensor({3, 4}, {0, 1, 1, 1, 0, 0, 2, 1, 0, 1, 1, 1}, DType::kInt64);
  msg = error_of([&] { scatter({2, 3, 3}, 1, x, dup, false); });
  EXPECT_NE(msg.find("rows 0 and 2 are the same site (0, 1, 1, 1)"), std::string::npos) << msg;
  // the reference kernel reports the same diagnosis
  EXPECT_NE(error_of([&] { scatter({2, 180, 200}, 1, x, xyz, true); }).find("look reversed"), std::string::npos);
}

// ------------------------------------------------------------------ NVIDIA scn.onnx import

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
    if (t.name().find(".weight") != std::string::npos) EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT16) << t.name();
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
