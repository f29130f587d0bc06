// Cast kernel.
#include "ops/onnx/elementwise/cast.h"
#include "ops/onnx/elementwise/cast_string.h"

#include <iterator>

namespace pointrt {
namespace ew {
namespace {

bool castable(DType t) {
  return is_half_type(t) || t == DType::kBool || is_float_type(t) || is_int_type(t) || t == DType::kString;
}

const char* onnx_type_name(int64_t code) {
  switch (code) {
    case 8: return "string";
    case 14: return "complex64";
    case 15: return "complex128";
    case 16: return "bfloat16";
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    default: return "an unknown type";
  }
}

// Cast-1..5 name the target type as a string: TensorProto.DataType's enum names.
int64_t type_code_from_name(const std::string& name, const std::string& where) {
  static const char* const kNames[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",       "UINT16",  "INT16",
                                       "INT32",     "INT64",  "STRING",    "BOOL",       "FLOAT16", "DOUBLE",
                                       "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
  for (int64_t code = 1; code < static_cast<int64_t>(std::size(kNames)); ++code)
    if (name == kNames[code]) return code;
  fail(where, ": attribute 'to' is '", name, "', not a TensorProto data type name (\"FLOAT\", \"INT64\", ...)");
}

int64_t target_type_code(const KernelInit& init) {
  auto it = init.attrs().items.find("to");
  if (it != init.attrs().items.end() && it->second.kind == Attribute::Kind::kString)
    return type_code_from_name(it->second.s, init.where());
  return init.attrs().get_int("to");
}

// Any numeric or bool tensor as float32 values.
Tensor to_float32_values(const Tensor& x, const std::string& what) {
  Tensor f = Tensor::allocate(DType::kFloat32, x.shape());
  dispatch_all(x.dtype(), what.c_str(), [&](auto stag) {
    using S = decltype(stag);
    bcast::unary(x.data_as<S>(), f.data_as<float>(), x.numel(), [](S v) { return static_cast<float>(v); });
  });
  return f;
}

void run_cast(KernelContext& ctx, const Tensor& x, DType to) {
  if (!castable(x.dtype())) fail(ctx.where(), ": Cast from ", dtype_name(x.dtype()), " is not supported");
  if (x.dtype() == to) {  // nothing to convert: alias the input
    ctx.set_output(0, x);
    return;
  }
  if (to == DType::kString) return cast_to_string(ctx, x);
  if (x.dtype() == DType::kString) return cast_from_string(ctx, x, to);
  const Tensor xs = to_float32(x);  // float16 sources are read as float32
  Tensor& y = ctx.output(0, to, x.shape());
  const int64_t n = x.numel();
  const std::string what = ctx.where() + " input 0";
  if (to == DType::kBFloat16) {  // truncate the float32 bits, as ONNX's reference Cast does (NaN stays NaN)
    const Tensor f = xs.dtype() == DType::kFloat32 ? xs : to_float32_values(xs, what);
    bcast::unary(f.data_as<float>(), y.data_as<uint16_t>(), n, [](float v) {
      const uint32_t bits = __builtin_bit_cast(uint32_t, v);
      return v != v ? static_cast<uint16_t>((bits >> 16) | 0x40u) : static_cast<uint16_t>(bits >> 16);
    });
    return;
  }
  if (is_half_type(to)) {  // through float32: double -> half rounds twice
    if (xs.dtype() == DType::kFloat32) {
      float32_to_half(xs, y);
      return;
    }
    float32_to_half(to_float32_values(xs, what), y);
    return;
  }
  dispatch_all(xs.dtype(), what.c_str(), [&](auto stag) {
    using S = decltype(stag);
    dispatch_all(to, "Cast target", [&](auto dtag) {
      using D = decltype(dtag);
      if constexpr (std::is_same_v<S, bool> && !std::is_same_v<D, bool>) {  // bytes: the loop then vectorises
        bcast::unary(static_cast<const uint8_t*>(xs.data()), y.data_as<D>(), n,
                     [](uint8_t v) { return v ? D(1) : D(0); });
      } else {
        bcast::unary(xs.data_as<S>(), y.data_as<D>(), n, [](S v) { return convert<D>(v); });
      }
    });
  });
}

void check_target(DType to, int64_t to_code, const std::string& where) {
  const bool known = (to_code >= 1 && to_code <= 13) || to_code == 16;
  if (!known || !castable(to))
    fail(where, ": Cast to ", onnx_type_name(to_code), " (to=", to_code, ") is not supported");
}

}  // namespace

KernelFactory cast_factory() {
  return [](const KernelInit& init) {
    const int64_t to_code = target_type_code(init);
    const DType to = static_cast<DType>(to_code);
    check_target(to, to_code, init.where());
    return make_function_kernel([to](KernelContext& ctx) { run_cast(ctx, ctx.input(0), to); });
  };
}

KernelFactory castlike_factory() {
  return [](const KernelInit& init) {
    return make_function_kernel([](KernelContext& ctx) {
      const DType to = ctx.input(1).dtype();
      check_target(to, static_cast<int64_t>(to), ctx.where());
      run_cast(ctx, ctx.input(0), to);
    });
  };
}

}  // namespace ew
}  // namespace pointrt
