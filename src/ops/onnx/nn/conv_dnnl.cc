// Conv strategy "oneDNN": one convolution or deconvolution primitive. The layouts are chosen so
// the primitive runs its fastest kernel (Winograd where conv_winograd.cc says so, a plain GEMM for
// pointwise convs on plain data, otherwise a blocked jit kernel), with reorders from and to the
// layouts the graph holds; constant weights are reordered once, into the plan.
#include <algorithm>
#include <type_traits>
#include <unordered_map>

#include "ops/onnx/nn/conv_plan.h"

namespace pointrt::nn {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

tag weights_plain_tag(size_t rank, bool grouped, bool transpose) {
  // rank = rank of X; weights dims are [g,] O, I, spatial
  if (!transpose) {
    switch (rank) {
      case 3: return grouped ? tag::abcd : tag::abc;
      case 4: return grouped ? tag::abcde : tag::abcd;
      case 5: return grouped ? tag::abcdef : tag::abcde;
    }
  } else {  // ONNX keeps [C_in, C_out/group, K..]: i and o swapped
    switch (rank) {
      case 3: return grouped ? tag::acbd : tag::bac;
      case 4: return grouped ? tag::acbde : tag::bacd;
      case 5: return grouped ? tag::acbdef : tag::bacde;
    }
  }
  fail("oneDNN: no weights layout for rank ", rank);
}

// Everything of the primitive but the src/dst layouts and the algorithm.
struct PrimitiveRequest {
  memory::desc w_any;
  memory::dims strides, dil, pad_l, pad_r;
  dnnl::primitive_attr attr;
  bool has_bias = false, transpose = false;
  double plain_weight_bytes = 0, layer_output_bytes = 0;
};

PrimitiveRequest primitive_request(DnnlConvPlan& p, const ConvGeometry& g, const ConvNode& node, const Shape& x,
                                   const Shape& w, bool has_bias, double layer_output_bytes) {
  for (int64_t pb : g.pad_begin)
    if (pb < 0) throw dnnl::error(dnnl_unimplemented, "negative padding");
  for (int64_t pe : g.pad_end)
    if (pe < 0) throw dnnl::error(dnnl_unimplemented, "negative padding");
  const size_t rank = x.size();
  const Shape y = g.output_shape();
  const bool grouped = g.group > 1;
  memory::dims wdims;
  if (grouped) wdims.push_back(g.group);
  wdims.push_back(g.out_channels / g.group);
  wdims.push_back(g.in_channels / g.group);
  wdims.insert(wdims.end(), g.kernel.begin(), g.kernel.end());
  p.w_plain_md = memory::desc(wdims, memory::data_type::f32, weights_plain_tag(rank, grouped, node.transpose));
  p.b_md = memory::desc({g.out_channels}, memory::data_type::f32, tag::x);
  p.x_md = f32_desc(x, node.src_blocked ? blocked_tag(rank) : plain_tag(rank));
  p.y_md = f32_desc(y, node.dst_blocked ? blocked_tag(rank) : plain_tag(rank));

  PrimitiveRequest r;
  r.w_any = memory::desc(wdims, memory::data_type::f32, tag::any);
  r.strides.assign(g.strides.begin(), g.strides.end());
  for (int64_t d : g.dilations) r.dil.push_back(d - 1);  // oneDNN counts dilation from 0
  r.pad_l.assign(g.pad_begin.begin(), g.pad_begin.end());
  r.pad_r.assign(g.pad_end.begin(), g.pad_end.end());
  r.attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  if (node.has_sum) ops.append_sum(1.f);
  if (node.relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  r.attr.set_post_ops(ops);
  r.has_bias = has_bias;
  r.transpose = node.transpose;
  r.layer_output_bytes =
      layer_output_bytes == 0 ? sizeof(float) * static_cast<double>(shape_numel(y)) : layer_output_bytes;
  r.plain_weight_bytes = sizeof(float) * static_cast<double>(shape_numel(w));
  return r;
}

// Descriptor (with or without bias), primitive_desc and primitive for one of the two op kinds.
template <typename Op>
void make_op(DnnlConvPlan& p, const PrimitiveRequest& r, const memory::desc& src, const memory::desc& dst,
             dnnl::algorithm alg) {
  using Desc = typename Op::desc;
  auto d = r.has_bias ? std::make_shared<Desc>(dnnl::prop_kind::forward_inference, alg, src, r.w_any, p.b_md, dst,
                                               r.strides, r.dil, r.pad_l, r.pad_r)
                      : std::make_shared<Desc>(dnnl::prop_kind::forward_inference, alg, src, r.w_any, dst, r.strides,
                                               r.dil, r.pad_l, r.pad_r);
  auto pd = typename Op::primitive_desc(*d, r.attr, cpu_engine());
  if constexpr (std::is_same_v<Op, dnnl::convolution_forward>) {
    if (alg == dnnl::algorithm::convolution_winograd &&
        !choose_winograd_impl(pd, r.plain_weight_bytes, r.layer_output_bytes))
      throw dnnl::error(dnnl_unimplemented, "no Winograd implementation worth its memory");
  }
  p.op_desc = d;
  p.src_md = pd.src_desc();
  p.dst_md = pd.dst_desc();
  p.w_md = pd.weights_desc();
  p.pd = pd;
  p.prim = Op(pd);
  p.impl = p.pd.impl_info_str();
}

bool try_make(DnnlConvPlan& p, const PrimitiveRequest& r, const memory::desc& src, const memory::desc& dst,
              dnnl::algorithm alg) {
  try {
    if (r.transpose)
      make_op<dnnl::deconvolution_forward>(p, r, src, dst, alg);
    else
      make_op<dnnl::convolution_forward>(p, r, src, dst, alg);
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}

// The layouts and algorithm, best first.
bool make_primitive(DnnlConvPlan& p, const PrimitiveRequest& r, const ConvGeometry& g, const ConvNode& node,
                    const Shape& x) {
  const size_t rank = x.size();
  const Shape y = g.output_shape();
  // Source: keep what the graph holds when it is blocked, or for the first layer of a network
  // (few channels, where oneDNN reads plain input directly); otherwise let oneDNN choose.
  const bool small_c = g.in_channels / g.group < 8 && g.group <= 1;
  const memory::desc src_want = (node.src_blocked || small_c) ? p.x_md : f32_desc(x, tag::any);
  const memory::desc dst_any = f32_desc(y, tag::any);
  const dnnl::algorithm direct =
      node.transpose ? dnnl::algorithm::deconvolution_direct : dnnl::algorithm::convolution_direct;
  if (winograd_applies(g, node, rank) &&
      try_make(p, r, src_want, node.dst_blocked ? p.y_md : dst_any, dnnl::algorithm::convolution_winograd))
    return true;
  if (node.dst_blocked) return try_make(p, r, src_want, p.y_md, direct);
  // Plain destination (an edge read by another family, or a graph output). A pointwise conv
  // without post-ops on plain data is one GEMM (W [M, C] x X [C, HW]): take oneDNN's gemm
  // kernel, which writes plain directly. Anything else runs faster as a blocked jit kernel plus
  // reorders than as im2col + GEMM (and gemm applies post-ops in a slow second pass), so let
  // oneDNN choose the layouts.
  auto all_are = [](const std::vector<int64_t>& v, int64_t value) {
    return std::all_of(v.begin(), v.end(), [&](int64_t e) { return e == value; });
  };
  const bool pointwise =
      all_are(g.kernel, 1) && all_are(g.strides, 1) && all_are(g.pad_begin, 0) && all_are(g.pad_end, 0);
  if (pointwise && !node.src_blocked && !node.transpose && !node.relu && !node.has_sum &&
      try_make(p, r, p.x_md, p.y_md, direct) && p.impl.rfind("ref", 0) != 0)
    return true;
  if (try_make(p, r, src_want, dst_any, direct)) return true;
  // Last resort before the reference kernel: whatever oneDNN has for plain in and out.
  return try_make(p, r, p.x_md, p.y_md, direct);
}

}  // namespace

void build_dnnl_plan(DnnlConvPlan& p, const ConvGeometry& g, const ConvNode& node, const Shape& x, const Shape& w,
                     bool has_bias, double layer_output_bytes) {
  const PrimitiveRequest r = primitive_request(p, g, node, x, w, has_bias, layer_output_bytes);
  if (!make_primitive(p, r, g, node, x)) throw dnnl::error(dnnl_unimplemented, "no convolution primitive");
  if (p.src_md != p.x_md) p.src_reorder = make_reorder(p.x_md, p.src_md);
  if (p.dst_md != p.y_md) {
    p.dst_reorder = make_reorder(p.dst_md, p.y_md);
    if (node.has_sum) p.sum_reorder = make_reorder(p.y_md, p.dst_md);
  }
  if (const void* wdata = node.packable_weights(w)) {
    if (p.w_md == p.w_plain_md)
      p.packed_weights = memory(p.w_md, cpu_engine(), const_cast<void*>(wdata));
    else {
      p.packed_weights = memory(p.w_md, cpu_engine());
      reorder_memory(p.w_plain_md, wdata, p.w_md, p.packed_weights.get_data_handle());
    }
  }
}

void run_dnnl_plan(const DnnlConvPlan& p, const ConvNode& node, const void* x_data, void* y_data, const Tensor& w,
                   const Tensor* b, RunBuffers& buffers) {
  const float* wdata = w.data_as<float>();
  memory wmem;
  if (p.packed_weights && node.is_packed_constant(w))
    wmem = p.packed_weights;
  else if (p.w_md == p.w_plain_md)
    wmem = memory(p.w_md, cpu_engine(), const_cast<float*>(wdata));
  else {
    wmem = memory(p.w_md, cpu_engine(), buffers.get(kWeightsSlot, p.w_md.get_size()));
    reorder_memory(p.w_plain_md, wdata, p.w_md, wmem.get_data_handle());
  }
  void* src = const_cast<void*>(x_data);
  if (p.src_md != p.x_md) {
    void* tmp = buffers.get(kSrcSlot, p.src_md.get_size());
    p.src_reorder.run(src, tmp);
    src = tmp;
  }
  void* dst = y_data;
  bool dst_tmp = p.dst_md != p.y_md;
  if (dst_tmp) {
    dst = buffers.get(kDstSlot, p.dst_md.get_size());
    if (node.has_sum) p.sum_reorder.run(y_data, dst);
  }
  std::unordered_map<int, memory> args;
  args[DNNL_ARG_SRC] = memory(p.src_md, cpu_engine(), src);
  args[DNNL_ARG_WEIGHTS] = wmem;
  if (b) args[DNNL_ARG_BIAS] = memory(p.b_md, cpu_engine(), const_cast<void*>(b->data()));
  args[DNNL_ARG_DST] = memory(p.dst_md, cpu_engine(), dst);
  execute_with_scratchpad(p.prim, p.pd, args, buffers);
  if (dst_tmp) p.dst_reorder.run(dst, y_data);
}

}  // namespace pointrt::nn
