// BitShift and BitwiseAnd/Or/Xor/Not against plain C++ on every integer type they take,
// with broadcasting, shifts past the type's width, and the errors for non-integer inputs.
#include <gtest/gtest.h>

#include <limits>

#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

template <typename T>
void check_shifts() {
  const int bits = sizeof(T) * 8;
  const std::vector<T> x = {T(1), T(3), std::numeric_limits<T>::max(), T(0), T(255)};
  const std::vector<T> s = {T(0), T(1), T(bits - 1), T(bits), T(bits + 5)};
  for (const char* direction : {"LEFT", "RIGHT"}) {
    NodeCase c{"BitShift", 11, "", {{"x", tensor_of<T>({5}, x)}, {"s", tensor_of<T>({5}, s)}}};
    c.attrs = [direction](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "direction", direction); };
    const auto y = values_of<T>(run_node(c)[0]);
    for (size_t i = 0; i < x.size(); ++i) {
      T want = 0;
      if (s[i] < bits) want = direction[0] == 'L' ? T(x[i] << s[i]) : T(x[i] >> s[i]);
      EXPECT_EQ(y[i], want) << direction << " " << +x[i] << " by " << +s[i];
    }
  }
}

template <typename T>
void check_bitwise() {
  const std::vector<T> a = {T(0), T(5), T(-1), std::numeric_limits<T>::min(), T(12), T(7)};
  const std::vector<T> b = {T(3), T(6)};  // broadcast [3, 2] with [2]
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    NodeCase c{op, 18, "", {{"a", tensor_of<T>({3, 2}, a)}, {"b", tensor_of<T>({2}, b)}}};
    const auto y = values_of<T>(run_node(c)[0]);
    for (size_t i = 0; i < a.size(); ++i) {
      const T p = a[i], q = b[i % 2];
      const T want = op[7] == 'A' ? T(p & q) : (op[7] == 'O' ? T(p | q) : T(p ^ q));
      EXPECT_EQ(y[i], want) << op << " " << +p << " " << +q;
    }
  }
  NodeCase n{"BitwiseNot", 18, "", {{"a", tensor_of<T>({3, 2}, a)}}};
  const auto y = values_of<T>(run_node(n)[0]);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(y[i], T(~a[i]));
}

}  // namespace

TEST(BitShift, EveryUnsignedType) {
  check_shifts<uint8_t>();
  check_shifts<uint16_t>();
  check_shifts<uint32_t>();
  check_shifts<uint64_t>();
}

TEST(Bitwise, EveryIntegerType) {
  check_bitwise<int8_t>();
  check_bitwise<int16_t>();
  check_bitwise<int32_t>();
  check_bitwise<int64_t>();
  check_bitwise<uint8_t>();
  check_bitwise<uint64_t>();
}

TEST(Bitwise, Errors) {
  NodeCase c{"BitShift", 11, "", {{"x", tensor_of<uint8_t>({1}, {1})}, {"s", tensor_of<uint8_t>({1}, {1})}}};
  c.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_string(n, "direction", "UP"); };
  EXPECT_NE(node_error(c).find("attribute 'direction' is 'UP'"), std::string::npos) << node_error(c);
  NodeCase f{"BitwiseAnd", 18, "", {{"a", iota_tensor({2})}, {"b", iota_tensor({2})}}};
  EXPECT_NE(node_error(f).find("float32, which this operator does not support"), std::string::npos) << node_error(f);
}
