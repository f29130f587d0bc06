// ONNX schemas (types and shape inference) of the com.microsoft QOperator operators pointrt runs
// (contrib_qlinear.h), so that import infers the shapes of what follows them (the QDQ pass needs
// them to fold a QLinearAdd into a QConv). Inference problems are non-fatal notes at import; the
// kernels check again at run time.
#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "ops/onnx/quant/contrib_qlinear.h"

namespace pointrt::quant {

namespace {

using onnx::InferenceContext;
using onnx::OpSchema;

const std::vector<std::string> kInt8 = {"tensor(int8)", "tensor(uint8)"};

OpSchema base(const char* name, const char* doc) {
  OpSchema s;
  s.SetName(name).SetDomain(kMicrosoftDomain).SinceVersion(1).SetDoc(doc);
  s.TypeConstraint("T", kInt8, "quantized data");
  return s;
}

}  // namespace

std::vector<onnx::OpSchema> contrib_schemas() {
  std::vector<OpSchema> list;
  auto scale = [](OpSchema& s, int i, const char* name) { s.Input(i, name, "scalar scale", "tensor(float)"); };
  auto zp = [](OpSchema& s, int i, const char* name) { s.Input(i, name, "zero point", "T", OpSchema::Optional); };
  OpSchema add = base("QLinearAdd", "C = quantize(dequantize(A) + dequantize(B)), numpy broadcasting");
  add.Input(0, "A", "", "T");
  scale(add, 1, "A_scale");
  zp(add, 2, "A_zero_point");
  add.Input(3, "B", "", "T");
  scale(add, 4, "B_scale");
  zp(add, 5, "B_zero_point");
  scale(add, 6, "C_scale");
  zp(add, 7, "C_zero_point");
  add.Output(0, "C", "", "T").TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, 3))
      onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 3),
                                                 *onnx::getOutputShape(ctx, 0));
  });
  list.push_back(std::move(add));

  OpSchema gap = base("QLinearGlobalAveragePool", "quantized global average pooling");
  gap.Input(0, "X", "", "T");
  scale(gap, 1, "x_scale");
  zp(gap, 2, "x_zero_point");
  scale(gap, 3, "y_scale");
  zp(gap, 4, "y_zero_point");
  gap.Attr("channels_last", "1: X is [N, ..., C]", onnx::AttributeProto::INT, static_cast<int64_t>(0));
  gap.Output(0, "Y", "", "T").TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const auto& in = onnx::getInputShape(ctx, 0);
    const auto* cl = ctx.getAttribute("channels_last");
    const int channel = cl && cl->i() ? in.dim_size() - 1 : 1;
    auto* out = onnx::getOutputShape(ctx, 0);
    for (int d = 0; d < in.dim_size(); ++d) {
      auto* dim = out->add_dim();
      if (d == 0 || d == channel)
        *dim = in.dim(d);
      else
        dim->set_dim_value(1);
    }
  });
  list.push_back(std::move(gap));

  OpSchema gemm = base("QGemm", "quantized Gemm; float32 output without y_scale");
  gemm.Input(0, "A", "", "T");
  scale(gemm, 1, "a_scale");
  zp(gemm, 2, "a_zero_point");
  gemm.Input(3, "B", "", "T");
  gemm.Input(4, "b_scale", "", "tensor(float)");
  zp(gemm, 5, "b_zero_point");
  gemm.Input(6, "C", "int32 bias", "tensor(int32)", OpSchema::Optional);
  gemm.Input(7, "y_scale", "", "tensor(float)", OpSchema::Optional);
  gemm.Input(8, "y_zero_point", "", "T", OpSchema::Optional);
  gemm.Attr("transA", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
  gemm.Attr("transB", "", onnx::AttributeProto::INT, static_cast<int64_t>(0));
  gemm.Attr("alpha", "", onnx::AttributeProto::FLOAT, 1.0f);
  gemm.Output(0, "Y", "", "TY");
  gemm.TypeConstraint("TY", {"tensor(float)", "tensor(int8)", "tensor(uint8)"}, "output");
  gemm.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    auto present = [&](size_t i) { return i < ctx.getNumInputs() && ctx.getInputType(i) != nullptr; };
    if (present(7))
      onnx::propagateElemTypeFromInputToOutput(ctx, present(8) ? 8 : 0, 0);
    else
      onnx::updateOutputElemType(ctx, 0, onnx::TensorProto::FLOAT);
    if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 3)) return;
    const auto &a = onnx::getInputShape(ctx, 0), &b = onnx::getInputShape(ctx, 3);
    if (a.dim_size() != 2 || b.dim_size() != 2) return;
    const auto *ta = ctx.getAttribute("transA"), *tb = ctx.getAttribute("transB");
    auto* out = onnx::getOutputShape(ctx, 0);
    *out->add_dim() = a.dim(ta && ta->i() ? 1 : 0);
    *out->add_dim() = b.dim(tb && tb->i() ? 0 : 1);
  });
  list.push_back(std::move(gemm));
  return list;
}

}  // namespace pointrt::quant
