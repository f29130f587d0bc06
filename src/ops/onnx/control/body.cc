// What If, Loop and Scan share: their body plans, running a body, slicing and stacking along an axis.
#include <cstring>

#include "ops/onnx/control/control.h"

namespace pointrt::control {

const Graph& body_graph(const KernelInit& init, const std::string& name) {
  auto it = init.attrs().items.find(name);
  if (it == init.attrs().items.end() || it->second.kind != Attribute::Kind::kGraph || !it->second.g)
    fail(init.where(), ": graph attribute '", name, "' is missing");
  return *it->second.g;
}

std::shared_ptr<const ExecutionPlan> make_body_plan(const KernelInit& init, const std::string& name) {
  return std::make_shared<const ExecutionPlan>(body_graph(init, name), init.kernels(),
                                               str_cat(init.where(), ": subgraph '", name, "'"));
}

std::vector<Tensor> run_body(const KernelContext& ctx, const ExecutionPlan& plan, const std::string& attr,
                             std::vector<Tensor> inputs) {
  RunCache cache;  // a body run must not see another iteration's rulebooks
  RunContext body = ctx.run_context().nested(cache, ctx.node().name + "/" + attr);
  return plan.run(body, std::move(inputs), ctx.frame());
}

std::vector<AnyValue> run_body_any(const KernelContext& ctx, const ExecutionPlan& plan, const std::string& attr,
                                   std::vector<AnyValue> inputs) {
  RunCache cache;
  RunContext body = ctx.run_context().nested(cache, ctx.node().name + "/" + attr);
  return plan.run_any(body, std::move(inputs), ctx.frame());
}

bool has_non_tensor_io(const Graph& g) {
  for (const auto* ids : {&g.inputs, &g.outputs})
    for (int id : *ids)
      if (!g.values[id].is_tensor()) return true;
  return false;
}

namespace {

// Copies `count` elements of type `dtype` (strings element by element).
void copy_elements(DType dtype, void* dst, const void* src, int64_t count) {
  if (count <= 0) return;
  if (dtype == DType::kString) {
    std::copy(static_cast<const std::string*>(src), static_cast<const std::string*>(src) + count,
              static_cast<std::string*>(dst));
    return;
  }
  std::memcpy(dst, src, static_cast<size_t>(count) * dtype_size(dtype));
}

char* element_ptr(Tensor& t, int64_t offset) {
  if (t.dtype() == DType::kString) return reinterpret_cast<char*>(t.data_as<std::string>() + offset);
  return static_cast<char*>(t.data()) + offset * static_cast<int64_t>(dtype_size(t.dtype()));
}

const char* element_ptr(const Tensor& t, int64_t offset) { return element_ptr(const_cast<Tensor&>(t), offset); }

}  // namespace

Tensor slice_along_axis(const Tensor& t, int axis, int64_t index) {
  Shape part_shape = t.shape();
  part_shape.erase(part_shape.begin() + axis);
  Tensor part = Tensor::allocate(t.dtype(), part_shape);
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= t.dim(d);
  for (size_t d = axis + 1; d < t.rank(); ++d) inner *= t.dim(d);
  const int64_t length = t.dim(axis);
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(t.dtype(), element_ptr(part, o * inner), element_ptr(t, (o * length + index) * inner), inner);
  return part;
}

void place_along_axis(Tensor& out, int axis, int64_t index, const Tensor& part) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= part.dim(d);
  for (size_t d = axis; d < part.rank(); ++d) inner *= part.dim(d);
  const int64_t length = out.dim(axis);
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(part.dtype(), element_ptr(out, (o * length + index) * inner), element_ptr(part, o * inner), inner);
}

std::optional<Shape> fixed_declared_shape(const Graph& body, int output) {
  const Value& v = body.values[body.outputs[output]];
  if (!v.has_shape) return std::nullopt;
  Shape s;
  for (const Dim& d : v.shape) {
    if (!d.is_fixed()) return std::nullopt;
    s.push_back(d.value);
  }
  return s;
}

bool scalar_truth(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.numel() != 1) fail(ctx.where(), ": ", what, " must have one element, got shape ", shape_to_string(t.shape()));
  switch (t.dtype()) {
    case DType::kBool:  // read as a byte: a file may hold any non-zero value for true
    case DType::kUInt8: return *t.data_as<uint8_t>() != 0;
    case DType::kInt32: return *t.data_as<int32_t>() != 0;
    case DType::kInt64: return *t.data_as<int64_t>() != 0;
    case DType::kFloat32: return *t.data_as<float>() != 0;
    default: fail(ctx.where(), ": ", what, " must be bool, got ", dtype_name(t.dtype()));
  }
}

}  // namespace pointrt::control
