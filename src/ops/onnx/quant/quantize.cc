// QuantizeLinear / DequantizeLinear / DynamicQuantizeLinear: optimised kernels and the operator
// kernels (attribute parsing, type and shape checks at prepare and run time).
//
// The fast path takes float32 data and float32 scales, per tensor or per axis: x is walked in
// rows of `inner` elements that share one scale and zero point, so the inner loop is branch-free
// and vectorises (clamp first, then round with the 1.5 * 2^23 trick, exact for |v| < 2^22, which
// the clamp guarantees). Other combinations (float16, blocked) use the reference kernels.
#include <omp.h>

#include <algorithm>

#include "core/float8.h"
#include "core/subbyte.h"
#include "ops/onnx/quant/quant_common.h"
#include "ops/onnx/quant/quantize.h"

namespace pointrt::quant {

namespace {

constexpr int64_t kParallelElements = 1 << 16;

template <typename T>
void quantize_row(const float* __restrict x, int64_t n, float s, int64_t zp, int64_t lo, int64_t hi, T* __restrict y) {
  const float flo = static_cast<float>(lo - zp), fhi = static_cast<float>(hi - zp), fzp = static_cast<float>(zp);
  constexpr float kMagic = 12582912.f;  // 1.5 * 2^23: (v + kMagic) - kMagic rounds v to nearest even
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] / s;
    v = v > flo ? v : flo;  // NaN -> lo
    v = v < fhi ? v : fhi;
    v = (v + kMagic) - kMagic;
    y[i] = static_cast<T>(static_cast<int32_t>(v + fzp));
  }
}

template <typename T>
void dequantize_row(const T* __restrict x, int64_t n, float s, int32_t zp, float* __restrict y) {
  for (int64_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zp) * s;
}

// Calls row(first, count, param) for every row of x: the (outer, along) pairs of `inner` elements.
template <typename F>
void for_each_row(const QuantMapping& m, int64_t numel, F&& row) {
  const int64_t rows = m.inner == 0 ? 0 : numel / m.inner;
#pragma omp parallel for schedule(static) if (numel > kParallelElements && rows > 1)
  for (int64_t r = 0; r < rows; ++r) row(r * m.inner, m.inner, r % m.along);
}

// Per tensor: chunks of the flat tensor, threaded when large.
template <typename F>
void for_each_chunk(int64_t numel, F&& row) {
  const int64_t chunk = 1 << 14, chunks = (numel + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (numel > kParallelElements)
  for (int64_t c = 0; c < chunks; ++c) row(c * chunk, std::min(chunk, numel - c * chunk), 0);
}

bool fast_path(const Tensor& x, const Tensor& scale, const QuantMapping& m) {
  return x.dtype() == DType::kFloat32 && scale.dtype() == DType::kFloat32 && m.block == 0 &&
         (m.per_tensor || m.inner > 1);
}

}  // namespace

void quantize_linear(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m, Tensor& y,
                     bool saturate) {
  if (!fast_path(x, scale, m) || is_float8_type(y.dtype()) || is_int4_type(y.dtype()))
    return quantize_linear_ref(x, scale, zero_point, m, y, saturate);
  int64_t lo, hi;
  quantized_range(y.dtype(), lo, hi);
  const float* in = x.data_as<float>();
  const float* s = scale.data_as<float>();
  dispatch_numeric(y.dtype(), "QuantizeLinear", [&](auto tag) {
    using T = decltype(tag);
    T* out = y.data_as<T>();
    auto row = [&](int64_t first, int64_t count, int64_t p) {
      quantize_row<T>(in + first, count, s[p], zero_point ? load_as_int(*zero_point, p) : 0, lo, hi, out + first);
    };
    if (m.per_tensor) return for_each_chunk(x.numel(), row);
    for_each_row(m, x.numel(), row);
  });
}

void dequantize_linear(const Tensor& x, const Tensor& scale, const Tensor* zero_point, const QuantMapping& m,
                       Tensor& y) {
  if (scale.dtype() != DType::kFloat32 || m.block != 0 || (!m.per_tensor && m.inner == 1) ||
      is_float8_type(x.dtype()) || is_int4_type(x.dtype()))
    return dequantize_linear_ref(x, scale, zero_point, m, y);
  const float* s = scale.data_as<float>();
  float* out = y.data_as<float>();
  dispatch_numeric(x.dtype(), "DequantizeLinear", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral<T>::value && sizeof(T) <= 4) {
      const T* in = x.data_as<T>();
      auto row = [&](int64_t first, int64_t count, int64_t p) {
        const int32_t zp = zero_point ? static_cast<int32_t>(load_as_int(*zero_point, p)) : 0;
        dequantize_row<T>(in + first, count, s[p], zp, out + first);
      };
      if (m.per_tensor) return for_each_chunk(x.numel(), row);
      for_each_row(m, x.numel(), row);
    } else {
      dequantize_linear_ref(x, scale, zero_point, m, y);
    }
  });
}

