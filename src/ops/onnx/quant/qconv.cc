// ConvInteger, QLinearConv and the internal QConv on oneDNN's int8 convolution (AVX-512 VNNI
// where the CPU has it), with the reference kernel for what oneDNN cannot take.
//
// oneDNN wants int8 weights with a zero point of 0 and the output scales when the primitive is
// created, so the fast path needs constant weights, weight zero points and scales: at prepare
// time w - w_zero_point is stored as int8 when every value fits (uint8 weights with zero point
// 128 do), the per-channel multipliers x_scale * w_scale[m] / y_scale are computed, and, when
// x's shape is known, the primitive is built and the weights reordered once. The zero points of
// x and y are run-time arguments. The bias (int32) is added before the scale, the residual
// operand is a sum post-op with its own scale and zero point, then ReLU, then y's zero point
// (oneDNN's order, which requantize_ref follows). A QConv with a residual sum may carry the
// convolution's own output quantization (mid_scale, mid_zp): the accumulators are then rounded
// and clamped in that scale before the sum (round, clip and linear post-ops), as ONNX Runtime's
// QLinearConv followed by QLinearAdd rounds twice. Anything else (weights or scales fed at run
// time, weights that do not fit int8, rank > 5) runs the reference kernel with the run's values.
#include <algorithm>
#include <limits>
#include <map>
#include <mutex>

#include "ops/onnx/quant/dnnl_int8.h"
#include "ops/onnx/quant/qconv.h"
#include "ops/onnx/quant/quant_common.h"
#include "ops/onnx/quant/quantize.h"

