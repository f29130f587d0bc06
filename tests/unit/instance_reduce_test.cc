// pointrt::InstanceReduce: optimised vs reference (bit-identical) on awkward sizes, a hand
// example with an empty instance, and errors through a Session.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ops/pose/instance_reduce.h"
#include "support/single_node.h"

using namespace pointrt;
using namespace pointrt::pose;
using namespace pointrt::test;

TEST(InstanceReduce, HandExample) {
  // Points 0 and 2 in instance 1, point 1 ignored (-1), instance 0 empty.
  const std::vector<float> values = {1, 10, 5, 50, 3, 30};
  const std::vector<int32_t> labels = {1, -1, 1};
  InstanceReduceAttrs a{2, true, -1};
  std::vector<float> out(4, -7.f);
  std::vector<int32_t> counts(2, -7);
  for (auto fn : {instance_reduce_ref, instance_reduce}) {
    fn(values.data(), labels.data(), 1, 3, 2, a, out.data(), counts.data());
    EXPECT_EQ(out, (std::vector<float>{0, 0, 2, 20}));
    EXPECT_EQ(counts, (std::vector<int32_t>{0, 2}));
  }
  a.mean = false;
  a.ignore_label = 1;
  instance_reduce(values.data(), labels.data(), 1, 3, 2, a, out.data(), counts.data());
  EXPECT_EQ(out, (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(counts, (std::vector<int32_t>{0, 0}));
}

TEST(InstanceReduce, OptimisedMatchesReferenceBitwise) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-5.f, 5.f);
  for (int64_t n : {0, 1, 7, 255, 1000, 5000})
    for (int64_t d : {1, 3, 15, 16, 17, 40})
      for (bool mean : {true, false}) {
        const int64_t b = 2, c = 5;
        std::vector<float> values(static_cast<size_t>(b * n * d));
        std::vector<int32_t> labels(static_cast<size_t>(b * n));
        for (auto& v : values) v = u(rng);
        for (auto& l : labels) l = static_cast<int32_t>(rng() % 7) - 2;
        const InstanceReduceAttrs a{c, mean, 3};
        std::vector<float> r1(static_cast<size_t>(b * c * d)), r2(r1.size(), -7.f);
        std::vector<int32_t> c1(static_cast<size_t>(b * c)), c2(c1.size(), -7);
        instance_reduce_ref(values.data(), labels.data(), b, n, d, a, r1.data(), c1.data());
        instance_reduce(values.data(), labels.data(), b, n, d, a, r2.data(), c2.data());
        EXPECT_EQ(r1, r2) << n << " " << d;
        EXPECT_EQ(c1, c2);
      }
}

TEST(InstanceReduce, SessionAndErrors) {
  auto attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "num_instances", 2); };
  auto out = run_pointrt_node("InstanceReduce",
                              {{"values", make_tensor<float>({1, 3, 2}, {1, 10, 5, 50, 3, 30})},
                               {"labels", make_tensor<int64_t>({1, 3}, {1, -1, 1})}},
                              {"reduced", "counts"}, attrs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{1, 2, 2}));
  EXPECT_EQ(out[0].data_as<float>()[3], 20.f);
  EXPECT_EQ(out[1].data_as<int32_t>()[1], 2);
  expect_error_with(
      [&] {
        run_pointrt_node("InstanceReduce",
                         {{"values", make_tensor<float>({1, 3, 2}, std::vector<float>(6))},
                          {"labels", make_tensor<int32_t>({1, 3}, {0, 2, 1})}},
                         {"reduced"}, attrs);
      },
      {"node0", "'labels'", "label 2 at [0, 1]"});
  expect_error_with(
      [&] {
        run_pointrt_node("InstanceReduce",
                         {{"values", make_tensor<float>({1, 3, 2}, std::vector<float>(6))},
                          {"labels", make_tensor<float>({1, 3}, std::vector<float>(3))}},
                         {"reduced"}, attrs);
      },
      {"node0", "'labels'", "float32", "int32, int64 or uint32"});
  expect_error_with(
      [&] {
        run_pointrt_node("InstanceReduce",
                         {{"values", make_tensor<float>({1, 3, 2}, std::vector<float>(6))},
                          {"labels", make_tensor<int32_t>({1, 3}, {0, 0, 0})}},
                         {"reduced"}, [](onnx::NodeProto& n) {
                           ModelBuilder::attr_int(n, "num_instances", 2);
                           ModelBuilder::attr_string(n, "reduction", "max");
                         });
      },
      {"node0", "reduction", "'max'"});
}
