// MatMulInteger, QLinearMatMul and the internal QMatMul on oneDNN's int8 matmul, with the
// reference kernel for what oneDNN cannot take.
//
// The fast path needs a constant 2-D B whose values minus their zero points (per tensor or per
// column) fit int8, constant scales with a per-tensor a_scale, and a scalar a_zero_point: A's
// batch then folds into its rows, B is reordered once into oneDNN's packed layout, and one
// primitive per row count is made (cached with the thread count). The bias (QMatMul) is added
// to the int32 accumulators before the scale, as in the reference.
#include <cmath>
#include <map>
#include <mutex>

#include "ops/onnx/quant/dnnl_int8.h"
#include "ops/onnx/quant/qconv.h"
#include "ops/onnx/quant/qmatmul.h"
#include "ops/onnx/quant/quant_common.h"
#include "ops/onnx/quant/quantize.h"
#include "ops/onnx/reduce/matmul.h"

namespace pointrt::quant {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

enum class Kind { kMatMulInteger, kQLinearMatMul, kQMatMul };

struct Slots {
  int a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, bias;
};
constexpr Slots kIntegerSlots{0, -1, 2, 1, -1, 3, -1, -1, -1};
constexpr Slots kQLinearSlots{0, 1, 2, 3, 4, 5, 6, 7, 8};

const std::vector<DType> kInt8Types = {DType::kInt8, DType::kUInt8};

struct QMatmulPlan {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  memory::desc src_md, dst_md, bias_md;
};

// float16 scales: the multiplier in float16 arithmetic (as ONNX's reference computes it).
float multiplier_of(double a, double b, double y, bool half) {
  if (!half) return static_cast<float>(a) * static_cast<float>(b) / static_cast<float>(y);
  float ab = half_to_float(float_to_half(static_cast<float>(a) * static_cast<float>(b)));
  return half_to_float(float_to_half(ab / static_cast<float>(y)));
}

class QMatMulKernel : public OpKernel {
 public:
  QMatMulKernel(const KernelInit& init, Kind kind)
      : where_(init.where()), kind_(kind), slots_(kind == Kind::kMatMulInteger ? kIntegerSlots : kQLinearSlots) {
    names_ = input_names(init);
    names_.resize(9);
    if (kind_ == Kind::kQMatMul) {
      float_out_ = init.attrs().get_int(kAttrFloatOutput, 0) != 0;
      relu_ = init.attrs().get_int(nn::kAttrPostRelu, 0) != 0;
    }
    check_types([&](int s) { return s >= 0 ? declared_type(init, s) : DType::kUndefined; });
    prepare_constants(init);
  }

  /// The implementation oneDNN chose for `rows` rows of A ("reference" when the reference runs).
  std::string impl_for(int64_t rows) const {
    if (!static_ok_) return "reference";
    try {
      return plan_for(rows)->pd.impl_info_str();
    } catch (const dnnl::error&) {
      return "reference";
    }
  }

  void run(KernelContext& ctx) const override {
    auto type_of = [&](int s) { return s >= 0 && ctx.has_input(s) ? ctx.input(s).dtype() : DType::kUndefined; };
    check_types(type_of);
    const Tensor& a = ctx.input(slots_.a);
    const Tensor& b = ctx.input(slots_.b);
    const Shape ys = reduce::matmul_output_shape(a.shape(), b.shape(), where_);
    const DType out = kind_ == Kind::kMatMulInteger ? DType::kInt32
                      : float_out_                  ? DType::kFloat32
                                                    : ctx.input(slots_.y_zp).dtype();
    Tensor& y = ctx.output(0, out, ys);
    if (y.numel() == 0) return;
    const Tensor* bias = slots_.bias >= 0 && ctx.has_input(slots_.bias) ? &ctx.input(slots_.bias) : nullptr;
    if (bias && (bias->dtype() != DType::kInt32 || bias->numel() != ys.back()))
      fail(where_, ": bias '", names_[slots_.bias], "' must be int32 with ", ys.back(), " elements, got ",
           dtype_name(bias->dtype()), " ", shape_to_string(bias->shape()));
    if (runs_packed(ctx, a, b)) return run_packed(ctx, a, bias, y);
    run_reference(ctx, a, b, bias, y);
  }