namespace pointrt::quant {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

enum class Kind { kConvInteger, kQLinearConv, kQConv };

// Input positions: ConvInteger (x, w, x_zp, w_zp) and QLinearConv / QConv.
struct Slots {
  int x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, bias, sum, sum_scale, sum_zp, mid_scale, mid_zp;
};
constexpr Slots kConvIntegerSlots{0, -1, 2, 1, -1, 3, -1, -1, -1, -1, -1, -1, -1, -1};
constexpr Slots kQLinearSlots{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
constexpr int kSlotCount = 14;

const std::vector<DType> kInt8Types = {DType::kInt8, DType::kUInt8};

struct QConvPlan {
  nn::ConvGeometry geo;
  bool empty = false, use_ref = false;
  std::shared_ptr<void> op_desc;  // outlives pd
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::primitive prim;
  memory::desc x_md, y_md, src_md, dst_md, b_md;
  nn::PreparedReorder src_reorder, dst_reorder, sum_reorder;
  memory packed_weights;
  std::string impl;
};

tag weights_tag(size_t rank, bool grouped) {
  switch (rank) {
    case 3: return grouped ? tag::abcd : tag::abc;
    case 4: return grouped ? tag::abcde : tag::abcd;
    case 5: return grouped ? tag::abcdef : tag::abcde;
    default: fail("oneDNN: no weights layout for rank ", rank);
  }
}

class QConvKernel : public OpKernel {
 public:
  QConvKernel(const KernelInit& init, Kind kind)
      : where_(init.where()), kind_(kind), slots_(kind == Kind::kConvInteger ? kConvIntegerSlots : kQLinearSlots) {
    names_ = input_names(init);
    names_.resize(kSlotCount);
    const Attributes& at = init.attrs();
    attrs_ = nn::parse_conv_attrs(at, false, where_);
    if (kind_ == Kind::kQConv) {
      float_out_ = at.get_int(kAttrFloatOutput, 0) != 0;
      relu_ = at.get_int(nn::kAttrPostRelu, 0) != 0;
      has_sum_ = at.get_int(nn::kAttrSumInput, 0) != 0;
      has_mid_ = has_sum_ && init.has_input(slots_.mid_scale);
      src_cl_ = at.get_int(kAttrSrcNhwc, 0) != 0;
      dst_cl_ = at.get_int(kAttrDstNhwc, 0) != 0;
      sum_cl_ = at.get_int(kAttrSumNhwc, 0) != 0;
      global_max_ = at.get_int(kAttrGlobalMax, 0) != 0;
      keepdims_ = at.get_int(kAttrGlobalMaxKeepdims, 1) != 0;
      if (global_max_ && (float_out_ || dst_cl_))
        fail(where_, ": a global-max QConv writes int8 in the plain layout (internal attributes)");
    }
    check_types(declared_type(init, slots_.x), declared_type(init, slots_.w),
                [&](int slot) { return slot >= 0 ? declared_type(init, slot) : DType::kUndefined; });
    prepare_constants(init);
    const Value* xv = init.input_value(slots_.x);
    if (static_ok_ && xv && xv->has_shape) {
      Shape s;
      for (const Dim& d : xv->shape)
        if (d.is_fixed()) s.push_back(d.value);
      if (s.size() != xv->shape.size()) return;
      try {
        plans_[nn::plan_key(s)] = build_plan(s);
      } catch (const Error&) {
        // A shape the run rejects anyway; report it then.
      }
    }
  }

  /// The implementation oneDNN chose for X's shape ("reference" when the reference kernel runs).
  std::string impl_for(const Shape& x) const {
    if (!static_ok_) return "reference";
    auto p = plan_for(x);
    return p->use_ref ? "reference" : p->impl;
  }

  void run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(slots_.x);
    const Tensor& w = ctx.input(slots_.w);
    check_types(x.dtype(), w.dtype(), [&](int slot) {
      return slot >= 0 && ctx.has_input(slot) ? ctx.input(slot).dtype() : DType::kUndefined;
    });
    const Tensor* b = slots_.bias >= 0 && ctx.has_input(slots_.bias) ? &ctx.input(slots_.bias) : nullptr;
    nn::ConvGeometry g = nn::conv_geometry(attrs_, x.shape(), w.shape(), b ? &b->shape() : nullptr, where_);
    DType out = kind_ == Kind::kConvInteger ? DType::kInt32
                : float_out_                ? DType::kFloat32
                                            : ctx.input(slots_.y_zp).dtype();
    if (global_max_) return run_global_max(ctx, g, x, w, b, out);
    Tensor& y = ctx.output(0, out, g.output_shape());
    if (y.numel() == 0) return;
    const int32_t x_zp = zero_point(ctx, slots_.x_zp, "zero point");
    if (!runs_packed(ctx)) return run_reference(ctx, g, x, w, b, y);
    std::shared_ptr<const QConvPlan> plan = plan_for(x.shape());
    if (plan->use_ref) return run_reference(ctx, g, x, w, b, y);
    const int32_t y_zp = slots_.y_zp >= 0 && !float_out_ ? zero_point(ctx, slots_.y_zp, "zero point") : 0;
    execute_dnnl(ctx, *plan, x, b, x_zp, y_zp, y.data(), y.shape());
  }

 private:
  template <typename TypeOf>
  void check_types(DType x, DType w, TypeOf type_of) const {
    check_input_type(where_, "input", names_[slots_.x], x, kInt8Types, "int8 or uint8");
    check_input_type(where_, "input", names_[slots_.w], w, kInt8Types, "int8 or uint8");
    check_zero_point_type(where_, names_[slots_.x_zp], type_of(slots_.x_zp), names_[slots_.x], x);
    check_zero_point_type(where_, names_[slots_.w_zp], type_of(slots_.w_zp), names_[slots_.w], w);
    if (kind_ == Kind::kConvInteger) return;
    for (int s : {slots_.x_scale, slots_.w_scale, slots_.y_scale})
      check_input_type(where_, "scale", names_[s], type_of(s), {DType::kFloat32}, "float");
    if (!float_out_)
      check_input_type(where_, "zero point", names_[slots_.y_zp], type_of(slots_.y_zp), kInt8Types, "int8 or uint8");
    check_input_type(where_, "bias", names_[slots_.bias], type_of(slots_.bias), {DType::kInt32}, "int32");
    if (has_sum_)
      check_zero_point_type(where_, names_[slots_.sum_zp], type_of(slots_.sum_zp), names_[slots_.sum],
                            type_of(slots_.sum));
    if (has_mid_) {
      check_input_type(where_, "scale", names_[slots_.mid_scale], type_of(slots_.mid_scale), {DType::kFloat32},
                       "float");
      check_input_type(where_, "zero point", names_[slots_.mid_zp], type_of(slots_.mid_zp), kInt8Types,
                       "int8 or uint8");
    }
  }

  int32_t zero_point(KernelContext& ctx, int slot, const char* role) const {
    if (slot < 0 || !ctx.has_input(slot)) return 0;
    return scalar_int(ctx.input(slot), where_, role, names_[slot]);
  }

  // The multipliers of the epilogue from the given scale tensors (x_scale and y_scale scalars,
  // w_scale scalar or one per output channel).
  std::vector<float> multipliers(const Tensor& xs, const Tensor& ws, const Tensor* ys, int64_t channels) const {
    const float x_scale = scalar_float(xs, where_, "scale", names_[slots_.x_scale]);
    const float y_scale = ys ? scalar_float(*ys, where_, "scale", names_[slots_.y_scale]) : 1.f;
    if (ws.dtype() != DType::kFloat32)
      fail(where_, ": scale '", names_[slots_.w_scale], "' has element type ", dtype_name(ws.dtype()),
           ", expected float");
    if (ws.numel() != 1 && (ws.rank() != 1 || ws.numel() != channels))
      fail(where_, ": scale '", names_[slots_.w_scale], "' has shape ", shape_to_string(ws.shape()),
           "; expected a scalar or [", channels, "] (one per output channel)");
    std::vector<float> m;
    for (int64_t i = 0; i < ws.numel(); ++i)
      m.push_back(ys ? x_scale * ws.data_as<float>()[i] / y_scale : x_scale * ws.data_as<float>()[i]);
    return m;
  }

  // w - w_zero_point per output channel: the zero point vector of the run.
  std::vector<int32_t> weight_zero_points(const Tensor* wzp, int64_t channels) const {
    if (!wzp) return {0};
    if (wzp->numel() != 1 && (wzp->rank() != 1 || wzp->numel() != channels))
      fail(where_, ": zero point '", names_[slots_.w_zp], "' has shape ", shape_to_string(wzp->shape()),
           "; expected a scalar or [", channels, "] (one per output channel)");
    std::vector<int32_t> z;
    for (int64_t i = 0; i < wzp->numel(); ++i) z.push_back(static_cast<int32_t>(load_as_int(*wzp, i)));
    return z;
  }

  // mid: the mid_scale and mid_zp tensors (has_mid_), else null.
  Requantize requantize_for(const std::vector<float>& mult, const Tensor* ys, const Tensor* sum_scale, int32_t sum_zp,
                            int32_t y_zp, DType out, const Tensor* mid_scale = nullptr,
                            const Tensor* mid_zp = nullptr) const {
    Requantize r;
    if (mid_scale && mid_zp && ys) {
      int64_t lo = 0, hi = 0;
      quantized_range(mid_zp->dtype(), lo, hi);
      const int32_t z = scalar_int(*mid_zp, where_, "zero point", names_[slots_.mid_zp]);
      r.mid = true;
      r.mid_to_y = scalar_float(*mid_scale, where_, "scale", names_[slots_.mid_scale]) /
                   scalar_float(*ys, where_, "scale", names_[slots_.y_scale]);
      r.mid_lo = static_cast<float>(lo - z);
      r.mid_hi = static_cast<float>(hi - z);
    }
    r.out = out;
    r.float_output = float_out_;
    r.relu = relu_;
    r.zero_point = y_zp;
    r.multiplier = mult;
    if (has_sum_ && !float_out_) {
      const float y_scale = scalar_float(*ys, where_, "scale", names_[slots_.y_scale]);
      r.sum_scale = scalar_float(*sum_scale, where_, "scale", names_[slots_.sum_scale]) / y_scale;
      r.sum_zero_point = sum_zp;
    }
    r.has_sum = has_sum_;
    return r;
  }

  void prepare_constants(const KernelInit& init);
  bool runs_packed(KernelContext& ctx) const;
  std::shared_ptr<const QConvPlan> plan_for(const Shape& x) const;
  std::shared_ptr<QConvPlan> build_plan(const Shape& x) const;
  void execute_dnnl(KernelContext& ctx, const QConvPlan& p, const Tensor& x, const Tensor* b, int32_t x_zp,
                    int32_t y_zp, void* y, const Shape& y_shape) const;
  // The convolution into a temporary (channels-last on the oneDNN path), then its maximum over
  // the spatial positions into output 0.
  void run_global_max(KernelContext& ctx, const nn::ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                      DType out) const;
  void run_reference(KernelContext& ctx, const nn::ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b,
                     Tensor& y) const;

  std::string where_;
  Kind kind_;
  Slots slots_;
  std::vector<std::string> names_;
  nn::ConvAttrs attrs_;
  bool float_out_ = false, relu_ = false, has_sum_ = false, has_mid_ = false, src_cl_ = false, dst_cl_ = false,
       sum_cl_ = false, global_max_ = false, keepdims_ = true;
  // Prepared from constants (static_ok_: everything the primitive bakes in is known).
  bool static_ok_ = false;
  DType x_type_ = DType::kUndefined, out_type_ = DType::kUndefined, sum_type_ = DType::kUndefined;
  Tensor weights_s8_;                   // w - w_zero_point, int8, W's shape
  std::vector<const void*> constants_;  // data of every constant input the plan relies on, by slot
  Requantize requant_;
  mutable std::mutex mutex_;
  mutable std::map<Shape, std::shared_ptr<const QConvPlan>> plans_;
};

void QConvKernel::prepare_constants(const KernelInit& init) {
  constants_.assign(kSlotCount, nullptr);
  x_type_ = declared_type(init, slots_.x);
  const Tensor* w = init.constant_input(slots_.w);
  const bool wzp_absent = !init.has_input(slots_.w_zp);
  const Tensor* wzp = wzp_absent ? nullptr : init.constant_input(slots_.w_zp);
  if (!w || (!wzp && !wzp_absent) || w->rank() < 3 || (x_type_ != DType::kInt8 && x_type_ != DType::kUInt8)) return;
  const int64_t m = w->dim(0), per = w->numel() / std::max<int64_t>(m, 1);
  std::vector<int32_t> z = weight_zero_points(wzp, m);
  Tensor s8 = Tensor::allocate(DType::kInt8, w->shape());
  for (int64_t c = 0; c < m; ++c)
    for (int64_t i = 0; i < per; ++i) {
      const int64_t v = load_as_int(*w, c * per + i) - (z.size() == 1 ? z[0] : z[c]);
      if (v < -128 || v > 127) return;  // does not fit int8: the reference kernel runs
      s8.data_as<int8_t>()[c * per + i] = static_cast<int8_t>(v);
    }
  constants_[slots_.w] = w->data();
  if (wzp) constants_[slots_.w_zp] = wzp->data();
  out_type_ = kind_ == Kind::kConvInteger ? DType::kInt32
              : float_out_                ? DType::kFloat32
                                          : declared_type(init, slots_.y_zp);
  if (out_type_ == DType::kUndefined) return;
  if (kind_ != Kind::kConvInteger) {
    const Tensor *xs = init.constant_input(slots_.x_scale), *ws = init.constant_input(slots_.w_scale);
    const Tensor* ys = float_out_ ? nullptr : init.constant_input(slots_.y_scale);
    if (!xs || !ws || (!float_out_ && !ys)) return;
    int32_t sum_zp = 0;
    const Tensor* ss = nullptr;
    if (has_sum_) {
      ss = init.constant_input(slots_.sum_scale);
      const Tensor* sz = init.constant_input(slots_.sum_zp);
      sum_type_ = declared_type(init, slots_.sum);
      const bool sz_known = sz || !init.has_input(slots_.sum_zp);
      if (!float_out_ && (!ss || !sz_known || (sum_type_ != DType::kInt8 && sum_type_ != DType::kUInt8))) return;
      if (sz) sum_zp = scalar_int(*sz, where_, "zero point", names_[slots_.sum_zp]);
      if (float_out_) sum_type_ = DType::kFloat32;
    }
    const Tensor* ms = has_mid_ ? init.constant_input(slots_.mid_scale) : nullptr;
    const Tensor* mz = has_mid_ ? init.constant_input(slots_.mid_zp) : nullptr;
    if (has_mid_ && (!ms || !mz)) return;
    // With the convolution's own quantization, the accumulators are scaled into its scale first.
    requant_ = requantize_for(multipliers(*xs, *ws, has_mid_ ? ms : ys, m), ys, ss, sum_zp, 0, out_type_, ms, mz);
    for (int s : {slots_.x_scale, slots_.w_scale, slots_.y_scale, slots_.sum_scale, slots_.sum_zp, slots_.mid_scale,
                  slots_.mid_zp})
      if (s >= 0 && init.constant_input(s)) constants_[s] = init.constant_input(s)->data();
  } else {
    requant_.out = DType::kInt32;
  }
  weights_s8_ = s8;
  static_ok_ = true;
}

bool QConvKernel::runs_packed(KernelContext& ctx) const {
  if (!static_ok_ || ctx.input(slots_.x).dtype() != x_type_) return false;
  for (int s = 0; s < static_cast<int>(constants_.size()); ++s)
    if (constants_[s] && (!ctx.has_input(s) || ctx.input(s).data() != constants_[s])) return false;
  if (slots_.w_zp >= 0 && !constants_[slots_.w_zp] && ctx.has_input(slots_.w_zp)) return false;
  if (has_sum_ && ctx.input(slots_.sum).dtype() != sum_type_) return false;
  return float_out_ || kind_ == Kind::kConvInteger || ctx.input(slots_.y_zp).dtype() == out_type_;
}

std::shared_ptr<const QConvPlan> QConvKernel::plan_for(const Shape& x) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Shape key = nn::plan_key(x);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto p = build_plan(x);
  plans_[key] = p;
  return p;
}

