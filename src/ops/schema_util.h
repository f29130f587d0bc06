// Small helpers for the ONNX schemas of the pointrt-domain families (type and shape inference
// functions): read an input dimension, set an output's type and shape. The families return their
// schemas from register_<family>(); ops/registry.cc registers them and the domain with ONNX.
#pragma once

#include <string>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

namespace pointrt {
namespace schema_util {

// The ONNX names the families' schemas.cc files use; `using namespace schema_util;` brings them in.
using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorProto;
using onnx::TensorShapeProto_Dimension;

inline onnx::TensorShapeProto_Dimension fixed_dim(int64_t v) {
  onnx::TensorShapeProto_Dimension d;
  d.set_dim_value(v);
  return d;
}

/// Rank of input `input`, or -1 when it has no shape.
inline int input_rank(onnx::InferenceContext& ctx, size_t input) {
  return onnx::hasInputShape(ctx, input) ? onnx::getInputShape(ctx, input).dim_size() : -1;
}

/// Dimension `axis` of input `input` (unknown when the input has no shape); checks the rank when
/// `rank` >= 0, and that a known last dimension equals `last` when `last` >= 0.
inline onnx::TensorShapeProto_Dimension input_dim(onnx::InferenceContext& ctx, size_t input, int rank, int axis,
                                                  int64_t last = -1) {
  if (!onnx::hasInputShape(ctx, input)) return onnx::TensorShapeProto_Dimension();
  const onnx::TensorShapeProto& s = onnx::getInputShape(ctx, input);
  if (rank >= 0 && s.dim_size() != rank)
    fail_shape_inference("input ", input, " must have rank ", rank, ", got ", s.dim_size());
  if (last >= 0 && s.dim_size() > 0) {
    const onnx::TensorShapeProto_Dimension& d = s.dim(s.dim_size() - 1);
    if (d.has_dim_value() && d.dim_value() != last)
      fail_shape_inference("input ", input, " must have last dimension ", last, ", got ", d.dim_value());
  }
  if (axis < 0 || axis >= s.dim_size()) return onnx::TensorShapeProto_Dimension();
  return s.dim(axis);
}

inline void set_output(onnx::InferenceContext& ctx, size_t output, int32_t elem_type,
                       const std::vector<onnx::TensorShapeProto_Dimension>& dims) {
  if (output >= ctx.getNumOutputs()) return;
  onnx::updateOutputElemType(ctx, output, elem_type);
  onnx::TensorShapeProto* shape = onnx::getOutputShape(ctx, output);
  shape->clear_dim();
  for (const auto& d : dims) *shape->add_dim() = d;
}

inline int64_t int_attr(onnx::InferenceContext& ctx, const char* name, int64_t dflt) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  return a && a->has_i() ? a->i() : dflt;
}

/// A required integer attribute (inference fails naming it when it is absent).
inline int64_t required_int_attr(onnx::InferenceContext& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  if (!a || !a->has_i()) fail_shape_inference("attribute '", name, "' is required");
  return a->i();
}

/// The float type constraint "T" of the pointrt operators: float32, and float16/bfloat16, which
/// run through float32 (runtime/low_precision.h: computed in float32, float results rounded back).
inline const std::vector<std::string> kFloatTypes = {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"};
/// Index and label inputs: int32, int64 or uint32 (what CUDA pipelines feed).
inline const std::vector<std::string> kIndexTypes = {"tensor(int32)", "tensor(int64)", "tensor(uint32)"};

/// The element type of input `input` (a T input), float32 while unknown.
inline int32_t float_type(onnx::InferenceContext& ctx, size_t input) {
  const onnx::TypeProto* t = ctx.getInputType(input);
  if (t && t->has_tensor_type() && t->tensor_type().elem_type() != onnx::TensorProto::UNDEFINED)
    return t->tensor_type().elem_type();
  return onnx::TensorProto::FLOAT;
}

/// A pointrt-domain schema, version 1.
inline onnx::OpSchema pointrt_schema(const char* name, const char* doc) {
  onnx::OpSchema s;
  s.SetName(name).SetDomain("pointrt").SinceVersion(1).SetDoc(doc);
  return s;
}

}  // namespace schema_util
}  // namespace pointrt
