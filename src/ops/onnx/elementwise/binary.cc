// Binary, variadic and ternary elementwise kernels on the broadcasting engine.
#include "ops/onnx/elementwise/binary.h"

#include <algorithm>

namespace pointrt::elementwise {
namespace {

const std::vector<std::string> kABNames = {"input 0 (A)", "input 1 (B)"};

void require_same_dtype(KernelContext& ctx, const Tensor& a, const Tensor& b, size_t ia, size_t ib) {
  if (a.dtype() != b.dtype())
    fail(ctx.where(), ": input ", ia, " has element type ", dtype_name(a.dtype()), " but input ", ib, " has ",
         dtype_name(b.dtype()), "; they must match");
}

// Integer Div/Mod: a zero divisor is an error, never UB.
template <typename T>
void check_no_zero_divisor(KernelContext& ctx, const Tensor& b) {
  if constexpr (std::is_integral_v<T>) {
    const T* p = b.data_as<T>();
    const T* end = p + b.numel();
    const T* z = std::find(p, end, T(0));
    if (z != end)
      fail(ctx.where(), ": integer division by zero: input 1 (divisor), shape ", shape_to_string(b.shape()),
           ", is 0 at flat index ", z - p);
  }
}

constexpr bool is_comparison(BinaryOp op) {
  return op == BinaryOp::kEqual || op == BinaryOp::kGreater || op == BinaryOp::kGreaterOrEqual ||
         op == BinaryOp::kLess || op == BinaryOp::kLessOrEqual;
}
constexpr bool is_logical(BinaryOp op) { return op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kXor; }

template <BinaryOp kOp>
void run_binary(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  require_same_dtype(ctx, a, b, 0, 1);
  const Shape out_shape = bcast::broadcast_shape({&a.shape(), &b.shape()}, ctx.where(), kABNames);
  const WhereAnd what{ctx.where(), " input 0"};

  if constexpr (is_logical(kOp)) {
    if (a.dtype() != DType::kBool) fail(ctx.where(), ": inputs must be bool, got ", dtype_name(a.dtype()));
    Tensor& y = ctx.output(0, DType::kBool, out_shape);
    bcast::binary(a.data_as<uint8_t>(), a.shape(), b.data_as<uint8_t>(), b.shape(), y.data_as<uint8_t>(), out_shape,
                  [](uint8_t x, uint8_t z) { return binary_apply<kOp>(x, z); });
  } else if constexpr (is_comparison(kOp)) {
    Tensor& y = ctx.output(0, DType::kBool, out_shape);
    if (kOp == BinaryOp::kEqual && a.dtype() == DType::kString) {
      bcast::binary(a.data_as<std::string>(), a.shape(), b.data_as<std::string>(), b.shape(), y.data_as<bool>(),
                    out_shape, [](const std::string& p, const std::string& q) { return p == q; });
      return;
    }
    if (a.dtype() == DType::kFloat16) {
      const Tensor af = to_float32(a), bf = to_float32(b);
      bcast::binary(af.data_as<float>(), a.shape(), bf.data_as<float>(), b.shape(), y.data_as<bool>(), out_shape,
                    [](float x, float z) { return binary_apply<kOp>(x, z); });
      return;
    }
    dispatch_all(a.dtype(), what, [&](auto tag) {
      using T = decltype(tag);
      bcast::binary(a.data_as<T>(), a.shape(), b.data_as<T>(), b.shape(), y.data_as<bool>(), out_shape,
                    [](T x, T z) { return binary_apply<kOp>(x, z); });
    });
  } else {
    if (a.dtype() == DType::kFloat16) {
      const Tensor af = to_float32(a), bf = to_float32(b);
      Tensor tmp = Tensor::allocate(DType::kFloat32, out_shape);
      bcast::binary(af.data_as<float>(), a.shape(), bf.data_as<float>(), b.shape(), tmp.data_as<float>(), out_shape,
                    [](float x, float z) { return binary_apply<kOp>(x, z); });
      Tensor& y = ctx.output(0, DType::kFloat16, out_shape);
      float32_to_half(tmp, y);
      return;
    }
    if (is_bit_operator(kOp) && !is_int_type(a.dtype()))
      fail(ctx.where(), ": inputs have element type ", dtype_name(a.dtype()), "; ", ctx.node().op_type,
           " takes integers");
    dispatch_numeric(a.dtype(), what, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kOp == BinaryOp::kDiv) check_no_zero_divisor<T>(ctx, b);
      Tensor& y = ctx.output(0, a.dtype(), out_shape);
      bcast::binary(a.data_as<T>(), a.shape(), b.data_as<T>(), b.shape(), y.data_as<T>(), out_shape,
                    [](T x, T z) { return binary_apply<kOp>(x, z); });
    });
  }
}

