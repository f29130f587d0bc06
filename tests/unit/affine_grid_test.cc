// AffineGrid: the identity transform reproduces the base grid (both align_corners modes, 2-D
// and 3-D, size-1 axes), a translation shifts it, and the shape errors.
#include <gtest/gtest.h>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

TEST(AffineGrid, IdentityIsTheBaseGrid) {
  NodeCase c{
      "AffineGrid",
      20,
      "",
      {{"theta", tensor_of<float>({1, 2, 3}, {1, 0, 0, 0, 1, 0.5f})}, {"size", tensor_of<int64_t>({4}, {1, 1, 2, 3})}}};
  // align_corners = 0: x in {-2/3, 0, 2/3}, y in {-1/2, 1/2}; the translation adds 0.5 to y.
  auto g = values_of<float>(run_node(c)[0]);
  ASSERT_EQ(g.size(), 12u);
  EXPECT_NEAR(g[0], -2.f / 3, 1e-6);
  EXPECT_NEAR(g[1], 0.f, 1e-6);
  EXPECT_NEAR(g[4], 2.f / 3, 1e-6);
  EXPECT_NEAR(g[11], 1.f, 1e-6);
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "align_corners", 1); };
  g = values_of<float>(run_node(c)[0]);
  EXPECT_NEAR(g[0], -1.f, 1e-6);
  EXPECT_NEAR(g[4], 1.f, 1e-6);
  EXPECT_NEAR(g[1], -0.5f, 1e-6);
}

TEST(AffineGrid, ThreeDAndErrors) {
  NodeCase c{"AffineGrid",
             20,
             "",
             {{"theta", tensor_of<float>({1, 3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0})},
              {"size", tensor_of<int64_t>({5}, {1, 1, 1, 2, 1})}}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "align_corners", 1); };
  // D = 1 and W = 1 give coordinate 0; H = 2 gives y = -1, 1.
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{0, -1, 0, 0, 1, 0}));
  c.inputs[1].second = tensor_of<int64_t>({4}, {1, 1, 2, 2});
  EXPECT_NE(node_error(c).find("expected [1, 2, 3]"), std::string::npos) << node_error(c);
}