 private:
  template <typename TypeOf>
  void check_types(TypeOf type_of) const {
    check_input_type(where_, "input", names_[slots_.a], type_of(slots_.a), kInt8Types, "int8 or uint8");
    check_input_type(where_, "input", names_[slots_.b], type_of(slots_.b), kInt8Types, "int8 or uint8");
    check_zero_point_type(where_, names_[slots_.a_zp], type_of(slots_.a_zp), names_[slots_.a], type_of(slots_.a));
    check_zero_point_type(where_, names_[slots_.b_zp], type_of(slots_.b_zp), names_[slots_.b], type_of(slots_.b));
    if (kind_ == Kind::kMatMulInteger) return;
    for (int s : {slots_.a_scale, slots_.b_scale, slots_.y_scale})
      check_input_type(where_, "scale", names_[s], type_of(s), {DType::kFloat32, DType::kFloat16}, "float or float16");
    if (!float_out_)
      check_input_type(where_, "zero point", names_[slots_.y_zp], type_of(slots_.y_zp), kInt8Types, "int8 or uint8");
  }

  OperandParam param(KernelContext& ctx, int slot, const Tensor& operand, bool rows, double dflt) const {
    if (slot < 0 || !ctx.has_input(slot)) return OperandParam{{dflt}, 1};
    return operand_param(ctx.input(slot), operand.shape(), rows, where_, names_[slot],
                         names_[rows ? slots_.a : slots_.b]);
  }

  void prepare_constants(const KernelInit& init);
  bool runs_packed(KernelContext& ctx, const Tensor& a, const Tensor& b) const;
  void run_packed(KernelContext& ctx, const Tensor& a, const Tensor* bias, Tensor& y) const;
  void run_reference(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* bias, Tensor& y) const;
  std::shared_ptr<const QMatmulPlan> plan_for(int64_t rows) const;

