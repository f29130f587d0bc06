// Operator table rows of the ONNX reduce family: reductions, arg-reductions, softmax, cumsum,
// top-k, normalisations, MatMul/Gemm/Einsum.
#include "ops/families.h"
#include "ops/onnx/reduce/argminmax.h"
#include "ops/onnx/reduce/cumsum.h"
#include "ops/onnx/reduce/det.h"
#include "ops/onnx/reduce/einsum.h"
#include "ops/onnx/reduce/group_normalization.h"
#include "ops/onnx/reduce/hardmax.h"
#include "ops/onnx/reduce/losses.h"
#include "ops/onnx/reduce/lp_normalization.h"
#include "ops/onnx/reduce/lrn.h"
#include "ops/onnx/reduce/matmul.h"
#include "ops/onnx/reduce/mean_variance_normalization.h"
#include "ops/onnx/reduce/normalization.h"
#include "ops/onnx/reduce/reduce.h"
#include "ops/onnx/reduce/softmax.h"
#include "ops/onnx/reduce/topk.h"

namespace pointrt::reduce {
namespace {

const std::vector<DType> kReduceTypes = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                         DType::kInt64,   DType::kUInt32,  DType::kUInt64};

void add_reduce_rows(OpTable& t) {
  struct Op {
    const char* name;
    ReduceKind kind;
  };
  // Opset boundaries: 11 (negative axes), 13 (ReduceSum: axes input), 18 (the others: axes input).
  for (Op op :
       {Op{"ReduceSumSquare", ReduceKind::kSumSquare}, Op{"ReduceMean", ReduceKind::kMean},
        Op{"ReduceL1", ReduceKind::kL1}, Op{"ReduceL2", ReduceKind::kL2}, Op{"ReduceProd", ReduceKind::kProd}}) {
    ReduceKind k = op.kind;
    auto attr = [k](const KernelInit& i) { return make_reduce_kernel(i, k, false); };
    auto input = [k](const KernelInit& i) { return make_reduce_kernel(i, k, true); };
    t.add({"", op.name, 1, 10, kReduceTypes, attr, "axes attribute"});
    t.add({"", op.name, 11, 12, kReduceTypes, attr, "negative axes"});
    t.add({"", op.name, 13, 17, kReduceTypes, attr, ""});
    t.add({"", op.name, 18, 21, kReduceTypes, input, "axes input, noop_with_empty_axes"});
  }
  {
    auto attr = [](const KernelInit& i) { return make_reduce_kernel(i, ReduceKind::kSum, false); };
    auto input = [](const KernelInit& i) { return make_reduce_kernel(i, ReduceKind::kSum, true); };
    t.add({"", "ReduceSum", 1, 10, kReduceTypes, attr, "axes attribute"});
    t.add({"", "ReduceSum", 11, 12, kReduceTypes, attr, "negative axes"});
    t.add({"", "ReduceSum", 13, 21, kReduceTypes, input, "axes input, noop_with_empty_axes"});
  }
  for (Op op : {Op{"ReduceLogSum", ReduceKind::kLogSum}, Op{"ReduceLogSumExp", ReduceKind::kLogSumExp}}) {
    ReduceKind k = op.kind;
    auto attr = [k](const KernelInit& i) { return make_reduce_kernel(i, k, false); };
    auto input = [k](const KernelInit& i) { return make_reduce_kernel(i, k, true); };
    t.add({"", op.name, 1, 10, kFloatTypes, attr, "axes attribute"});
    t.add({"", op.name, 11, 12, kFloatTypes, attr, "negative axes"});
    t.add({"", op.name, 13, 17, kFloatTypes, attr, ""});
    t.add({"", op.name, 18, 21, kFloatTypes, input, "axes input, noop_with_empty_axes"});
  }
  std::vector<DType> with_8bit = kReduceTypes;
  with_8bit.push_back(DType::kInt8);
  with_8bit.push_back(DType::kUInt8);
  std::vector<DType> with_bool = with_8bit;
  with_bool.push_back(DType::kBool);
  for (Op op : {Op{"ReduceMax", ReduceKind::kMax}, Op{"ReduceMin", ReduceKind::kMin}}) {
    ReduceKind k = op.kind;
    auto attr = [k](const KernelInit& i) { return make_reduce_kernel(i, k, false); };
    auto input = [k](const KernelInit& i) { return make_reduce_kernel(i, k, true); };
    t.add({"", op.name, 1, 10, kReduceTypes, attr, "axes attribute"});
    t.add({"", op.name, 11, 11, kReduceTypes, attr, "negative axes"});
    t.add({"", op.name, 12, 12, with_8bit, attr, "int8/uint8"});
    t.add({"", op.name, 13, 17, with_8bit, attr, ""});
    t.add({"", op.name, 18, 19, with_8bit, input, "axes input, noop_with_empty_axes"});
    t.add({"", op.name, 20, 21, with_bool, input, "bool"});
  }
}

void add_axis_op_rows(OpTable& t) {
  for (bool is_max : {true, false}) {
    const char* name = is_max ? "ArgMax" : "ArgMin";
    auto f = [is_max](const KernelInit& i) { return make_arg_reduce_kernel(i, is_max); };
    t.add({"", name, 1, 10, kNumericTypes, f, ""});
    t.add({"", name, 11, 11, kNumericTypes, f, "negative axis"});
    t.add({"", name, 12, 12, kNumericTypes, f, "select_last_index"});
    t.add({"", name, 13, 21, kNumericTypes, f, ""});
  }
  for (bool log : {false, true}) {
    const char* name = log ? "LogSoftmax" : "Softmax";
    auto flat = [log](const KernelInit& i) { return make_softmax_kernel(i, log, true); };
    auto single = [log](const KernelInit& i) { return make_softmax_kernel(i, log, false); };
    t.add({"", name, 1, 10, kFloatTypes, flat, "flattened to 2-D at axis"});
    t.add({"", name, 11, 12, kFloatTypes, flat, "flattened to 2-D at axis, negative axis"});
    t.add({"", name, 13, 21, kFloatTypes, single, "along one axis"});
  }
  const std::vector<DType> kHalfAndFloat = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
  auto hardmax_flat = [](const KernelInit& i) { return make_hardmax_kernel(i, true); };
  t.add({"", "Hardmax", 1, 12, kHalfAndFloat, hardmax_flat, "flattened to 2-D at axis; first maximum"});
  t.add({"", "Hardmax", 13, 21, kHalfAndFloat, [](const KernelInit& i) { return make_hardmax_kernel(i, false); },
         "along one axis; first maximum"});
  t.add({"", "NegativeLogLikelihoodLoss", 12, 21, kHalfAndFloat, make_nll_loss_kernel,
         "reduction none|sum|mean, weight, ignore_index"});
  t.add({"", "SoftmaxCrossEntropyLoss", 12, 21, kHalfAndFloat, make_softmax_cross_entropy_kernel,
         "reduction none|sum|mean, weights, ignore_index, log_prob output"});
  auto cumsum = [](const KernelInit& i) { return make_cumsum_kernel(i); };
  t.add({"", "CumSum", 11, 13, kReduceTypes, cumsum, "exclusive, reverse"});
  t.add({"", "CumSum", 14, 21, kReduceTypes, cumsum, "exclusive, reverse"});
  t.add({"", "TopK", 1, 9, kFloatTypes, [](const KernelInit& i) { return make_topk_kernel(i, false, false); },
         "k attribute"});
  t.add({"", "TopK", 10, 10, kFloatTypes, [](const KernelInit& i) { return make_topk_kernel(i, true, false); },
         "K input"});
  t.add({"", "TopK", 11, 21, kNumericTypes, [](const KernelInit& i) { return make_topk_kernel(i, true, true); },
         "largest, sorted; ties by lower index"});
}

void add_normalization_rows(OpTable& t) {
  const std::vector<DType> H = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
  t.add({"", "LRN", 1, 21, H, make_lrn_kernel, "across channels; size, alpha, beta, bias"});
  t.add({"", "MeanVarianceNormalization", 9, 21, H, make_mean_variance_normalization_kernel,
         "axes (default [0, 2, 3]); (x - mean) / (std + 1e-9)"});
  t.add({"", "LpNormalization", 1, 21, H, make_lp_normalization_kernel, "p 1 or 2, axis"});
  t.add({"", "GroupNormalization", 18, 20, H, make_group_normalization_kernel, "scale/bias per group"});
  t.add({"", "GroupNormalization", 21, 21, H, make_group_normalization_kernel, "scale/bias per channel"});
  t.add({"", "Det", 11, 21, H, make_det_kernel, "LU with partial pivoting in double"});
  t.add({"", "LayerNormalization", 17, 21, kFloatTypes, make_layer_norm_kernel, "Mean/InvStdDev outputs in float32"});
  t.add({"", "InstanceNormalization", 1, 21, kFloatTypes, make_instance_norm_kernel, ""});
}

void add_linear_algebra_rows(OpTable& t) {
  t.add({"", "MatMul", 1, 8, kFloatTypes, make_matmul_kernel, "numpy batching"});
  t.add({"", "MatMul", 9, 12, kReduceTypes, make_matmul_kernel, "numpy batching, integer types"});
  t.add({"", "MatMul", 13, 21, kReduceTypes, make_matmul_kernel, "numpy batching"});
  auto c_required = [](const KernelInit& i) { return make_gemm_kernel(i, false); };
  auto c_optional = [](const KernelInit& i) { return make_gemm_kernel(i, true); };
  t.add({"", "Gemm", 1, 6, kFloatTypes, c_required, "C required; broadcasts only with broadcast = 1"});
  t.add({"", "Gemm", 7, 8, kFloatTypes, c_required, "C required, unidirectional broadcast"});
  t.add({"", "Gemm", 9, 10, kReduceTypes, c_required, "C required, integer types"});
  t.add({"", "Gemm", 11, 12, kReduceTypes, c_optional, "C optional"});
  t.add({"", "Gemm", 13, 21, kReduceTypes, c_optional, "C optional"});
  t.add(
      {"", "Einsum", 12, 21, kNumericTypes, make_einsum_kernel, "ellipsis, diagonals; pairs lowered to batched GEMM"});
}

}  // namespace
}  // namespace pointrt::reduce

namespace pointrt {

Family register_onnx_reduce() {
  using namespace reduce;
  Family family{"onnx/reduce"};
  OpTable& t = family.rows;
  add_reduce_rows(t);
  add_axis_op_rows(t);
  add_normalization_rows(t);
  add_linear_algebra_rows(t);
  return family;
}
}  // namespace pointrt