template <BinaryOp kOp>
KernelFactory make_binary() {
  return [](const KernelInit&) { return make_function_kernel([](KernelContext& ctx) { run_binary<kOp>(ctx); }); };
}

KernelFactory make_mod() {
  return [](const KernelInit& init) {
    const bool c_style = init.attrs().get_int("fmod", 0) != 0;
    return make_function_kernel([c_style](KernelContext& ctx) {
      const Tensor& a = ctx.input(0);
      const Tensor& b = ctx.input(1);
      require_same_dtype(ctx, a, b, 0, 1);
      const Shape out_shape = bcast::broadcast_shape({&a.shape(), &b.shape()}, ctx.where(), kABNames);
      auto compute = [&](const Tensor& x, const Tensor& z, Tensor& y, auto tag) {
        using T = decltype(tag);
        check_no_zero_divisor<T>(ctx, z);
        if (c_style)
          bcast::binary(x.data_as<T>(), x.shape(), z.data_as<T>(), z.shape(), y.data_as<T>(), out_shape,
                        [](T p, T q) { return mod_trunc(p, q); });
        else
          bcast::binary(x.data_as<T>(), x.shape(), z.data_as<T>(), z.shape(), y.data_as<T>(), out_shape,
                        [](T p, T q) { return mod_floor(p, q); });
      };
      if (a.dtype() == DType::kFloat16) {
        const Tensor af = to_float32(a), bf = to_float32(b);
        Tensor tmp = Tensor::allocate(DType::kFloat32, out_shape);
        compute(af, bf, tmp, float{});
        Tensor& y = ctx.output(0, DType::kFloat16, out_shape);
        float32_to_half(tmp, y);
        return;
      }
      dispatch_numeric(a.dtype(), WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
        Tensor& y = ctx.output(0, a.dtype(), out_shape);
        compute(a, b, y, tag);
      });
    });
  };
}

// Base types Pow is defined for (ONNX T), float16 being staged through float32.
template <typename F>
void dispatch_pow_base(DType t, const std::string& where, F&& f) {
  switch (t) {
    case DType::kFloat32: f(float{}); return;
    case DType::kFloat64: f(double{}); return;
    case DType::kInt32: f(int32_t{}); return;
    case DType::kInt64: f(int64_t{}); return;
    default:
      fail(where, ": input 0 (X) has element type ", dtype_name(t),
           "; Pow takes float16, float, double, int32 or int64");
  }
}

}  // namespace

KernelFactory binary_factory(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return make_binary<BinaryOp::kAdd>();
    case BinaryOp::kSub: return make_binary<BinaryOp::kSub>();
    case BinaryOp::kMul: return make_binary<BinaryOp::kMul>();
    case BinaryOp::kDiv: return make_binary<BinaryOp::kDiv>();
    case BinaryOp::kMod: return make_mod();
    case BinaryOp::kEqual: return make_binary<BinaryOp::kEqual>();
    case BinaryOp::kGreater: return make_binary<BinaryOp::kGreater>();
    case BinaryOp::kGreaterOrEqual: return make_binary<BinaryOp::kGreaterOrEqual>();
    case BinaryOp::kLess: return make_binary<BinaryOp::kLess>();
    case BinaryOp::kLessOrEqual: return make_binary<BinaryOp::kLessOrEqual>();
    case BinaryOp::kAnd: return make_binary<BinaryOp::kAnd>();
    case BinaryOp::kOr: return make_binary<BinaryOp::kOr>();
    case BinaryOp::kXor: return make_binary<BinaryOp::kXor>();
    case BinaryOp::kBitShiftLeft: return make_binary<BinaryOp::kBitShiftLeft>();
    case BinaryOp::kBitShiftRight: return make_binary<BinaryOp::kBitShiftRight>();
    case BinaryOp::kBitwiseAnd: return make_binary<BinaryOp::kBitwiseAnd>();
    case BinaryOp::kBitwiseOr: return make_binary<BinaryOp::kBitwiseOr>();
    case BinaryOp::kBitwiseXor: return make_binary<BinaryOp::kBitwiseXor>();
  }
  fail("binary_factory: unknown operator");
}