  std::string where_;
  Kind kind_;
  Slots slots_;
  std::vector<std::string> names_;
  bool float_out_ = false, relu_ = false;
  bool static_ok_ = false;
  DType a_type_ = DType::kUndefined, out_type_ = DType::kUndefined;
  int64_t k_ = 0, n_ = 0;
  memory packed_b_;
  std::vector<float> multiplier_;
  std::vector<const void*> constants_;
  mutable std::mutex mutex_;
  mutable std::map<std::pair<int64_t, int>, std::shared_ptr<const QMatmulPlan>> plans_;
};

void QMatMulKernel::prepare_constants(const KernelInit& init) {
  constants_.assign(9, nullptr);
  a_type_ = declared_type(init, slots_.a);
  const Tensor* b = init.constant_input(slots_.b);
  const bool bzp_absent = !init.has_input(slots_.b_zp);
  const Tensor* bzp = bzp_absent ? nullptr : init.constant_input(slots_.b_zp);
  if (!b || b->rank() != 2 || (!bzp && !bzp_absent) || (a_type_ != DType::kInt8 && a_type_ != DType::kUInt8)) return;
  k_ = b->dim(0);
  n_ = b->dim(1);
  if (k_ == 0 || n_ == 0) return;
  OperandParam z = bzp ? operand_param(*bzp, b->shape(), false, where_, names_[slots_.b_zp], names_[slots_.b])
                       : OperandParam{{0.0}, 1};
  Tensor s8 = Tensor::allocate(DType::kInt8, b->shape());
  for (int64_t e = 0; e < b->numel(); ++e) {
    const int64_t v = load_as_int(*b, e) - static_cast<int64_t>(z.entry(e % n_));
    if (v < -128 || v > 127) return;
    s8.data_as<int8_t>()[e] = static_cast<int8_t>(v);
  }
  out_type_ = kind_ == Kind::kMatMulInteger ? DType::kInt32
              : float_out_                  ? DType::kFloat32
                                            : declared_type(init, slots_.y_zp);
  if (out_type_ == DType::kUndefined) return;
  if (kind_ != Kind::kMatMulInteger) {
    const Tensor *as = init.constant_input(slots_.a_scale), *bs = init.constant_input(slots_.b_scale);
    const Tensor* ys = float_out_ ? nullptr : init.constant_input(slots_.y_scale);
    if (!as || !bs || (!float_out_ && !ys) || as->numel() != 1 || as->dtype() != DType::kFloat32 ||
        bs->dtype() != DType::kFloat32 || (ys && (ys->dtype() != DType::kFloat32 || ys->numel() != 1)))
      return;
    OperandParam bsp = operand_param(*bs, b->shape(), false, where_, names_[slots_.b_scale], names_[slots_.b]);
    for (double v : bsp.values)
      multiplier_.push_back(multiplier_of(as->data_as<float>()[0], v, ys ? ys->data_as<float>()[0] : 1.0, false));
    for (int s : {slots_.a_scale, slots_.b_scale, slots_.y_scale})
      if (s >= 0 && init.constant_input(s)) constants_[s] = init.constant_input(s)->data();
  }
  constants_[slots_.b] = b->data();
  if (bzp) constants_[slots_.b_zp] = bzp->data();
  const auto& eng = nn::cpu_engine();
  // Packed once for the primitive's weights layout; every plan has the same one (any M).
  memory::desc b_any({k_, n_}, memory::data_type::s8, tag::any);
  try {
    auto pd = plan_for(1)->pd;  // needs a_type_/out_type_/multiplier_ set
    packed_b_ = memory(pd.weights_desc(), eng);
    nn::reorder_memory(memory::desc({k_, n_}, memory::data_type::s8, tag::ab), s8.data(), pd.weights_desc(),
                       packed_b_.get_data_handle());
  } catch (const dnnl::error&) {
    return;
  }
  static_ok_ = true;
}

std::shared_ptr<const QMatmulPlan> QMatMulKernel::plan_for(int64_t rows) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto key = std::make_pair(rows, omp_get_max_threads());
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto p = std::make_shared<QMatmulPlan>();
  p->src_md = memory::desc({rows, k_}, dnnl_type(a_type_), tag::ab);
  p->dst_md = memory::desc({rows, n_}, dnnl_type(out_type_), tag::ab);
  p->bias_md = memory::desc({1, n_}, memory::data_type::s32, tag::ab);
  // The weights layout must not depend on M (packed_b_ serves every plan): oneDNN's brgemm
  // matmul picks it from K, N and the types only.
  memory::desc b_any({k_, n_}, memory::data_type::s8, tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (kind_ != Kind::kMatMulInteger) attr.set_output_scales(multiplier_.size() > 1 ? 2 : 0, multiplier_);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (out_type_ == DType::kInt8 || out_type_ == DType::kUInt8)
    attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::post_ops ops;
  if (relu_) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(ops);
  dnnl::matmul::desc d = kind_ == Kind::kMatMulInteger ? dnnl::matmul::desc(p->src_md, b_any, p->dst_md)
                                                       : dnnl::matmul::desc(p->src_md, b_any, p->bias_md, p->dst_md);
  p->pd = dnnl::matmul::primitive_desc(d, attr, nn::cpu_engine());
  if (packed_b_ && p->pd.weights_desc() != packed_b_.get_desc())
    throw dnnl::error(dnnl_unimplemented, "weights layout depends on M");
  p->prim = dnnl::matmul(p->pd);
  plans_[key] = p;
  return p;
}

bool QMatMulKernel::runs_packed(KernelContext& ctx, const Tensor& a, const Tensor& b) const {
  if (!static_ok_ || a.dtype() != a_type_ || a.rank() < 1 || a.shape().back() != k_) return false;
  for (int s = 0; s < static_cast<int>(constants_.size()); ++s)
    if (constants_[s] && (!ctx.has_input(s) || ctx.input(s).data() != constants_[s])) return false;
  if (ctx.has_input(slots_.b_zp) && !constants_[slots_.b_zp]) return false;
  if (ctx.has_input(slots_.a_zp) && ctx.input(slots_.a_zp).numel() != 1) return false;
  return float_out_ || kind_ == Kind::kMatMulInteger || ctx.input(slots_.y_zp).dtype() == out_type_;
}

void QMatMulKernel::run_packed(KernelContext& ctx, const Tensor& a, const Tensor* bias, Tensor& y) const {
  const int64_t rows = a.numel() / k_;
  std::shared_ptr<const QMatmulPlan> p;
  try {
    p = plan_for(rows);
  } catch (const dnnl::error&) {
    return run_reference(ctx, a, ctx.input(slots_.b), bias, y);
  }
  int32_t a_zp =
      ctx.has_input(slots_.a_zp) ? scalar_int(ctx.input(slots_.a_zp), where_, "zero point", names_[slots_.a_zp]) : 0;
  int32_t y_zp = out_type_ == DType::kInt8 || out_type_ == DType::kUInt8
                     ? scalar_int(ctx.input(slots_.y_zp), where_, "zero point", names_[slots_.y_zp])
                     : 0;
  const auto& eng = nn::cpu_engine();
  memory::desc zp_md({1}, memory::data_type::s32, tag::x);
  std::unordered_map<int, memory> args;
  args[DNNL_ARG_SRC] = memory(p->src_md, eng, const_cast<void*>(a.data()));
  args[DNNL_ARG_WEIGHTS] = packed_b_;
  args[DNNL_ARG_DST] = memory(p->dst_md, eng, y.data());
  Tensor zeros;
  if (kind_ != Kind::kMatMulInteger) {
    if (!bias) zeros = Tensor::zeros(DType::kInt32, {n_});
    args[DNNL_ARG_BIAS] = memory(p->bias_md, eng, const_cast<void*>(bias ? bias->data() : zeros.data()));
  }
  args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = memory(zp_md, eng, &a_zp);
  if (out_type_ == DType::kInt8 || out_type_ == DType::kUInt8)
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = memory(zp_md, eng, &y_zp);
  nn::RunBuffers buffers(ctx);
  nn::execute_with_scratchpad(p->prim, p->pd, args, buffers);
}

void QMatMulKernel::run_reference(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor* bias,
                                  Tensor& y) const {
  const bool direct = kind_ == Kind::kMatMulInteger;
  Tensor acc = direct ? y : Tensor::allocate(DType::kInt32, y.shape());
  matmul_integer_ref(a, param(ctx, slots_.a_zp, a, true, 0), b, param(ctx, slots_.b_zp, b, false, 0), acc);
  if (direct) return;
  const OperandParam as = param(ctx, slots_.a_scale, a, true, 1), bs = param(ctx, slots_.b_scale, b, false, 1);
  const bool half = ctx.input(slots_.a_scale).dtype() == DType::kFloat16;
  double y_scale = 1;
  int64_t lo = 0, hi = 0;
  int32_t y_zp = 0;
  if (!float_out_) {
    const Tensor& yst = ctx.input(slots_.y_scale);
    if (yst.numel() != 1) fail(where_, ": scale '", names_[slots_.y_scale], "' must be a scalar");
    y_scale = load_as_float(yst, 0);
    y_zp = scalar_int(ctx.input(slots_.y_zp), where_, "zero point", names_[slots_.y_zp]);
    quantized_range(y.dtype(), lo, hi);
  }
  const int64_t n = y.shape().back(), m = y.rank() >= 2 ? y.dim(y.rank() - 2) : 1;
  const int64_t rows = y.numel() / n;
  for (size_t check = 0; check < 2; ++check) {
    const OperandParam& p = check ? bs : as;
    if (p.values.size() != 1 && p.values.size() != static_cast<size_t>(p.per_matrix) &&
        p.values.size() != static_cast<size_t>(check ? rows / m * n : rows))
      fail(where_, ": per-", check ? "column" : "row", " scales of broadcast batches are not supported");
  }
  for (int64_t e = 0; e < y.numel(); ++e) {
    const int64_t row = e / n, col = e % n, batch = row / m;
    const double mult_a = as.entry(as.values.size() == static_cast<size_t>(rows) ? row : row % m);
    const double mult_b = bs.entry(batch * n + col);
    const float mult = multiplier_of(mult_a, mult_b, float_out_ ? 1.0 : y_scale, half);
    float v = static_cast<float>(static_cast<int64_t>(acc.data_as<int32_t>()[e]) +
                                 (bias ? bias->data_as<int32_t>()[col] : 0)) *
              (float_out_ ? static_cast<float>(mult_a) * static_cast<float>(mult_b) : mult);
    if (relu_) v = std::max(v, 0.f);
    if (float_out_)
      y.data_as<float>()[e] = v;
    else if (y.dtype() == DType::kUInt8)
      y.data_as<uint8_t>()[e] = static_cast<uint8_t>(saturate_round(v, y_zp, lo, hi));
    else
      y.data_as<int8_t>()[e] = static_cast<int8_t>(saturate_round(v, y_zp, lo, hi));
  }
}

}  // namespace

std::unique_ptr<OpKernel> make_matmul_integer_kernel(const KernelInit& init) {
  return std::make_unique<QMatMulKernel>(init, Kind::kMatMulInteger);
}
std::unique_ptr<OpKernel> make_qlinear_matmul_kernel(const KernelInit& init) {
  return std::make_unique<QMatMulKernel>(init, Kind::kQLinearMatMul);
}
std::unique_ptr<OpKernel> make_qmatmul_kernel(const KernelInit& init) {
  return std::make_unique<QMatMulKernel>(init, Kind::kQMatMul);
}

std::string qmatmul_impl_name(const OpKernel& k, int64_t rows) {
  auto* m = dynamic_cast<const QMatMulKernel*>(&k);
  return m ? m->impl_for(rows) : "";
}

}  // namespace pointrt::quant
