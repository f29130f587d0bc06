// Einsum: equations against the reference on awkward shapes; errors.
#include <gtest/gtest.h>

#include "ops/onnx/reduce/einsum.h"
#include "unit/reduce/reduce_test_util.h"

using namespace pointrt;
using namespace pointrt::reduce;
using namespace pointrt::reduce::test_helpers;

namespace {

TEST(Einsum, MatchesReference) {
  struct Case {
    std::string eq;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{15, 16}, {16, 17}}},
      {"bij,bjk->bik", {{3, 5, 4}, {3, 4, 2}}},
      {"bhqd,bhkd->bhqk", {{2, 3, 5, 4}, {2, 3, 6, 4}}},
      {"ki,kj->ij", {{16, 15}, {16, 17}}},
      {"bki,bjk->bij", {{3, 4, 5}, {3, 6, 4}}},
      {"bki,bkj->bij", {{3, 4, 1}, {3, 4, 6}}},
      {"ii->i", {{5, 5}}},
      {"ii", {{4, 4}}},
      {"iij->j", {{3, 3, 4}}},
      {"ij->", {{3, 7}}},
      {"ij->ji", {{3, 7}}},
      {"ij", {{3, 7}}},
      {"ba", {{3, 7}}},
      {"i,i", {{9}, {9}}},
      {"i,j->ij", {{4}, {5}}},
      {"i,j", {{4}, {5}}},
      {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 2}}},
      {"...ij,...jk", {{2, 3, 4}, {4, 2}}},
      {"ab...,b->a...", {{3, 4, 2, 2}, {4}}},
      {"...,...->...", {{2, 3}, {3}}},
      {"ijk,ikl,ilm->im", {{2, 3, 4}, {2, 4, 5}, {2, 5, 6}}},
      {"abc,cd->abd", {{2, 3, 4}, {4, 5}}},
      {"abc,cd->dba", {{2, 3, 4}, {4, 5}}},
      {"ij,ij->i", {{4, 6}, {4, 6}}},
      {"bii,bj->bij", {{2, 3, 3}, {2, 4}}},
      {"ij,kl->", {{2, 3}, {4, 5}}},
      {"ij,jk->ik", {{0, 3}, {3, 4}}},
      {"ij,jk->ik", {{2, 0}, {0, 4}}},
      {"Ab,ba->Aa", {{3, 2}, {2, 4}}},
      {"", {{}}},
      {",->", {{}, {}}},
      {" i j , j k -> i k ", {{2, 3}, {3, 2}}},
  };
  uint32_t seed = 91;
  for (const Case& c : cases)
    for (DType dt : {DType::kFloat32, DType::kInt64, DType::kFloat64}) {
      std::vector<Tensor> ins;
      std::vector<const Tensor*> ptrs;
      for (const Shape& s : c.shapes) ins.push_back(random_tensor(dt, s, seed++));
      for (const Tensor& t : ins) ptrs.push_back(&t);
      EinsumPlan plan = resolve_einsum(parse_einsum_equation(c.eq, "test"), c.shapes, "test");
      Tensor y = Tensor::allocate(dt, plan.output_shape), r = Tensor::allocate(dt, plan.output_shape);
      einsum_optimized(plan, ptrs, y);
      einsum_reference(plan, ptrs, r);
      test::expect_close(y, r, test::Tol{1e-4, 1e-4}, str_cat("einsum '", c.eq, "' ", dtype_name(dt)));
      // Through a node too.
      auto out = run_node({"Einsum", 12, {{"equation", string_attr(c.eq)}}, ins});
      test::expect_close(out[0], r, test::Tol{1e-4, 1e-4}, str_cat("einsum node '", c.eq, "'"));
    }
  // Implicit output order: ASCII (upper case first).
  EinsumPlan p = resolve_einsum(parse_einsum_equation("ba,aB", "t"), {{2, 3}, {3, 4}}, "t");
  EXPECT_EQ(p.output_shape, (Shape{4, 2}));
}

TEST(Einsum, Errors) {
  Tensor a = random_tensor(DType::kFloat32, {2, 3}, 1), b = random_tensor(DType::kFloat32, {4, 5}, 2);
  expect_error_with(
      [&] {
        run_node({"Einsum", 12, {{"equation", string_attr("ij,jk->ik")}}, {a, b}});
      },
      {"n0", "label 'j'", "size 3", "4"});
  expect_error_with([&] { run_node({"Einsum", 12, {{"equation", string_attr("ijk->i")}}, {a}}); }, {"n0", "[2, 3]"});
  expect_error_with([&] { run_node({"Einsum", 12, {{"equation", string_attr("ij->iz")}}, {a}}); }, {"n0", "'z'"});
  expect_error_with(
      [&] {
        run_node({"Einsum", 12, {{"equation", string_attr("ij,jk->ik")}}, {a}});
      },
      {"n0", "2 input terms"});
  expect_error_with(
      [&] {
        run_node({"Einsum", 12, {{"equation", string_attr("i.j")}}, {a}});
      },
      {"n0", "unexpected character"});
}

}  // namespace