std::shared_ptr<QConvPlan> QConvKernel::build_plan(const Shape& x) const {
  auto p = std::make_shared<QConvPlan>();
  const Shape& w = weights_s8_.shape();
  p->geo = nn::conv_geometry(attrs_, x, w, nullptr, where_);
  const nn::ConvGeometry& g = p->geo;
  const Shape y = g.output_shape();
  const size_t rank = x.size();
  p->use_ref = rank < 3 || rank > 5;
  for (size_t i = 0; i < g.pad_begin.size() && !p->use_ref; ++i) p->use_ref = g.pad_begin[i] < 0 || g.pad_end[i] < 0;
  if (p->use_ref) return p;
  const bool grouped = g.group > 1;
  memory::dims wdims;
  if (grouped) wdims.push_back(g.group);
  wdims.push_back(g.out_channels / g.group);
  wdims.push_back(g.in_channels / g.group);
  wdims.insert(wdims.end(), g.kernel.begin(), g.kernel.end());
  p->x_md = activation_desc(x, x_type_, src_cl_);
  const bool y_cl = dst_cl_ || global_max_;  // the global max reads rows of channels
  p->y_md = activation_desc(y, out_type_, y_cl);
  p->b_md = memory::desc({g.out_channels}, memory::data_type::s32, tag::x);
  memory::dims strides(g.strides.begin(), g.strides.end()), dil, pl(g.pad_begin.begin(), g.pad_begin.end()),
      pr(g.pad_end.begin(), g.pad_end.end());
  for (int64_t d : g.dilations) dil.push_back(d - 1);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (kind_ != Kind::kConvInteger) attr.set_output_scales(requant_.multiplier.size() > 1 ? 2 : 0, requant_.multiplier);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (out_type_ == DType::kInt8 || out_type_ == DType::kUInt8)
    attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  dnnl::post_ops ops;
  if (requant_.mid) {
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_round, 0.f, 0.f);
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_clip, requant_.mid_lo, requant_.mid_hi);
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_linear, requant_.mid_to_y, 0.f);
  }
  if (has_sum_) ops.append_sum(requant_.sum_scale, requant_.sum_zero_point, dnnl_type(sum_type_));
  if (relu_) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(ops);
  const memory::desc src = src_cl_ ? p->x_md : memory::desc(nn::to_dims(x), dnnl_type(x_type_), tag::any);
  const memory::desc dst = y_cl ? p->y_md : memory::desc(nn::to_dims(y), dnnl_type(out_type_), tag::any);
  const memory::desc w_any(wdims, memory::data_type::s8, tag::any);
  try {
    const bool with_bias = kind_ != Kind::kConvInteger;
    auto d = with_bias ? std::make_shared<dnnl::convolution_forward::desc>(dnnl::prop_kind::forward_inference,
                                                                           dnnl::algorithm::convolution_direct, src,
                                                                           w_any, p->b_md, dst, strides, dil, pl, pr)
                       : std::make_shared<dnnl::convolution_forward::desc>(dnnl::prop_kind::forward_inference,
                                                                           dnnl::algorithm::convolution_direct, src,
                                                                           w_any, dst, strides, dil, pl, pr);
    p->pd = dnnl::convolution_forward::primitive_desc(*d, attr, nn::cpu_engine());
    p->op_desc = d;
    p->prim = dnnl::convolution_forward(p->pd);
    p->impl = p->pd.impl_info_str();
    p->src_md = p->pd.src_desc();
    p->dst_md = p->pd.dst_desc();
    if (p->src_md != p->x_md) p->src_reorder = nn::make_reorder(p->x_md, p->src_md);
    if (p->dst_md != p->y_md) p->dst_reorder = nn::make_reorder(p->dst_md, p->y_md);
    if (has_sum_) {  // the residual operand is copied into dst (the sum post-op adds to it)
      memory::desc s_md = activation_desc(y, sum_type_, sum_cl_), s_want = p->dst_md;
      s_want.data.data_type = static_cast<dnnl_data_type_t>(dnnl_type(sum_type_));
      if (s_md != s_want) p->sum_reorder = nn::make_reorder(s_md, s_want);
    }
    memory::desc w_plain(wdims, memory::data_type::s8, weights_tag(rank, grouped));
    p->packed_weights = memory(p->pd.weights_desc(), nn::cpu_engine());
    nn::reorder_memory(w_plain, weights_s8_.data(), p->pd.weights_desc(), p->packed_weights.get_data_handle());
  } catch (const dnnl::error&) {
    p->use_ref = true;
  }
  return p;
}

