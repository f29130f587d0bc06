// 4-bit integers (int4/uint4, opset 21) and low-bit quantization: packing two per byte (low
// nibble first) at sizes 0, 1, odd and even; initializers raw and in int32_data; Cast to and from
// int4 (clamp, then round half to even, as ONNX's reference does); QuantizeLinear and
// DequantizeLinear with int4 and float8 zero points, blocked too; tensor_compare on int4; and
// the errors (a truncated packed initializer, an int4 zero point before opset 21).
#include <gtest/gtest.h>

#include <cmath>

#include "core/float8.h"
#include "core/subbyte.h"
#include "graph/tensor_proto.h"
#include "io/tensor_compare.h"
#include "onnx/onnx_pb.h"
#include "support/node_runner.h"

using namespace pointrt;
using namespace pointrt::test;

namespace {

Tensor small_tensor(DType t, Shape s, const std::vector<int>& v) {
  Tensor r = Tensor::allocate(t, std::move(s));
  for (size_t i = 0; i < v.size(); ++i) r.data_as<uint8_t>()[i] = static_cast<uint8_t>(v[i]);
  return r;
}

std::vector<int> int4_values(const Tensor& t) {
  std::vector<int> r;
  for (int64_t i = 0; i < t.numel(); ++i)
    r.push_back(t.dtype() == DType::kInt4 ? t.data_as<int8_t>()[i] : t.data_as<uint8_t>()[i]);
  return r;
}

NodeCase cast_to(Tensor x, DType to, int opset = 21) {
  NodeCase c{"Cast", opset, "", {{"x", std::move(x)}}};
  c.attrs = [to](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "to", static_cast<int>(to)); };
  return c;
}

}  // namespace

TEST(Int4, PackUnpackEverySizeAndValue) {
  for (int64_t n : {0, 1, 2, 7, 16, 33}) {
    for (bool is_signed : {true, false}) {
      std::vector<uint8_t> v(n), back(n, 0xaa);
      for (int64_t i = 0; i < n; ++i) {
        const int x = static_cast<int>((i * 5 + 3) % 16) - (is_signed ? 8 : 0);
        v[i] = static_cast<uint8_t>(x);
      }
      std::vector<uint8_t> packed(packed_int4_bytes(n) + 1, 0x77);
      pack_int4(v.data(), n, packed.data());
      EXPECT_EQ(packed.back(), 0x77) << "wrote past " << packed_int4_bytes(n) << " bytes";
      if (n % 2) {
        EXPECT_EQ(packed[n / 2] >> 4, 0) << "the unused nibble is 0";
      }
      if (n >= 2) {
        EXPECT_EQ(packed[0], (v[0] & 0x0f) | ((v[1] & 0x0f) << 4)) << "low nibble first";
      }
      unpack_int4(packed.data(), n, is_signed, back.data());
      EXPECT_EQ(back, v) << n;
    }
  }
  EXPECT_EQ(packed_int4_bytes(0), 0u);
  EXPECT_EQ(packed_int4_bytes(5), 3u);
}

TEST(Int4, InitializersRawTypedAndErrors) {
  onnx::TensorProto p;
  p.set_name("w");
  p.set_data_type(static_cast<int>(DType::kInt4));
  p.add_dims(3);
  p.set_raw_data(std::string("\x8f\x07", 2));  // -1, -8 | 7, (unused)
  Tensor t = tensor_from_proto(p, ExternalDataRoots(), "test");
  EXPECT_EQ(t.dtype(), DType::kInt4);
  EXPECT_EQ(t.nbytes(), 3u);  // unpacked, one per byte
  EXPECT_EQ(int4_values(t), (std::vector<int>{-1, -8, 7}));
  p.clear_raw_data();
  p.set_data_type(static_cast<int>(DType::kUInt4));
  p.add_int32_data(0x8f);
  p.add_int32_data(0x07);
  EXPECT_EQ(int4_values(tensor_from_proto(p, ExternalDataRoots(), "test")), (std::vector<int>{15, 8, 7}));
  p.clear_int32_data();
  p.set_raw_data(std::string("\x8f", 1));
  EXPECT_EQ(error_text([&] { tensor_from_proto(p, ExternalDataRoots(), "test"); }),
            "test tensor 'w': has 1 bytes of data, expected 2 (3 packed uint4 values) for shape [3]");
  p.clear_dims();
  p.add_dims(0);
  p.set_raw_data("");
  EXPECT_EQ(tensor_from_proto(p, ExternalDataRoots(), "test").numel(), 0);
  // A huge declared shape with a few bytes is an error before anything of its size is allocated
  // (the loader fuzzer found an allocation of 2^62 bytes here).
  p.clear_dims();
  p.add_dims(int64_t(1) << 40);
  p.add_dims(int64_t(1) << 20);
  p.set_raw_data(std::string("\x01", 1));
  for (bool typed : {false, true}) {
    if (typed) {
      p.clear_raw_data();
      p.add_int32_data(1);
    }
    EXPECT_NE(error_text([&] { tensor_from_proto(p, ExternalDataRoots(), "test"); }).find("test tensor 'w'"),
              std::string::npos);
  }
}