void dynamic_quantize_linear(const Tensor& x, Tensor& y, Tensor& scale, Tensor& zero_point) {
  const float* in = x.data_as<float>();
  const int64_t n = x.numel();
  float lo = 0.f, hi = 0.f;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) if (n > kParallelElements)
  for (int64_t e = 0; e < n; ++e) {
    lo = in[e] < lo ? in[e] : lo;
    hi = in[e] > hi ? in[e] : hi;
  }
  const float s = (hi == lo ? 1.f : hi - lo) / 255.f;
  const float zp = std::nearbyint(std::min(255.f, std::max(0.f, 0.f - lo / s)));
  scale.data_as<float>()[0] = s;
  zero_point.data_as<uint8_t>()[0] = static_cast<uint8_t>(zp);
  uint8_t* out = y.data_as<uint8_t>();
  for_each_chunk(n, [&](int64_t first, int64_t count, int64_t) {
    quantize_row<uint8_t>(in + first, count, s, static_cast<int64_t>(zp), 0, 255, out + first);
  });
}

// ---------------------------------------------------------------- operator kernels
namespace {

const std::vector<DType> kScaleTypes = {DType::kFloat32, DType::kFloat16};

// The quantized element types of an opset (float8 from 19, int4/uint4 from 21), and in words.
std::vector<DType> quantized_types(int opset) {
  std::vector<DType> t = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16};
  if (opset >= 19)
    t.insert(t.end(), {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ});
  if (opset >= 21) t.insert(t.end(), {DType::kInt4, DType::kUInt4});
  return t;
}
std::string quantized_type_words(int opset) {
  return opset >= 21   ? "int8, uint8, int16, uint16, int4, uint4 or a float8 type"
         : opset >= 19 ? "int8, uint8, int16, uint16 or a float8 type"
                       : "int8, uint8, int16 or uint16";
}

// What QuantizeLinear and DequantizeLinear share: attributes, names, and the mapping check.
struct QdqCommon {
  std::string where;
  std::vector<std::string> names;
  int64_t axis = 1, block_size = 0;

  explicit QdqCommon(const KernelInit& init) : where(init.where()), names(input_names(init)) {
    names.resize(3);
    if (init.opset() >= 13) axis = init.attrs().get_int("axis", 1);
    if (init.opset() >= 21) block_size = init.attrs().get_int("block_size", 0);
    if (block_size < 0) fail(where, ": attribute block_size is ", block_size, "; it must be >= 0");
    check_input_type(where, "scale", names[1], declared_type(init, 1), kScaleTypes, "float or float16");
    // With every shape known (constant scales, a declared x), shape errors show at prepare time.
    const Value* xv = init.input_value(0);
    const Tensor* sc = init.constant_input(1);
    const Tensor* zp = init.constant_input(2);
    if (xv && xv->has_shape && sc && (zp || !init.has_input(2))) {
      Shape xs;
      for (const Dim& d : xv->shape)
        if (d.is_fixed()) xs.push_back(d.value);
      if (xs.size() == xv->shape.size()) mapping(xs, sc->shape(), zp ? &zp->shape() : nullptr);
    }
  }
  QuantMapping mapping(const Shape& x, const Shape& scale, const Shape* zp) const {
    return quant_mapping(x, scale, zp, axis, block_size, QuantNames{names[0], names[1], names[2]}, where);
  }
  const Tensor* zero_point(KernelContext& ctx) const { return ctx.has_input(2) ? &ctx.input(2) : nullptr; }
};