void QConvKernel::execute_dnnl(KernelContext& ctx, const QConvPlan& p, const Tensor& x, const Tensor* b, int32_t x_zp,
                               int32_t y_zp, void* y, const Shape& y_shape) const {
  nn::RunBuffers buffers(ctx);
  void* src = const_cast<void*>(x.data());
  if (p.src_reorder.valid()) {
    void* tmp = buffers.get(nn::kSrcSlot, p.src_md.get_size());
    p.src_reorder.run(src, tmp);
    src = tmp;
  }
  void* dst = y;
  const bool dst_tmp = p.dst_reorder.valid();
  if (dst_tmp) dst = buffers.get(nn::kDstSlot, p.dst_md.get_size());
  if (has_sum_) {
    const Tensor& s = ctx.input(slots_.sum);
    if (s.shape() != y_shape)
      fail(where_, ": residual operand '", names_[slots_.sum], "' has shape ", shape_to_string(s.shape()),
           ", expected ", shape_to_string(y_shape));
    if (p.sum_reorder.valid())
      p.sum_reorder.run(s.data(), dst);
    else
      std::memcpy(dst, s.data(), s.nbytes());
  }
  std::unordered_map<int, memory> args;
  const auto& eng = nn::cpu_engine();
  memory::desc zp_md({1}, memory::data_type::s32, tag::x);
  args[DNNL_ARG_SRC] = memory(p.src_md, eng, src);
  args[DNNL_ARG_WEIGHTS] = p.packed_weights;
  if (kind_ != Kind::kConvInteger) {
    if (b && b->numel() != p.geo.out_channels)
      fail(where_, ": bias '", names_[slots_.bias], "' has ", b->numel(), " elements, expected ", p.geo.out_channels);
    Tensor zeros;
    if (!b) zeros = Tensor::zeros(DType::kInt32, {p.geo.out_channels});
    args[DNNL_ARG_BIAS] = memory(p.b_md, eng, const_cast<void*>(b ? b->data() : zeros.data()));
    args[DNNL_ARG_DST] = memory(p.dst_md, eng, dst);
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = memory(zp_md, eng, &x_zp);
    if (!float_out_) args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = memory(zp_md, eng, &y_zp);
    nn::execute_with_scratchpad(p.prim, p.pd, args, buffers);
  } else {
    args[DNNL_ARG_DST] = memory(p.dst_md, eng, dst);
    args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = memory(zp_md, eng, &x_zp);
    nn::execute_with_scratchpad(p.prim, p.pd, args, buffers);
  }
  if (dst_tmp) p.dst_reorder.run(dst, y);
}

