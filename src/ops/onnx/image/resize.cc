// Resize / Upsample kernel: the plan (geometry and axis tables) made once when the input shape and
// every geometry input are known at prepare, else per run; resize_run executes it.
#include "ops/onnx/image/resize.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "ops/onnx/image/image_util.h"

namespace pointrt::image {

namespace {

bool all_fixed(const Value* v, Shape* shape) {
  if (v == nullptr || !v->has_shape) return false;
  shape->clear();
  for (const Dim& d : v->shape) {
    if (!d.is_fixed()) return false;
    shape->push_back(d.value);
  }
  return true;
}

class ResizeKernel : public OpKernel {
 public:
  // input indices of roi / scales / sizes (-1 = none); upsample_scales for Upsample-7
  ResizeKernel(const KernelInit& init, ResizeAttrs attrs, int roi, int scales, int sizes,
               std::optional<Tensor> attr_scales, const char* op)
      : attrs_(std::move(attrs)),
        roi_(roi),
        scales_(scales),
        sizes_(sizes),
        attr_scales_(std::move(attr_scales)),
        upsample_(std::string(op) == "Upsample") {
    // Precompute the plan once when the input shape and every geometry input are known now.
    Shape in;
    if (!all_fixed(init.input_value(0), &in)) return;
    auto constant_or_absent = [&](int i, const Tensor** t) {
      *t = nullptr;
      if (i < 0 || !init.has_input(i)) return true;
      *t = init.constant_input(i);
      return *t != nullptr;
    };
    const Tensor *r, *s, *z;
    if (!constant_or_absent(roi_, &r) || !constant_or_absent(scales_, &s) || !constant_or_absent(sizes_, &z)) return;
    if (attr_scales_) s = &*attr_scales_;
    plan_ = make_resize_plan(attrs_, geometry(in, r, s, z, init.where()));
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const auto& types = resize_types();
    if (std::find(types.begin(), types.end(), x.dtype()) == types.end())
      fail(ctx.where(), ": input 'X' has element type ", dtype_name(x.dtype()), ", which is not supported");
    std::optional<ResizePlan> local;
    const ResizePlan* plan = nullptr;
    if (plan_ && plan_->geometry.in == x.shape()) {
      plan = &*plan_;
    } else {
      auto get = [&](int i) -> const Tensor* { return i >= 0 && ctx.has_input(i) ? &ctx.input(i) : nullptr; };
      const Tensor* s = attr_scales_ ? &*attr_scales_ : get(scales_);
      local = make_resize_plan(attrs_, geometry(x.shape(), get(roi_), s, get(sizes_), ctx.where()));
      plan = &*local;
    }
    Tensor& y = ctx.output(0, x.dtype(), plan->geometry.out);
    resize_run(attrs_, *plan, x, y, ctx.where());
  }

 private:
  ResizeGeometry geometry(const Shape& in, const Tensor* roi, const Tensor* scales, const Tensor* sizes,
                          const std::string& where) const {
    if (upsample_) {
      if (scales == nullptr) fail(where, ": 'scales' is required");
      std::vector<double> s = tensor_to_doubles(*scales, where, "scales");
      if (s.size() != in.size())
        fail(where, ": 'scales' has ", s.size(), " values, expected ", in.size(), " (one per axis of input ",
             shape_to_string(in), ")");
      for (size_t i = 0; i < s.size(); ++i)
        if (!(s[i] >= 1) || !std::isfinite(s[i]))
          fail(where, ": 'scales' value ", s[i], " at index ", i, " must be >= 1 (Upsample only enlarges)");
    }
    return resolve_resize_geometry(attrs_, in, roi, scales, sizes, where);
  }

  ResizeAttrs attrs_;
  int roi_, scales_, sizes_;
  std::optional<Tensor> attr_scales_;
  bool upsample_;
  std::optional<ResizePlan> plan_;
};

}  // namespace

std::unique_ptr<OpKernel> make_resize_kernel(const KernelInit& init) {
  ResizeAttrs a = parse_resize_attrs(init.attrs(), init.opset(), init.where());
  if (init.opset() < 11) return std::make_unique<ResizeKernel>(init, a, -1, 1, -1, std::nullopt, "Resize");
  return std::make_unique<ResizeKernel>(init, a, 1, 2, 3, std::nullopt, "Resize");
}

std::unique_ptr<OpKernel> make_upsample_kernel(const KernelInit& init) {
  ResizeAttrs a = parse_upsample_attrs(init.attrs(), init.where());
  if (init.opset() < 9) {
    // Upsample-1: 4-D NCHW input, height_scale / width_scale attributes.
    std::vector<float> s = init.opset() < 7 ? std::vector<float>{1.f, 1.f, init.attrs().get_float("height_scale"),
                                                                 init.attrs().get_float("width_scale")}
                                            : init.attrs().get_floats("scales");
    Tensor t = Tensor::allocate(DType::kFloat32, {static_cast<int64_t>(s.size())});
    std::copy(s.begin(), s.end(), t.data_as<float>());
    return std::make_unique<ResizeKernel>(init, a, -1, -1, -1, t, "Upsample");
  }
  return std::make_unique<ResizeKernel>(init, a, -1, 1, -1, std::nullopt, "Upsample");
}

}  // namespace pointrt::image
