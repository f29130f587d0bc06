// DepthToSpace (DCR, CRD) and SpaceToDepth: the strided-copy kernel against the index-formula
// reference on awkward sizes, a round trip, ONNX's documented DCR/CRD example, and the errors.
#include <gtest/gtest.h>

#include <numeric>

#include "ops/onnx/tensor/depth_space.h"
#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;
using tensor::DepthSpaceMode;

TEST(DepthSpace, KernelMatchesReference) {
  for (DepthSpaceMode mode :
       {DepthSpaceMode::kDepthToSpaceDCR, DepthSpaceMode::kDepthToSpaceCRD, DepthSpaceMode::kSpaceToDepth})
    for (int64_t b : {1, 2, 3})
      for (Shape base :
           {Shape{1, 1, 1, 1}, Shape{2, 3, 5, 7}, Shape{1, 2, 1, 17}, Shape{0, 1, 2, 2}, Shape{3, 1, 4, 1}})
        for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt64, DType::kBool}) {
          Shape s = base;
          if (mode == DepthSpaceMode::kSpaceToDepth) {
            s[2] *= b;
            s[3] *= b;
          } else {
            s[1] *= b * b;
          }
          Tensor x = Tensor::allocate(dtype, s);
          auto* p = static_cast<uint8_t*>(x.data());
          std::iota(p, p + x.nbytes(), uint8_t(1));
          const Shape out = tensor::depth_space_shape(s, b, mode, "t");
          Tensor fast = Tensor::allocate(dtype, out), ref = Tensor::allocate(dtype, out);
          tensor::depth_space_cpu(x, b, mode, fast);
          tensor::depth_space_ref(x, b, mode, ref);
          ASSERT_EQ(0, std::memcmp(fast.data(), ref.data(), fast.nbytes()))
              << shape_to_string(s) << " b=" << b << " mode=" << static_cast<int>(mode);
        }
}

TEST(DepthSpace, OnnxExampleAndRoundTrip) {
  // The ONNX operator page's example: x = arange(48).reshape(1, 8, 2, 3), blocksize 2.
  const Tensor x = iota_tensor({1, 8, 2, 3});
  NodeCase dcr{"DepthToSpace", 13, "", {{"x", x}}};
  dcr.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "blocksize", 2); };
  const Tensor y = run_node(dcr)[0];
  ASSERT_EQ(y.shape(), (Shape{1, 2, 4, 6}));
  EXPECT_EQ(std::vector<float>(y.data_as<float>(), y.data_as<float>() + 6), (std::vector<float>{0, 12, 1, 13, 2, 14}));
  NodeCase crd = dcr;
  crd.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "blocksize", 2);
    ModelBuilder::attr_string(n, "mode", "CRD");
  };
  const Tensor z = run_node(crd)[0];
  EXPECT_EQ(std::vector<float>(z.data_as<float>(), z.data_as<float>() + 6), (std::vector<float>{0, 6, 1, 7, 2, 8}));
  NodeCase back{"SpaceToDepth", 13, "", {{"d", y}}};
  back.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "blocksize", 2); };
  EXPECT_EQ(values_of<float>(run_node(back)[0]), values_of<float>(x));  // SpaceToDepth inverts DCR
}

TEST(DepthSpace, Errors) {
  NodeCase c{"DepthToSpace", 13, "", {{"x", iota_tensor({1, 6, 2, 2})}}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "blocksize", 2); };
  EXPECT_NE(node_error(c).find("must be divisible by blocksize^2 = 4"), std::string::npos) << node_error(c);
  NodeCase s{"SpaceToDepth", 13, "", {{"x", iota_tensor({1, 1, 3, 4})}}};
  s.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "blocksize", 2); };
  EXPECT_NE(node_error(s).find("H and W of input [1, 1, 3, 4] must be divisible"), std::string::npos);
  NodeCase r{"SpaceToDepth", 13, "", {{"x", iota_tensor({4, 4})}}};
  r.attrs = s.attrs;
  EXPECT_NE(node_error(r).find("must be 4-D"), std::string::npos);
}