void QConvKernel::run_reference(KernelContext& ctx, const nn::ConvGeometry& g, const Tensor& x, const Tensor& w,
                                const Tensor* b, Tensor& y) const {
  auto opt = [&](int slot) { return slot >= 0 && ctx.has_input(slot) ? &ctx.input(slot) : nullptr; };
  Tensor xp = x;
  if (src_cl_) {
    xp = Tensor::allocate(x.dtype(), x.shape());
    relayout(x, true, xp, false);
  }
  const int64_t spatial = shape_numel(g.out_spatial);
  Tensor acc = Tensor::allocate(DType::kInt32, y.shape());
  conv_integer_ref(g, xp, zero_point(ctx, slots_.x_zp, "zero point"), w,
                   weight_zero_points(opt(slots_.w_zp), g.out_channels), acc.data_as<int32_t>());
  Requantize r;
  r.out = y.dtype();
  if (kind_ != Kind::kConvInteger) {
    const Tensor* ys = float_out_ ? nullptr : opt(slots_.y_scale);
    const Tensor* ms = has_mid_ ? opt(slots_.mid_scale) : nullptr;
    std::vector<float> mult =
        multipliers(ctx.input(slots_.x_scale), ctx.input(slots_.w_scale), ms ? ms : ys, g.out_channels);
    const int32_t sum_zp = has_sum_ ? zero_point(ctx, slots_.sum_zp, "zero point") : 0;
    const int32_t y_zp = float_out_ ? 0 : zero_point(ctx, slots_.y_zp, "zero point");
    r = requantize_for(mult, ys, opt(slots_.sum_scale), sum_zp, y_zp, y.dtype(), ms,
                       has_mid_ ? opt(slots_.mid_zp) : nullptr);
    if (b && b->numel() != g.out_channels)
      fail(where_, ": bias '", names_[slots_.bias], "' has ", b->numel(), " elements, expected ", g.out_channels);
  }
  Tensor s;
  if (has_sum_) {
    s = ctx.input(slots_.sum);
    if (s.shape() != y.shape())
      fail(where_, ": residual operand '", names_[slots_.sum], "' has shape ", shape_to_string(s.shape()),
           ", expected ", shape_to_string(y.shape()));
    if (sum_cl_) {
      Tensor plain = Tensor::allocate(s.dtype(), s.shape());
      relayout(s, true, plain, false);
      s = plain;
    }
  }
  Tensor yp = dst_cl_ ? Tensor::allocate(y.dtype(), y.shape()) : y;
  requantize_ref(r, acc.data_as<int32_t>(), b ? b->data_as<int32_t>() : nullptr, g.batch, g.out_channels, spatial,
                 has_sum_ ? &s : nullptr, yp);
  if (dst_cl_) relayout(yp, false, y, true);
}