KernelFactory bitshift_factory() {
  return [](const KernelInit& init) {
    const std::string direction = init.attrs().get_string("direction", "");
    if (direction != "LEFT" && direction != "RIGHT")
      fail(init.where(), ": attribute 'direction' is '", direction, "', expected 'LEFT' or 'RIGHT'");
    return binary_factory(direction == "LEFT" ? BinaryOp::kBitShiftLeft : BinaryOp::kBitShiftRight)(init);
  };
}

KernelFactory pow_factory(bool mixed_types) {
  return [mixed_types](const KernelInit&) {
    return make_function_kernel([mixed_types](KernelContext& ctx) {
      const Tensor& x = ctx.input(0);
      const Tensor& e = ctx.input(1);
      if (!mixed_types) require_same_dtype(ctx, x, e, 0, 1);
      const Shape out_shape =
          bcast::broadcast_shape({&x.shape(), &e.shape()}, ctx.where(), {"input 0 (X)", "input 1 (Y)"});
      const bool half_out = x.dtype() == DType::kFloat16;
      const Tensor xs = to_float32(x), es = to_float32(e);
      Tensor staging;
      Tensor* y;
      if (half_out) {
        staging = Tensor::allocate(DType::kFloat32, out_shape);
        y = &staging;
      } else {
        y = &ctx.output(0, x.dtype(), out_shape);
      }
      dispatch_pow_base(xs.dtype(), ctx.where(), [&](auto btag) {
        using B = decltype(btag);
        dispatch_numeric(es.dtype(), WhereAnd{ctx.where(), " input 1 (Y)"}, [&](auto etag) {
          using E = decltype(etag);
          // x ** 2 (variance, distances) is by far the common case: one multiply; x ** 3 two.
          if constexpr (std::is_floating_point_v<B>) {
            const double e = es.numel() == 1 ? static_cast<double>(es.data_as<E>()[0]) : 0.0;
            if (es.numel() == 1 && xs.numel() == shape_numel(out_shape) && (e == 2.0 || e == 3.0 || e == 1.0)) {
              if (e == 2.0)
                bcast::unary(xs.data_as<B>(), y->data_as<B>(), xs.numel(), [](B v) { return v * v; });
              else if (e == 3.0)
                bcast::unary(xs.data_as<B>(), y->data_as<B>(), xs.numel(), [](B v) { return v * v * v; });
              else
                std::copy(xs.data_as<B>(), xs.data_as<B>() + xs.numel(), y->data_as<B>());
              return;
            }
          }
          bcast::binary(xs.data_as<B>(), xs.shape(), es.data_as<E>(), es.shape(), y->data_as<B>(), out_shape,
                        [](B p, E q) { return pow_apply(p, q); });
        });
      });
      if (half_out) {
        Tensor& out = ctx.output(0, DType::kFloat16, out_shape);
        float32_to_half(staging, out);
      }
    });
  };
}

KernelFactory variadic_factory(VariadicOp op) {
  return [op](const KernelInit&) {
    return make_function_kernel([op](KernelContext& ctx) {
      const size_t n = ctx.num_inputs();
      if (n == 0) fail(ctx.where(), ": needs at least one input");
      std::vector<const Shape*> shapes;
      for (size_t i = 0; i < n; ++i) {
        const Tensor& t = ctx.input(i);
        require_same_dtype(ctx, ctx.input(0), t, 0, i);
        shapes.push_back(&t.shape());
      }
      const Shape out_shape = bcast::broadcast_shape(shapes, ctx.where());
      const DType dtype = ctx.input(0).dtype();
      const bool half = dtype == DType::kFloat16;
      const DType compute_type = half ? DType::kFloat32 : dtype;
      if (op == VariadicOp::kMean && !is_float_type(dtype))
        fail(ctx.where(), ": Mean takes float tensors, got ", dtype_name(dtype));
      if (n == 1 && !half) {  // one input: the result is that input
        ctx.set_output(0, ctx.input(0));
        return;
      }
      // Fold left to right; only the last step writes the node's output buffer.
      Tensor acc = to_float32(ctx.input(0));
      for (size_t i = 1; i < n; ++i) {
        const Tensor in = to_float32(ctx.input(i));
        const Shape step_shape = bcast::broadcast_shape(acc.shape(), in.shape(), ctx.where());
        const bool last = i + 1 == n;
        Tensor next =
            (last && !half) ? ctx.output(0, compute_type, step_shape) : Tensor::allocate(compute_type, step_shape);
        dispatch_numeric(compute_type, WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
          using T = decltype(tag);
          const T* pa = acc.data_as<T>();
          const T* pb = in.data_as<T>();
          T* po = next.data_as<T>();
          switch (op) {
            case VariadicOp::kMax:
              bcast::binary(pa, acc.shape(), pb, in.shape(), po, step_shape, [](T p, T q) { return max_nan(p, q); });
              break;
            case VariadicOp::kMin:
              bcast::binary(pa, acc.shape(), pb, in.shape(), po, step_shape, [](T p, T q) { return min_nan(p, q); });
              break;
            case VariadicOp::kSum:
            case VariadicOp::kMean:
              bcast::binary(pa, acc.shape(), pb, in.shape(), po, step_shape, [](T p, T q) { return wrap_add(p, q); });
              break;
          }
        });
        acc = next;
      }
      if (op == VariadicOp::kMean && n > 1) {
        dispatch_float(compute_type, WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
          using T = decltype(tag);
          const T scale = T(1) / static_cast<T>(n);
          bcast::unary(acc.data_as<T>(), acc.data_as<T>(), acc.numel(), [scale](T v) { return v * scale; });
        });
      }
      if (half) {
        Tensor& y = ctx.output(0, DType::kFloat16, acc.shape());
        float32_to_half(acc, y);
      }
    });
  };
}

