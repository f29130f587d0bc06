// Unary elementwise kernels: one contiguous, threaded loop per call; float16 is staged through
// float32 in cache-sized blocks.
#include "ops/onnx/elementwise/unary.h"

#include <algorithm>

namespace pointrt::elementwise {
namespace {

// y[i] = f(x[i]) for float16 data, computing in float32 one block at a time.
template <typename F>
void unary_half(const uint16_t* x, uint16_t* y, int64_t n, F f) {
  constexpr int64_t kBlock = 1024;
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for if (n >= bcast::kParallelMinElements)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    float buf[kBlock];
    const int64_t begin = blk * kBlock, len = std::min(kBlock, n - begin);
    for (int64_t i = 0; i < len; ++i) buf[i] = half_to_float(x[begin + i]);
    for (int64_t i = 0; i < len; ++i) buf[i] = f(buf[i]);
    for (int64_t i = 0; i < len; ++i) y[begin + i] = float_to_half(buf[i]);
  }
}

template <UnaryOp kOp>
void run_unary(KernelContext& ctx, const UnaryParams& p) {
  const Tensor& x = ctx.input(0);
  if (kOp == UnaryOp::kBitwiseNot && !is_int_type(x.dtype()))
    fail(ctx.where(), ": input 0 has element type ", dtype_name(x.dtype()), "; BitwiseNot takes integers");
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  const int64_t n = x.numel();
  if (x.dtype() == DType::kFloat16) {
    unary_half(x.data_as<uint16_t>(), y.data_as<uint16_t>(), n, [&p](float v) { return unary_apply<kOp>(v, p); });
    return;
  }
  auto body = [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, float> &&
                  (kOp == UnaryOp::kExp || kOp == UnaryOp::kSigmoid || kOp == UnaryOp::kTanh || kOp == UnaryOp::kErf)) {
      const float* xp = x.data_as<float>();
      float* yp = y.data_as<float>();
      bcast::detail::for_ranges(n, [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; b += 256) {
          const int64_t len = std::min<int64_t>(256, end - b);
          if constexpr (kOp == UnaryOp::kExp) {
            fast_exp_block(xp + b, yp + b, len);
          } else if constexpr (kOp == UnaryOp::kTanh) {
            fast_tanh_block(xp + b, yp + b, len);
          } else if constexpr (kOp == UnaryOp::kErf) {
            fast_erf_block(xp + b, yp + b, len);
          } else {  // 1 / (1 + exp(-x)): exp(-x) = inf for x < -89 gives 0, NaN stays NaN
            fast_exp_block(xp + b, yp + b, len, -1.0f);
            for (int64_t i = 0; i < len; ++i) yp[b + i] = 1.0f / (1.0f + yp[b + i]);
          }
        }
      });
      return;
    }
    bcast::unary(x.data_as<T>(), y.data_as<T>(), n, [&p](T v) { return unary_apply<kOp>(v, p); });
  };
  const std::string what = ctx.where() + " input 0";
  if constexpr (unary_accepts_ints(kOp))
    dispatch_numeric(x.dtype(), what.c_str(), body);
  else
    dispatch_float(x.dtype(), what.c_str(), body);
}

template <UnaryOp kOp>
KernelFactory make_unary(UnaryParams dflt) {
  return [dflt](const KernelInit& init) {
    UnaryParams p = dflt;
    if constexpr (kOp == UnaryOp::kLeakyRelu || kOp == UnaryOp::kElu || kOp == UnaryOp::kHardSigmoid ||
                  kOp == UnaryOp::kSelu || kOp == UnaryOp::kCelu || kOp == UnaryOp::kThresholdedRelu)
      p.alpha = init.attrs().get_float("alpha", dflt.alpha);
    if constexpr (kOp == UnaryOp::kHardSigmoid) p.beta = init.attrs().get_float("beta", dflt.beta);
    if constexpr (kOp == UnaryOp::kSelu) p.beta = init.attrs().get_float("gamma", dflt.beta);
    if constexpr (kOp == UnaryOp::kShrink) {
      p.alpha = init.attrs().get_float("lambd", dflt.alpha);
      p.beta = init.attrs().get_float("bias", dflt.beta);
    }
    if constexpr (kOp == UnaryOp::kCelu)
      if (p.alpha == 0) fail(init.where(), ": attribute 'alpha' must not be 0");
    return make_function_kernel([p](KernelContext& ctx) { run_unary<kOp>(ctx, p); });
  };
}

const Tensor& require_dtype(KernelContext& ctx, size_t i, DType t) {
  const Tensor& x = ctx.input(i);
  if (x.dtype() != t) fail(ctx.where(), ": input ", i, " must be ", dtype_name(t), ", got ", dtype_name(x.dtype()));
  return x;
}