TEST(Int4, CastClampsAndRoundsToEven) {
  const Tensor x = tensor_of<float>({9}, {-9.f, -8.5f, -7.5f, -0.5f, 0.5f, 1.5f, 2.5f, 7.5f, NAN});
  EXPECT_EQ(int4_values(run_node(cast_to(x, DType::kInt4))[0]), (std::vector<int>{-8, -8, -8, 0, 0, 2, 2, 7, 0}));
  EXPECT_EQ(int4_values(run_node(cast_to(x, DType::kUInt4))[0]), (std::vector<int>{0, 0, 0, 0, 0, 2, 2, 8, 0}));
  const Tensor i = tensor_of<int64_t>({3}, {-100, 3, 100});
  EXPECT_EQ(int4_values(run_node(cast_to(i, DType::kInt4))[0]), (std::vector<int>{-8, 3, 7}));
  // From int4: values, to float, int32, uint4 (clamped) and float8.
  const Tensor q = small_tensor(DType::kInt4, {3}, {-8, -1, 7});
  EXPECT_EQ(values_of<float>(run_node(cast_to(q, DType::kFloat32))[0]), (std::vector<float>{-8, -1, 7}));
  EXPECT_EQ(values_of<int32_t>(run_node(cast_to(q, DType::kInt32))[0]), (std::vector<int32_t>{-8, -1, 7}));
  EXPECT_EQ(int4_values(run_node(cast_to(q, DType::kUInt4))[0]), (std::vector<int>{0, 0, 7}));
  const Tensor f8 = run_node(cast_to(q, DType::kFloat8E4M3FN))[0];
  EXPECT_EQ(float8_to_float(f8.data_as<uint8_t>()[0], DType::kFloat8E4M3FN), -8.f);
  // int4 targets exist from opset 21.
  EXPECT_NE(node_error(cast_to(x, DType::kInt4, 19)).find("Cast to int4 (to=22) is not supported before opset 21"),
            std::string::npos)
      << node_error(cast_to(x, DType::kInt4, 19));
  // An int4 initializer goes through the file packed (odd count) and comes back unpacked.
  NodeCase c = cast_to(small_tensor(DType::kUInt4, {5}, {1, 15, 0, 9, 3}), DType::kInt64);
  c.constant_inputs = true;
  EXPECT_EQ(values_of<int64_t>(run_node(c)[0]), (std::vector<int64_t>{1, 15, 0, 9, 3}));
}

TEST(Int4, CompareIsExact) {
  const Tensor a = small_tensor(DType::kInt4, {2}, {-8, 7}), b = small_tensor(DType::kInt4, {2}, {-8, 6});
  EXPECT_TRUE(compare_tensors(a, a, 0, 0).ok);
  const CompareResult r = compare_tensors(a, b, 1, 1);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.worst_got, 7);
  EXPECT_EQ(compare_tensors(a, small_tensor(DType::kUInt4, {2}, {8, 7}), 0, 0).message,
            "element type int4 but the reference is uint4");
}