KernelFactory where_factory() {
  return [](const KernelInit&) {
    return make_function_kernel([](KernelContext& ctx) {
      const Tensor& c = ctx.input(0);
      const Tensor& x = ctx.input(1);
      const Tensor& y = ctx.input(2);
      if (c.dtype() != DType::kBool)
        fail(ctx.where(), ": input 0 (condition) must be bool, got ", dtype_name(c.dtype()));
      require_same_dtype(ctx, x, y, 1, 2);
      const Shape out_shape = bcast::broadcast_shape({&c.shape(), &x.shape(), &y.shape()}, ctx.where(),
                                                     {"input 0 (condition)", "input 1 (X)", "input 2 (Y)"});
      Tensor& out = ctx.output(0, x.dtype(), out_shape);
      // Selection moves bits: dispatch on the element size only.
      dispatch_by_size(x.dtype(), WhereAnd{ctx.where(), " input 1"}, [&](auto tag) {
        using T = decltype(tag);
        bcast::ternary(c.data_as<uint8_t>(), c.shape(), x.data_as<T>(), x.shape(), y.data_as<T>(), y.shape(),
                       out.data_as<T>(), out_shape, [](uint8_t k, T p, T q) { return k ? p : q; });
      });
    });
  };
}

// PRelu: y = x < 0 ? slope * x : x, slope broadcast to X's shape (unidirectionally).
KernelFactory prelu_factory(bool per_channel_slope) {
  return [per_channel_slope](const KernelInit&) {
    return make_function_kernel([per_channel_slope](KernelContext& ctx) {
      const Tensor& x = ctx.input(0);
      Tensor s = ctx.input(1);
      if (per_channel_slope && s.rank() == 1 && x.rank() > 2 && s.numel() > 1 && s.dim(0) == x.dim(1)) {
        Shape per_channel(x.rank() - 1, 1);
        per_channel[0] = s.dim(0);
        s = s.reshaped(per_channel);
      }
      require_same_dtype(ctx, x, s, 0, 1);
      const Shape out_shape =
          bcast::broadcast_shape({&x.shape(), &s.shape()}, ctx.where(), {"input 0 (X)", "input 1 (slope)"});
      if (out_shape != x.shape())
        fail(ctx.where(), ": input 1 (slope) of shape ", shape_to_string(s.shape()),
             " must broadcast to input 0 (X) of shape ", shape_to_string(x.shape()), " without growing it");
      auto compute = [&](const Tensor& xt, const Tensor& st, Tensor& yt, auto tag) {
        using T = decltype(tag);
        bcast::binary(xt.data_as<T>(), xt.shape(), st.data_as<T>(), st.shape(), yt.data_as<T>(), out_shape,
                      [](T v, T k) { return v < T(0) ? wrap_mul(k, v) : v; });
      };
      if (x.dtype() == DType::kFloat16) {
        const Tensor xf = to_float32(x), sf = to_float32(s);
        Tensor tmp = Tensor::allocate(DType::kFloat32, out_shape);
        compute(xf, sf, tmp, float{});
        Tensor& y = ctx.output(0, DType::kFloat16, out_shape);
        float32_to_half(tmp, y);
        return;
      }
      dispatch_numeric(x.dtype(), WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
        Tensor& y = ctx.output(0, x.dtype(), out_shape);
        compute(x, s, y, tag);
      });
    });
  };
}

}  // namespace pointrt::elementwise
