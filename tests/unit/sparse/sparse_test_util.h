// Helpers shared by the sparse-family tests (tests/unit/sparse/*_test.cc): kernels run on given
// tensors, random features and sites, comparisons of sparse results, error capture.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "graph/ir.h"
#include "ops/kernel.h"
#include "ops/sparse/scatter_dense.h"
#include "ops/sparse/sparse_conv.h"
#include "ops/sparse/voxelize.h"
#include "pointrt/pointrt.h"
#include "support/expect_error.h"
#include "support/kernel_runner.h"

namespace pointrt::sparse::test_helpers {

using pointrt::test::float_attr;
using pointrt::test::floats_attr;
using pointrt::test::HeapAllocator;
using pointrt::test::int_attr;
using pointrt::test::ints_attr;
using pointrt::test::string_attr;

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

inline Tensor float_tensor(Shape s, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  Tensor t = Tensor::allocate(DType::kFloat32, s);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = u(rng);
  return t;
}

// n unique random sites in [0, batches) x shape; int32 or int64.
inline Tensor random_sites(int64_t n, int64_t batches, Shape3 shape, std::mt19937& rng, DType dt = DType::kInt32) {
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

inline Tensor int_tensor(Shape s, std::vector<int64_t> v, DType dt = DType::kInt32) {
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
inline void expect_same(const Tensor& fa, const Tensor& ia, const Tensor& fb, const Tensor& ib,
                        const std::string& what) {
  ASSERT_EQ(fa.shape(), fb.shape()) << what;
  ASSERT_EQ(ia.shape(), ib.shape()) << what;
  for (int64_t i = 0; i < ia.numel(); ++i)
    ASSERT_EQ(ia.data_as<int32_t>()[i], ib.data_as<int32_t>()[i]) << what << " site element " << i;
  for (int64_t i = 0; i < fa.numel(); ++i)
    ASSERT_NEAR(fa.data_as<float>()[i], fb.data_as<float>()[i], 1e-4f * (1 + std::fabs(fb.data_as<float>()[i])))
        << what << " feature element " << i;
}

// Compare a result with the dense oracle as a site -> features map.
inline void expect_matches_dense(const Tensor& f, const Tensor& idx, const SparseResult& dense,
                                 const std::string& what) {
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

inline bool sorted_sites(const Tensor& idx) {
  for (int64_t r = 1; r < idx.dim(0); ++r)
    if (!std::lexicographical_compare(idx.data_as<int32_t>() + 4 * (r - 1), idx.data_as<int32_t>() + 4 * r,
                                      idx.data_as<int32_t>() + 4 * r, idx.data_as<int32_t>() + 4 * r + 4))
      return false;
  return true;
}

inline std::string error_of(const std::function<void()>& f) { return test::error_text(f); }

}  // namespace pointrt::sparse::test_helpers