TEST(LowBitQuant, QuantizeLinearInt4AndFloat8) {
  const Tensor x = tensor_of<float>({6}, {-20.f, -3.f, 1.f, 3.f, 5.f, 100.f});
  NodeCase c{"QuantizeLinear",
             21,
             "",
             {{"x", x}, {"s", tensor_of<float>({}, {2.f})}, {"z", small_tensor(DType::kInt4, {}, {1})}}};
  EXPECT_EQ(int4_values(run_node(c)[0]), (std::vector<int>{-8, -1, 1, 3, 3, 7}));  // -1.5 -> -2 + 1; 0.5 -> 0 + 1
  c.inputs[2].second = small_tensor(DType::kUInt4, {}, {8});
  EXPECT_EQ(int4_values(run_node(c)[0]), (std::vector<int>{0, 6, 8, 10, 10, 15}));
  // float8: x / scale rounded to the format; 100 / 2 = 50 is 48 in E4M3FN (a tie between 48 and 52: even).
  c.inputs[2].second = Tensor::zeros(DType::kFloat8E4M3FN, {});
  c.opset = 19;
  const Tensor y = run_node(c)[0];
  ASSERT_EQ(y.dtype(), DType::kFloat8E4M3FN);
  EXPECT_EQ(float8_to_float(y.data_as<uint8_t>()[5], DType::kFloat8E4M3FN), 48.f);
  EXPECT_EQ(float8_to_float(y.data_as<uint8_t>()[1], DType::kFloat8E4M3FN), -1.5f);
  // saturate = 0: beyond 448 is NaN.
  NodeCase big{"QuantizeLinear",
               19,
               "",
               {{"x", tensor_of<float>({1}, {1e4f})},
                {"s", tensor_of<float>({}, {1.f})},
                {"z", Tensor::zeros(DType::kFloat8E4M3FN, {})}}};
  big.attrs = [](onnx::NodeProto& n) { ModelBuilder::attr_int(n, "saturate", 0); };
  EXPECT_TRUE(std::isnan(float8_to_float(run_node(big)[0].data_as<uint8_t>()[0], DType::kFloat8E4M3FN)));
  // An int4 zero point needs opset 21.
  c.inputs[2].second = small_tensor(DType::kInt4, {}, {1});
  EXPECT_NE(
      node_error(c).find("zero point 'z' has element type int4, expected int8, uint8, int16, uint16 or a float8 type"),
      std::string::npos)
      << node_error(c);
}

TEST(LowBitQuant, DequantizeLinearInt4BlockedAndFloat8) {
  // Blocked (block 2 along axis 1) uint4 with zero points: odd count 3 per row.
  const Tensor x = small_tensor(DType::kUInt4, {2, 3}, {0, 15, 8, 1, 2, 3});
  const Tensor s = tensor_of<float>({2, 2}, {1.f, 2.f, 0.5f, 4.f});
  const Tensor z = small_tensor(DType::kUInt4, {2, 2}, {8, 0, 1, 3});
  NodeCase c{"DequantizeLinear", 21, "", {{"x", x}, {"s", s}, {"z", z}}};
  c.attrs = [](onnx::NodeProto& n) {
    ModelBuilder::attr_int(n, "axis", 1);
    ModelBuilder::attr_int(n, "block_size", 2);
  };
  EXPECT_EQ(values_of<float>(run_node(c)[0]), (std::vector<float>{-8.f, 7.f, 16.f, 0.f, 0.5f, 0.f}));
  // float8 input (opset 19): decoded times the scale.
  Tensor f = Tensor::allocate(DType::kFloat8E5M2, {3});
  f.data_as<uint8_t>()[0] = 0x3c;  // 1
  f.data_as<uint8_t>()[1] = 0xc2;  // -3
  f.data_as<uint8_t>()[2] = 0x7c;  // inf
  NodeCase d{"DequantizeLinear", 19, "", {{"x", f}, {"s", tensor_of<float>({}, {0.5f})}}};
  const auto v = values_of<float>(run_node(d)[0]);
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_EQ(v[1], -1.5f);
  EXPECT_TRUE(std::isinf(v[2]));
}

TEST(Int4, ZeroCopyShapeOpsServeLowBitTypes) {
  for (DType t : {DType::kInt4, DType::kUInt4, DType::kFloat8E4M3FNUZ}) {
    NodeCase c{
        "Reshape", 21, "", {{"x", small_tensor(t, {5}, {1, 2, 3, 4, 5})}, {"s", tensor_of<int64_t>({2}, {5, 1})}}};
    const Tensor y = run_node(c)[0];
    EXPECT_EQ(y.dtype(), t);
    EXPECT_EQ(y.shape(), (Shape{5, 1}));
    EXPECT_EQ(int4_values(y), (std::vector<int>{1, 2, 3, 4, 5}));
    NodeCase id{"Identity", 21, "", {{"x", small_tensor(t, {1}, {3})}}};
    EXPECT_EQ(run_node(id)[0].dtype(), t);
  }
}