// out[n, c] = the maximum of y [N, C, S] (plain) or [N, S, C] (channels-last) over S; the
// lowest value of T when S = 0 (ReduceMax over an empty set).
template <typename T>
void max_over_spatial(const T* y, bool channels_last, int64_t batch, int64_t channels, int64_t spatial, T* out) {
  for (int64_t n = 0; n < batch; ++n) {
    const T* yn = y + n * channels * spatial;
    T* o = out + n * channels;
    std::fill(o, o + channels, std::numeric_limits<T>::lowest());
    if (channels_last) {
      for (int64_t s = 0; s < spatial; ++s) {
        const T* row = yn + s * channels;
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c) o[c] = row[c] > o[c] ? row[c] : o[c];
      }
    } else {
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t s = 0; s < spatial; ++s) o[c] = std::max(o[c], yn[c * spatial + s]);
    }
  }
}

void QConvKernel::run_global_max(KernelContext& ctx, const nn::ConvGeometry& g, const Tensor& x, const Tensor& w,
                                 const Tensor* b, DType out) const {
  const Shape full = g.output_shape();
  Shape reduced = {g.batch, g.out_channels};
  if (keepdims_) reduced.resize(full.size(), 1);
  Tensor& y = ctx.output(0, out, reduced);
  if (y.numel() == 0) return;
  const int64_t spatial = shape_numel(g.out_spatial);
  std::shared_ptr<const QConvPlan> plan;
  if (spatial > 0 && runs_packed(ctx)) plan = plan_for(x.shape());
  Tensor conv_out;  // [N, C, S...] of the convolution: channels-last on oneDNN's path, else plain
  const bool channels_last = plan && !plan->use_ref;
  if (channels_last) {
    conv_out = ctx.temporary(static_cast<size_t>(shape_numel(full)) * dtype_size(out));
    const int32_t x_zp = zero_point(ctx, slots_.x_zp, "zero point");
    execute_dnnl(ctx, *plan, x, b, x_zp, zero_point(ctx, slots_.y_zp, "zero point"), conv_out.data(), full);
  } else if (spatial > 0) {
    conv_out = Tensor::allocate(out, full);
    run_reference(ctx, g, x, w, b, conv_out);
  }
  if (out == DType::kUInt8)
    max_over_spatial(static_cast<const uint8_t*>(conv_out.data()), channels_last, g.batch, g.out_channels, spatial,
                     y.data_as<uint8_t>());
  else
    max_over_spatial(static_cast<const int8_t*>(conv_out.data()), channels_last, g.batch, g.out_channels, spatial,
                     y.data_as<int8_t>());
}

}  // namespace

std::unique_ptr<OpKernel> make_conv_integer_kernel(const KernelInit& init) {
  return std::make_unique<QConvKernel>(init, Kind::kConvInteger);
}
std::unique_ptr<OpKernel> make_qlinear_conv_kernel(const KernelInit& init) {
  return std::make_unique<QConvKernel>(init, Kind::kQLinearConv);
}
std::unique_ptr<OpKernel> make_qconv_kernel(const KernelInit& init) {
  return std::make_unique<QConvKernel>(init, Kind::kQConv);
}

std::string qconv_impl_name(const OpKernel& k, const Shape& x) {
  auto* c = dynamic_cast<const QConvKernel*>(&k);
  return c ? c->impl_for(x) : "";
}

}  // namespace pointrt::quant
