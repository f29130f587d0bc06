// SessionOptions::observe and RunHooks: tools see (and may replace) intermediate values.
#include <gtest/gtest.h>

#include "support/model_builder.h"

using namespace pointrt;
using pointrt::test::ModelBuilder;

namespace {

// x -> Conv(W = -1, 1x1) -> c -> Relu -> r -> Add(r, x) -> y: Conv+Relu(+Add) fuse when nothing watches c.
Model conv_relu_add() {
  ModelBuilder b;
  b.input("x", DType::kFloat32, {int64_t(1), int64_t(1), int64_t(2), int64_t(2)});
  Tensor w = Tensor::allocate(DType::kFloat32, {1, 1, 1, 1});
  w.data_as<float>()[0] = -1.f;
  b.initializer("W", w);
  b.node("Conv", {"x", "W"}, {"c"}, "", "conv");
  b.node("Relu", {"c"}, {"r"}, "", "relu");
  b.node("Add", {"r", "x"}, {"y"}, "", "add");
  b.output("y", DType::kFloat32);
  return b.load("m.onnx");
}

Tensor input() {
  Tensor x = Tensor::allocate(DType::kFloat32, {1, 1, 2, 2});
  float v[] = {1.f, -2.f, 3.f, -4.f};
  std::copy(v, v + 4, x.data_as<float>());
  return x;
}

}  // namespace

TEST(RunHooks, ObservedValuesAreSeenAsTheFileDefinesThem) {
  SessionOptions o;
  o.observe = {"c"};
  Session s(conv_relu_add(), o);
  std::vector<std::string> seen;
  std::vector<float> c;
  RunHooks hooks;
  hooks.on_value = [&](const std::string& name, const Tensor& t) {
    seen.push_back(name);
    c.assign(t.data_as<float>(), t.data_as<float>() + t.numel());
    return Tensor();
  };
  Tensor x = input();
  auto y = s.run({{"x", x}}, hooks);
  ASSERT_EQ(seen, std::vector<std::string>{"c"});
  EXPECT_EQ(c, (std::vector<float>{-1.f, 2.f, -3.f, 4.f}));  // the convolution alone, before Relu
  const float* out = y[0].data_as<float>();
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{1.f, 0.f, 3.f, 0.f}));
}

TEST(RunHooks, EveryValueWithStarAndReplacementsReachLaterNodes) {
  SessionOptions o;
  o.observe = {"*"};
  Session s(conv_relu_add(), o);
  std::vector<std::string> seen;
  RunHooks hooks;
  Tensor zeros = Tensor::zeros(DType::kFloat32, {1, 1, 2, 2});
  hooks.on_value = [&](const std::string& name, const Tensor&) {
    seen.push_back(name);
    return name == "r" ? zeros : Tensor();
  };
  Tensor x = input();
  auto y = s.run({{"x", x}}, hooks);
  EXPECT_EQ(seen, (std::vector<std::string>{"c", "r", "y"}));
  const float* out = y[0].data_as<float>();
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{1.f, -2.f, 3.f, -4.f}));  // 0 + x
  // Without hooks the same session runs as usual, and the hooks changed nothing for later runs.
  auto plain = s.run({{"x", x}});
  EXPECT_EQ(plain[0].data_as<float>()[1], 0.f);
}

TEST(RunHooks, WrongReplacementsAndUnknownNamesAreErrors) {
  SessionOptions o;
  o.observe = {"nope"};
  try {
    Session bad(conv_relu_add(), o);
    FAIL() << "no error for an unknown observed value";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nope'"), std::string::npos) << e.what();
  }
  o.observe = {"r"};
  Session s(conv_relu_add(), o);
  RunHooks hooks;
  hooks.on_value = [](const std::string&, const Tensor&) { return Tensor::zeros(DType::kFloat32, {4}); };
  Tensor x = input();
  try {
    s.run({{"x", x}}, hooks);
    FAIL() << "no error for a replacement of another shape";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("replaced 'r'"), std::string::npos) << e.what();
  }
}