class QuantizeLinearKernel : public OpKernel {
 public:
  explicit QuantizeLinearKernel(const KernelInit& init)
      : c_(init), types_(quantized_types(init.opset())), words_(quantized_type_words(init.opset())) {
    if (init.opset() >= 19) saturate_ = init.attrs().get_int("saturate", 1) != 0;
    if (init.opset() >= 21) {
      const int64_t t = init.attrs().get_int("output_dtype", 0);
      output_dtype_ = static_cast<DType>(t);
      if (t != 0) check_input_type(c_.where, "output_dtype", "attribute", output_dtype_, types_, words_.c_str());
    }
    check_input_type(c_.where, "input", c_.names[0], declared_type(init, 0),
                     {DType::kFloat32, DType::kFloat16, DType::kInt32}, "float, float16 or int32");
    if (init.has_input(2)) check_zero_point(declared_type(init, 2));
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = c_.zero_point(ctx);
    check_input_type(c_.where, "input", c_.names[0], x.dtype(), {DType::kFloat32, DType::kFloat16, DType::kInt32},
                     "float, float16 or int32");
    check_input_type(c_.where, "scale", c_.names[1], scale.dtype(), kScaleTypes, "float or float16");
    DType out = zp ? zp->dtype() : (output_dtype_ != DType::kUndefined ? output_dtype_ : DType::kUInt8);
    if (zp) check_zero_point(zp->dtype());
    QuantMapping m = c_.mapping(x.shape(), scale.shape(), zp ? &zp->shape() : nullptr);
    Tensor& y = ctx.output(0, out, x.shape());
    quantize_linear(x, scale, zp, m, y, saturate_);
  }

 private:
  void check_zero_point(DType t) const {
    check_input_type(c_.where, "zero point", c_.names[2], t, types_, words_.c_str());
    if (output_dtype_ != DType::kUndefined && t != DType::kUndefined && t != output_dtype_)
      fail(c_.where, ": zero point '", c_.names[2], "' has element type ", dtype_name(t), " but output_dtype is ",
           dtype_name(output_dtype_));
  }
  QdqCommon c_;
  std::vector<DType> types_;
  std::string words_;
  DType output_dtype_ = DType::kUndefined;
  bool saturate_ = true;
};

class DequantizeLinearKernel : public OpKernel {
 public:
  explicit DequantizeLinearKernel(const KernelInit& init)
      : c_(init), types_(quantized_types(init.opset())), words_(quantized_type_words(init.opset()) + " or int32") {
    types_.push_back(DType::kInt32);
    check_x(declared_type(init, 0));
    if (init.has_input(2))
      check_zero_point_type(c_.where, c_.names[2], declared_type(init, 2), c_.names[0], declared_type(init, 0));
  }
  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    const Tensor* zp = c_.zero_point(ctx);
    check_x(x.dtype());
    check_input_type(c_.where, "scale", c_.names[1], scale.dtype(), kScaleTypes, "float or float16");
    if (zp) check_zero_point_type(c_.where, c_.names[2], zp->dtype(), c_.names[0], x.dtype());
    QuantMapping m = c_.mapping(x.shape(), scale.shape(), zp ? &zp->shape() : nullptr);
    if (zp && x.dtype() == DType::kInt32)
      for (int64_t i = 0; i < zp->numel(); ++i)
        if (zp->data_as<int32_t>()[i] != 0)
          fail(c_.where, ": zero point '", c_.names[2], "' of int32 input '", c_.names[0], "' must be 0, got ",
               zp->data_as<int32_t>()[i]);
    Tensor& y = ctx.output(0, scale.dtype(), x.shape());
    dequantize_linear(x, scale, zp, m, y);
  }

 private:
  void check_x(DType t) const { check_input_type(c_.where, "input", c_.names[0], t, types_, words_.c_str()); }
  QdqCommon c_;
  std::vector<DType> types_;
  std::string words_;
};

}  // namespace

std::unique_ptr<OpKernel> make_quantize_linear_kernel(const KernelInit& init) {
  return std::make_unique<QuantizeLinearKernel>(init);
}
std::unique_ptr<OpKernel> make_dequantize_linear_kernel(const KernelInit& init) {
  return std::make_unique<DequantizeLinearKernel>(init);
}
std::unique_ptr<OpKernel> make_dynamic_quantize_linear_kernel(const KernelInit& init) {
  const std::string where = init.where();
  return make_function_kernel([where](KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::kFloat32)
      fail(where, ": input has element type ", dtype_name(x.dtype()), ", expected float");
    Tensor& y = ctx.output(0, DType::kUInt8, x.shape());
    Tensor& scale = ctx.output(1, DType::kFloat32, {});
    Tensor& zp = ctx.output(2, DType::kUInt8, {});
    dynamic_quantize_linear(x, y, scale, zp);
  });
}

}  // namespace pointrt::quant
