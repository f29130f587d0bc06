// Operator table rows of the ONNX elementwise family (opsets 1-21). Rows are split where an
// operator's semantics or its type list changed; each row declares exactly the element types
// of its typed input that the kernel supports (float16 is computed in float32). Version 1 of
// the unary operators differs from version 6 only by the ignored `consumed_inputs` attribute;
// binary operators before opset 7 broadcast the legacy way (`broadcast`/`axis` attributes,
// ops/version_adapter.h).
#include "ops/families.h"
#include "ops/onnx/elementwise/elementwise.h"
#include "ops/onnx/elementwise/random.h"
#include "ops/version_adapter.h"

namespace pointrt::elementwise {
namespace {

std::vector<DType> plus(std::vector<DType> a, const std::vector<DType>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace
}  // namespace pointrt::elementwise

namespace pointrt {

Family register_onnx_elementwise() {
  Family family{"onnx/elementwise"};
  OpTable& t = family.rows;
  using namespace elementwise;
  const std::vector<DType> kHalf = {DType::kFloat16};
  const std::vector<DType> F = plus(kHalf, kFloatTypes);    // float16, float, double
  const std::vector<DType> N = plus(kHalf, kNumericTypes);  // every number
  const std::vector<DType> A = plus(kHalf, kAllTypes);      // every number and bool
  const std::vector<DType> kCastTypes = plus({DType::kBFloat16, DType::kString}, A);
  const std::vector<DType> kCast19Types =
      plus({DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ}, kCastTypes);
  const std::vector<DType> kCast21Types = plus({DType::kUInt4, DType::kInt4}, kCast19Types);
  const std::vector<DType> S = plus(kHalf, kSignedNumericTypes);  // signed numbers
  const std::vector<DType> kSignedInts = {DType::kInt8, DType::kInt16, DType::kInt32, DType::kInt64};
  const std::vector<DType> kArith7 = plus(F, {DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64});

  auto unary = [&](const char* op, int since, int until, const std::vector<DType>& types, UnaryOp u) {
    t.add({"", op, since, until, types, unary_factory(u)});
  };
  // Unary maths.
  unary("Abs", 1, 5, F, UnaryOp::kAbs);
  unary("Abs", 6, 21, N, UnaryOp::kAbs);
  unary("Neg", 1, 5, F, UnaryOp::kNeg);
  unary("Neg", 6, 21, S, UnaryOp::kNeg);
  unary("Sign", 9, 21, N, UnaryOp::kSign);
  unary("Ceil", 1, 21, F, UnaryOp::kCeil);
  unary("Floor", 1, 21, F, UnaryOp::kFloor);
  unary("Round", 11, 21, F, UnaryOp::kRound);
  unary("Exp", 1, 21, F, UnaryOp::kExp);
  unary("Log", 1, 21, F, UnaryOp::kLog);
  unary("Sqrt", 1, 21, F, UnaryOp::kSqrt);
  unary("Reciprocal", 1, 21, F, UnaryOp::kReciprocal);
  unary("Sigmoid", 1, 21, F, UnaryOp::kSigmoid);
  unary("Tanh", 1, 21, F, UnaryOp::kTanh);
  unary("Sin", 7, 21, F, UnaryOp::kSin);
  unary("Cos", 7, 21, F, UnaryOp::kCos);
  unary("Erf", 9, 21, F, UnaryOp::kErf);
  // Activations.
  unary("Softplus", 1, 21, F, UnaryOp::kSoftplus);
  unary("Relu", 1, 13, F, UnaryOp::kRelu);
  unary("Relu", 14, 21, plus(F, kSignedInts), UnaryOp::kRelu);  // opset 14 added signed integers
  unary("LeakyRelu", 1, 21, F, UnaryOp::kLeakyRelu);
  unary("Elu", 1, 21, F, UnaryOp::kElu);
  unary("HardSigmoid", 1, 21, F, UnaryOp::kHardSigmoid);
  unary("HardSwish", 14, 21, F, UnaryOp::kHardSwish);
  unary("Selu", 1, 21, F, UnaryOp::kSelu);
  unary("Celu", 12, 21, kFloat32Only, UnaryOp::kCelu);
  unary("ThresholdedRelu", 10, 21, F, UnaryOp::kThresholdedRelu);
  unary("Shrink", 9, 21, N, UnaryOp::kShrink);
  unary("Softsign", 1, 21, F, UnaryOp::kSoftsign);
  unary("Mish", 18, 21, F, UnaryOp::kMish);
  t.add({"", "Gelu", 20, 21, F, gelu_factory(), "approximate none|tanh"});
  // Trigonometric and hyperbolic functions.
  unary("Tan", 7, 21, F, UnaryOp::kTan);
  unary("Asin", 7, 21, F, UnaryOp::kAsin);
  unary("Acos", 7, 21, F, UnaryOp::kAcos);
  unary("Atan", 7, 21, F, UnaryOp::kAtan);
  unary("Sinh", 9, 21, F, UnaryOp::kSinh);
  unary("Cosh", 9, 21, F, UnaryOp::kCosh);
  unary("Asinh", 9, 21, F, UnaryOp::kAsinh);
  unary("Acosh", 9, 21, F, UnaryOp::kAcosh);
  unary("Atanh", 9, 21, F, UnaryOp::kAtanh);
  t.add({"", "Clip", 1, 10, F, clip_factory(false), "min/max attributes"});
  t.add({"", "Clip", 11, 11, F, clip_factory(true), "min/max optional inputs"});
  t.add({"", "Clip", 12, 21, N, clip_factory(true), "min/max optional inputs; integer types"});
  t.add({"", "PRelu", 1, 6, F, prelu_factory(true), "slope of size 1 or one per channel (axis 1)"});
  t.add({"", "PRelu", 7, 8, F, prelu_factory()});
  t.add({"", "PRelu", 9, 21, plus(F, {DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64}), prelu_factory()});
  // Predicates and logic.
  t.add({"", "Not", 1, 21, kBoolOnly, not_factory()});
  t.add({"", "IsNaN", 9, 21, F, isnan_factory()});
  t.add({"", "IsInf", 10, 19, kFloatTypes, isinf_factory()});
  t.add({"", "IsInf", 20, 21, F, isinf_factory(), "opset 20 added float16"});
  // Pass-through.
  t.add({"", "Identity", 1, 21, kCast21Types, identity_factory(), "aliases its input (no copy); float8, int4 too"});
  t.add({"", "Dropout", 1, 6, F, dropout_factory(false, false),
         "is_test = 0 (the default) drops at random, is_test = 1 is identity; mask of the input's type"});
  t.add({"", "Dropout", 7, 9, F, dropout_factory(false, false), "inference: identity; mask of the input's type"});
  t.add({"", "Dropout", 10, 11, F, dropout_factory(true, false), "inference: identity; bool mask"});
  t.add(
      {"", "Dropout", 12, 21, F, dropout_factory(true, true), "inference: identity; training_mode only with ratio 0"});
  t.add({"", "Cast", 1, 5, A, cast_factory(), "'to' is a type name string (\"FLOAT\", ...)"});
  t.add({"", "CastLike", 15, 18, kCastTypes, castlike_factory(), "to input 1's element type; types as Cast"});
  t.add({"", "CastLike", 19, 20, kCast19Types, castlike_factory(), "also float8 (saturate)"});
  t.add({"", "CastLike", 21, 21, kCast21Types, castlike_factory(), "also float8 (saturate), int4, uint4"});
  t.add({"", "Cast", 6, 8, A, cast_factory(), "numbers, bool, float16"});
  t.add({"", "Cast", 9, 18, kCastTypes, cast_factory(), "numbers, bool, float16, bfloat16, string"});
  t.add({"", "Cast", 19, 20, kCast19Types, cast_factory(), "also float8 (saturate)"});
  t.add({"", "Cast", 21, 21, kCast21Types, cast_factory(), "also float8 (saturate), int4, uint4"});

  // Binary arithmetic (numpy broadcasting).
  for (auto [op, b] :
       {std::pair{"Add", BinaryOp::kAdd}, {"Sub", BinaryOp::kSub}, {"Mul", BinaryOp::kMul}, {"Div", BinaryOp::kDiv}}) {
    t.add({"", op, 1, 5, F, legacy_broadcast_factory(binary_factory(b)), "legacy broadcast/axis attributes"});
    t.add({"", op, 6, 6, kArith7, legacy_broadcast_factory(binary_factory(b)), "legacy broadcast/axis attributes"});
    t.add({"", op, 7, 13, kArith7, binary_factory(b)});
    t.add({"", op, 14, 21, N, binary_factory(b), "opset 14 added 8/16-bit integers"});
  }
  t.add({"", "Pow", 1, 6, F, legacy_broadcast_factory(pow_factory(false)), "legacy broadcast/axis attributes"});
  t.add({"", "Pow", 7, 11, F, pow_factory(false), "exponent of the base's type"});
  t.add({"",
         "Pow",
         12,
         21,
         {DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64},
         pow_factory(true),
         "any numeric exponent type"});
  t.add({"", "Mod", 10, 21, N, binary_factory(BinaryOp::kMod)});
  // Comparisons (bool output).
  const char* kLegacy = "legacy broadcast/axis attributes";
  t.add({"",
         "Equal",
         1,
         6,
         {DType::kBool, DType::kInt32, DType::kInt64},
         legacy_broadcast_factory(binary_factory(BinaryOp::kEqual)),
         kLegacy});
  t.add({"", "Equal", 7, 10, {DType::kBool, DType::kInt32, DType::kInt64}, binary_factory(BinaryOp::kEqual)});
  t.add({"", "Equal", 11, 18, A, binary_factory(BinaryOp::kEqual)});
  t.add({"", "Equal", 19, 21, plus({DType::kString}, A), binary_factory(BinaryOp::kEqual), "opset 19 added string"});
  t.add({"", "Greater", 1, 6, F, legacy_broadcast_factory(binary_factory(BinaryOp::kGreater)), kLegacy});
  t.add({"", "Greater", 7, 8, F, binary_factory(BinaryOp::kGreater)});
  t.add({"", "Greater", 9, 21, N, binary_factory(BinaryOp::kGreater)});
  t.add({"", "Less", 1, 6, F, legacy_broadcast_factory(binary_factory(BinaryOp::kLess)), kLegacy});
  t.add({"", "Less", 7, 8, F, binary_factory(BinaryOp::kLess)});
  t.add({"", "Less", 9, 21, N, binary_factory(BinaryOp::kLess)});
  t.add({"", "GreaterOrEqual", 12, 21, N, binary_factory(BinaryOp::kGreaterOrEqual)});
  t.add({"", "LessOrEqual", 12, 21, N, binary_factory(BinaryOp::kLessOrEqual)});
  t.add({"", "And", 1, 6, kBoolOnly, legacy_broadcast_factory(binary_factory(BinaryOp::kAnd)), kLegacy});
  t.add({"", "And", 7, 21, kBoolOnly, binary_factory(BinaryOp::kAnd)});
  t.add({"", "Or", 1, 6, kBoolOnly, legacy_broadcast_factory(binary_factory(BinaryOp::kOr)), kLegacy});
  t.add({"", "Or", 7, 21, kBoolOnly, binary_factory(BinaryOp::kOr)});
  t.add({"", "Xor", 1, 6, kBoolOnly, legacy_broadcast_factory(binary_factory(BinaryOp::kXor)), kLegacy});
  t.add({"", "Xor", 7, 21, kBoolOnly, binary_factory(BinaryOp::kXor)});
  // Bit operators.
  const std::vector<DType> kUnsigned = {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
  t.add({"", "BitShift", 11, 21, kUnsigned, bitshift_factory(), "direction LEFT|RIGHT; shifts >= width give 0"});
  t.add({"", "BitwiseAnd", 18, 21, kIntTypes, binary_factory(BinaryOp::kBitwiseAnd)});
  t.add({"", "BitwiseOr", 18, 21, kIntTypes, binary_factory(BinaryOp::kBitwiseOr)});
  t.add({"", "BitwiseXor", 18, 21, kIntTypes, binary_factory(BinaryOp::kBitwiseXor)});
  unary("BitwiseNot", 18, 21, kIntTypes, UnaryOp::kBitwiseNot);
  // Variadic.
  t.add({"", "Max", 1, 11, F, variadic_factory(VariadicOp::kMax)});
  t.add({"", "Max", 12, 21, N, variadic_factory(VariadicOp::kMax), "opset 12 added integers"});
  t.add({"", "Min", 1, 11, F, variadic_factory(VariadicOp::kMin)});
  t.add({"", "Min", 12, 21, N, variadic_factory(VariadicOp::kMin), "opset 12 added integers"});
  t.add({"", "Sum", 1, 21, F, variadic_factory(VariadicOp::kSum)});
  t.add({"", "Mean", 1, 21, F, variadic_factory(VariadicOp::kMean)});
  // Random generators (never constant-folded).
  const std::vector<DType> kHalfFloat = {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
  t.add({"", "RandomUniform", 1, 21, {}, random_factory(RandomOp::kUniform), "seeded MT19937; low/high", -1});
  t.add({"", "RandomNormal", 1, 21, {}, random_factory(RandomOp::kNormal), "seeded MT19937; mean/scale", -1});
  t.add({"", "RandomUniformLike", 1, 21, {}, random_factory(RandomOp::kUniformLike), "input's shape (any type)"});
  t.add({"", "RandomNormalLike", 1, 21, {}, random_factory(RandomOp::kNormalLike), "input's shape (any type)"});
  t.add({"", "Bernoulli", 15, 21, kHalfFloat, random_factory(RandomOp::kBernoulli), "u < p; dtype attribute"});
  t.add({"", "Multinomial", 7, 21, kHalfFloat, random_factory(RandomOp::kMultinomial),
         "from unnormalised log-probabilities; int32/int64"});
  // Ternary.
  t.add({"", "Where", 9, 21, A, where_factory(), "3-way broadcast; typed input is X", 1});
  return family;
}

}  // namespace pointrt
