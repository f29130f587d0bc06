// SparseConv (submanifold, regular, transposed, inverse): optimised vs naive vs dense oracle,
// the sorted and hashed rulebooks, shared rulebooks, and every error of OPS.md
// "Sparse-convolution family".
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "unit/sparse/sparse_test_util.h"

namespace pointrt {
namespace sparse {
namespace {

using namespace test_helpers;

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

}  // namespace
}  // namespace sparse
}  // namespace pointrt