// Reads an optional scalar bound of Clip (opset >= 11) as T; `present` is false when omitted.
template <typename T>
T clip_bound(KernelContext& ctx, size_t i, DType dtype, T dflt) {
  if (!ctx.has_input(i)) return dflt;
  const Tensor& b = ctx.input(i);
  if (b.dtype() != dtype)
    fail(ctx.where(), ": input ", i, " (", i == 1 ? "min" : "max", ") must have the input's type ", dtype_name(dtype),
         ", got ", dtype_name(b.dtype()));
  if (b.numel() != 1)
    fail(ctx.where(), ": input ", i, " (", i == 1 ? "min" : "max", ") must be a scalar, got shape ",
         shape_to_string(b.shape()));
  if (dtype == DType::kFloat16) return static_cast<T>(half_to_float(b.data_as<uint16_t>()[0]));
  return b.data_as<T>()[0];
}

}  // namespace

KernelFactory unary_factory(UnaryOp op) {
  switch (op) {
    case UnaryOp::kAbs: return make_unary<UnaryOp::kAbs>({});
    case UnaryOp::kNeg: return make_unary<UnaryOp::kNeg>({});
    case UnaryOp::kSign: return make_unary<UnaryOp::kSign>({});
    case UnaryOp::kCeil: return make_unary<UnaryOp::kCeil>({});
    case UnaryOp::kFloor: return make_unary<UnaryOp::kFloor>({});
    case UnaryOp::kRound: return make_unary<UnaryOp::kRound>({});
    case UnaryOp::kExp: return make_unary<UnaryOp::kExp>({});
    case UnaryOp::kLog: return make_unary<UnaryOp::kLog>({});
    case UnaryOp::kSqrt: return make_unary<UnaryOp::kSqrt>({});
    case UnaryOp::kReciprocal: return make_unary<UnaryOp::kReciprocal>({});
    case UnaryOp::kSigmoid: return make_unary<UnaryOp::kSigmoid>({});
    case UnaryOp::kTanh: return make_unary<UnaryOp::kTanh>({});
    case UnaryOp::kSin: return make_unary<UnaryOp::kSin>({});
    case UnaryOp::kCos: return make_unary<UnaryOp::kCos>({});
    case UnaryOp::kErf: return make_unary<UnaryOp::kErf>({});
    case UnaryOp::kSoftplus: return make_unary<UnaryOp::kSoftplus>({});
    case UnaryOp::kRelu: return make_unary<UnaryOp::kRelu>({});
    case UnaryOp::kLeakyRelu: return make_unary<UnaryOp::kLeakyRelu>({0.01f, 0});
    case UnaryOp::kElu: return make_unary<UnaryOp::kElu>({1.0f, 0});
    case UnaryOp::kHardSigmoid: return make_unary<UnaryOp::kHardSigmoid>({0.2f, 0.5f});
    case UnaryOp::kHardSwish: return make_unary<UnaryOp::kHardSwish>({});
    case UnaryOp::kSelu: return make_unary<UnaryOp::kSelu>({1.67326319217681884765625f, 1.05070102214813232421875f});
    case UnaryOp::kCelu: return make_unary<UnaryOp::kCelu>({1.0f, 0});
    case UnaryOp::kThresholdedRelu: return make_unary<UnaryOp::kThresholdedRelu>({1.0f, 0});
    case UnaryOp::kShrink: return make_unary<UnaryOp::kShrink>({0.5f, 0});
    case UnaryOp::kSoftsign: return make_unary<UnaryOp::kSoftsign>({});
    case UnaryOp::kGelu: return make_unary<UnaryOp::kGelu>({});
    case UnaryOp::kGeluTanh: return make_unary<UnaryOp::kGeluTanh>({});
    case UnaryOp::kMish: return make_unary<UnaryOp::kMish>({});
    case UnaryOp::kTan: return make_unary<UnaryOp::kTan>({});
    case UnaryOp::kAsin: return make_unary<UnaryOp::kAsin>({});
    case UnaryOp::kAcos: return make_unary<UnaryOp::kAcos>({});
    case UnaryOp::kAtan: return make_unary<UnaryOp::kAtan>({});
    case UnaryOp::kSinh: return make_unary<UnaryOp::kSinh>({});
    case UnaryOp::kCosh: return make_unary<UnaryOp::kCosh>({});
    case UnaryOp::kAsinh: return make_unary<UnaryOp::kAsinh>({});
    case UnaryOp::kAcosh: return make_unary<UnaryOp::kAcosh>({});
    case UnaryOp::kAtanh: return make_unary<UnaryOp::kAtanh>({});
    case UnaryOp::kBitwiseNot: return make_unary<UnaryOp::kBitwiseNot>({});
  }
  fail("unary_factory: unknown operator");
}

KernelFactory gelu_factory() {
  return [](const KernelInit& init) {
    const std::string approximate = init.attrs().get_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      fail(init.where(), ": attribute 'approximate' is '", approximate, "', expected 'none' or 'tanh'");
    return unary_factory(approximate == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu)(init);
  };
}

KernelFactory not_factory() {
  return [](const KernelInit&) {
    return make_function_kernel([](KernelContext& ctx) {
      const Tensor& x = require_dtype(ctx, 0, DType::kBool);
      Tensor& y = ctx.output(0, DType::kBool, x.shape());
      // Bytes are 0 or 1; xor keeps the loop a plain byte loop.
      bcast::unary(x.data_as<uint8_t>(), y.data_as<uint8_t>(), x.numel(), [](uint8_t v) { return uint8_t(v ^ 1u); });
    });
  };
}

KernelFactory isnan_factory() {
  return [](const KernelInit&) {
    return make_function_kernel([](KernelContext& ctx) {
      const Tensor& x = ctx.input(0);
      Tensor& y = ctx.output(0, DType::kBool, x.shape());
      if (x.dtype() == DType::kFloat16) {
        // NaN in half: exponent all ones, mantissa non-zero.
        bcast::unary(x.data_as<uint16_t>(), y.data_as<bool>(), x.numel(),
                     [](uint16_t h) { return (h & 0x7fffu) > 0x7c00u; });
        return;
      }
      dispatch_float(x.dtype(), WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
        using T = decltype(tag);
        bcast::unary(x.data_as<T>(), y.data_as<bool>(), x.numel(), [](T v) { return v != v; });
      });
    });
  };
}

KernelFactory isinf_factory() {
  return [](const KernelInit& init) {
    const bool pos = init.attrs().get_int("detect_positive", 1) != 0;
    const bool neg = init.attrs().get_int("detect_negative", 1) != 0;
    return make_function_kernel([pos, neg](KernelContext& ctx) {
      const Tensor& x = ctx.input(0);
      Tensor& y = ctx.output(0, DType::kBool, x.shape());
      if (x.dtype() == DType::kFloat16) {
        bcast::unary(x.data_as<uint16_t>(), y.data_as<bool>(), x.numel(),
                     [pos, neg](uint16_t h) { return (pos && h == 0x7c00u) || (neg && h == 0xfc00u); });
        return;
      }
      dispatch_float(x.dtype(), WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
        using T = decltype(tag);
        const T inf = std::numeric_limits<T>::infinity();
        bcast::unary(x.data_as<T>(), y.data_as<bool>(), x.numel(),
                     [pos, neg, inf](T v) { return (pos && v == inf) || (neg && v == -inf); });
      });
    });
  };
}

// Clip: y = min(max(x, lo), hi). When lo > hi every element becomes hi (ONNX 13 wording; the
// formula gives exactly that). An omitted bound is the type's lowest/highest value.
KernelFactory clip_factory(bool bounds_are_inputs) {
  return [bounds_are_inputs](const KernelInit& init) {
    float attr_lo = -std::numeric_limits<float>::infinity(), attr_hi = std::numeric_limits<float>::infinity();
    if (!bounds_are_inputs) {
      attr_lo = init.attrs().get_float("min", attr_lo);
      attr_hi = init.attrs().get_float("max", attr_hi);
    }
    return make_function_kernel([=](KernelContext& ctx) {
      const Tensor& x = ctx.input(0);
      Tensor& y = ctx.output(0, x.dtype(), x.shape());
      const int64_t n = x.numel();
      if (x.dtype() == DType::kFloat16) {
        float lo = attr_lo, hi = attr_hi;
        if (bounds_are_inputs) {
          lo = clip_bound<float>(ctx, 1, DType::kFloat16, lo);
          hi = clip_bound<float>(ctx, 2, DType::kFloat16, hi);
        }
        unary_half(x.data_as<uint16_t>(), y.data_as<uint16_t>(), n, [lo, hi](float v) {
          v = v < lo ? lo : v;
          return v > hi ? hi : v;
        });
        return;
      }
      dispatch_numeric(x.dtype(), WhereAnd{ctx.where(), " input 0"}, [&](auto tag) {
        using T = decltype(tag);
        T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        if (bounds_are_inputs) {
          lo = clip_bound<T>(ctx, 1, x.dtype(), lo);
          hi = clip_bound<T>(ctx, 2, x.dtype(), hi);
        } else {
          if constexpr (!std::is_floating_point_v<T>)
            fail(ctx.where(), ": Clip before opset 11 takes float tensors only, got ", dtype_name(x.dtype()));
          lo = static_cast<T>(attr_lo);
          hi = static_cast<T>(attr_hi);
        }
        bcast::unary(x.data_as<T>(), y.data_as<T>(), n, [lo, hi](T v) {
          v = v < lo ? lo : v;  // NaN passes through both comparisons unchanged
          return v > hi ? hi : v;
        });
      });
    });
  };
}

}  // namespace pointrt::elementwise
