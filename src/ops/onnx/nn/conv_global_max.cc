// Conv strategy "global max" (the nn pass fuses a pointwise Conv1d with the max over points, as
// PointNet's encoders end): y[n, m] = max over points of conv(x)[n, m, :] (after bias and ReLU),
// computed a chunk of points at a time so the full [M, points] output never exists.
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "ops/onnx/nn/conv_plan.h"

namespace pointrt::nn {

namespace {

using dnnl::memory;
using tag = memory::format_tag;

// Points per chunk: the chunk's output (M x chunk floats) stays in L2.
constexpr int64_t kMaxChunkBytes = 1 << 20;

void make_chunk(GlobalMaxPlan& p, GlobalMaxPlan::Chunk& ch, int64_t len, const ConvGeometry& g, const ConvNode& node,
                const Shape& w, bool has_bias, const dnnl::primitive_attr& attr) {
  const int64_t c = g.in_channels, m = g.out_channels, points = g.out_spatial[0];
  ch.length = len;
  Shape cs{1, c, len}, ds{1, m, len};
  ch.src_md = f32_desc(cs, blockable(3, c) ? blocked_tag(3) : plain_tag(3));
  ch.dst_md = f32_desc(ds, blockable(3, m) ? blocked_tag(3) : plain_tag(3));
  memory::desc w_any({m, c, 1}, memory::data_type::f32, tag::any);
  std::shared_ptr<dnnl::convolution_forward::desc> d;
  if (has_bias)
    d = std::make_shared<dnnl::convolution_forward::desc>(dnnl::prop_kind::forward_inference,
                                                          dnnl::algorithm::convolution_direct, ch.src_md, w_any, p.b_md,
                                                          ch.dst_md, memory::dims{1}, memory::dims{0}, memory::dims{0});
  else
    d = std::make_shared<dnnl::convolution_forward::desc>(dnnl::prop_kind::forward_inference,
                                                          dnnl::algorithm::convolution_direct, ch.src_md, w_any,
                                                          ch.dst_md, memory::dims{1}, memory::dims{0}, memory::dims{0});
  ch.op_desc = d;
  // X's chunk as a strided view of the whole tensor in the graph's layout (pointer offset
  // chosen per chunk at run time).
  memory::desc view;
  if (node.src_blocked) {
    view = f32_desc({1, c, len}, blocked_tag(3));
    auto& st = view.data.format_desc.blocking.strides;
    st[0] = c * points;
    st[1] = points * channel_block();
    st[2] = channel_block();
  } else {
    view = memory::desc({1, c, len}, memory::data_type::f32, memory::dims{c * points, points, 1});
  }
  ch.gather = make_reorder(view, ch.src_md);
  ch.pd = dnnl::convolution_forward::primitive_desc(*d, attr, cpu_engine());
  ch.prim = dnnl::convolution_forward(ch.pd);
  if (const void* wdata = node.packable_weights(w)) {
    ch.packed_weights = memory(ch.pd.weights_desc(), cpu_engine());
    reorder_memory(p.w_plain_md, wdata, ch.pd.weights_desc(), ch.packed_weights.get_data_handle());
  }
}

// acc[j] = max(acc[j], d[k * B + j]) over k. A local copy of acc keeps the compiler from
// assuming d and acc alias, so the inner loop is one vector max per k. (NaN handling follows
// the hardware max, as ONNX Runtime's ReduceMax does: unspecified.)
template <int B>
void running_max_block(const float* __restrict d, int64_t len, float* __restrict acc) {
  float a[B];
  for (int j = 0; j < B; ++j) a[j] = acc[j];
  for (int64_t k = 0; k < len; ++k) {
#pragma omp simd
    for (int j = 0; j < B; ++j) a[j] = d[k * B + j] > a[j] ? d[k * B + j] : a[j];
  }
  for (int j = 0; j < B; ++j) acc[j] = a[j];
}

// acc [M] = max(acc, the chunk's conv output dst [M, len] in its layout).
void running_max(const float* dst, int64_t m, int64_t len, float* acc) {
  const int64_t blk = channel_block();
  const bool blocked_dst = blockable(3, m);
  const int64_t groups = blocked_dst ? m / blk : m;
#pragma omp parallel for schedule(static) if (groups * len > 65536)
  for (int64_t gi = 0; gi < groups; ++gi) {
    if (blocked_dst) {
      if (blk == 16)
        running_max_block<16>(dst + gi * len * 16, len, acc + gi * 16);
      else
        running_max_block<8>(dst + gi * len * 8, len, acc + gi * 8);
    } else {
      const float* d = dst + gi * len;
      float a = acc[gi];
      for (int64_t k = 0; k < len; ++k) a = d[k] > a ? d[k] : a;
      acc[gi] = a;
    }
  }
}

}  // namespace

void build_global_max_plan(GlobalMaxPlan& p, const ConvGeometry& g, const ConvNode& node, const Shape& x,
                           const Shape& w, bool has_bias) {
  if (x.size() != 3 || g.group != 1) throw dnnl::error(dnnl_unimplemented, "global max needs a 1D conv");
  int64_t c = g.in_channels, m = g.out_channels, points = g.out_spatial[0];
  int64_t chunk =
      std::max<int64_t>(16, std::min<int64_t>(points, kMaxChunkBytes / (4 * std::max<int64_t>(m, 1)) / 16 * 16));
  p.w_plain_md = memory::desc({m, c, 1}, memory::data_type::f32, tag::abc);
  p.b_md = memory::desc({m}, memory::data_type::f32, tag::x);
  p.x_md = f32_desc(x, node.src_blocked ? blocked_tag(3) : plain_tag(3));
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops ops;
  if (node.relu) ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(ops);
  make_chunk(p, p.main_chunk, chunk, g, node, w, has_bias, attr);
  if (points % chunk) make_chunk(p, p.tail_chunk, points % chunk, g, node, w, has_bias, attr);
}

void run_global_max_plan(const GlobalMaxPlan& p, const ConvGeometry& g, const ConvNode& node, const Tensor& x,
                         const Tensor& w, const Tensor* b, float* out, RunBuffers& buffers) {
  const int64_t n_batch = g.batch, c = g.in_channels, m = g.out_channels, points = g.out_spatial[0];
  const int64_t blk = channel_block();
  for (int64_t n = 0; n < n_batch; ++n) {
    float* acc = out + n * m;
    for (int64_t i = 0; i < m; ++i) acc[i] = -INFINITY;
    for (int64_t p0 = 0; p0 < points; p0 += p.main_chunk.length) {
      const GlobalMaxPlan::Chunk& ch = points - p0 >= p.main_chunk.length ? p.main_chunk : p.tail_chunk;
      const float* base = x.data_as<float>() + n * c * points + p0 * (node.src_blocked ? blk : 1);
      void* src = buffers.get(kSrcSlot, ch.src_md.get_size());
      ch.gather.run(base, src);
      float* dst = static_cast<float*>(buffers.get(kDstSlot, ch.dst_md.get_size()));
      std::unordered_map<int, memory> args;
      args[DNNL_ARG_SRC] = memory(ch.src_md, cpu_engine(), src);
      memory wmem = ch.packed_weights;
      if (!wmem || !node.is_packed_constant(w)) {
        wmem = memory(ch.pd.weights_desc(), cpu_engine(), buffers.get(kWeightsSlot, ch.pd.weights_desc().get_size()));
        reorder_memory(p.w_plain_md, w.data(), ch.pd.weights_desc(), wmem.get_data_handle());
      }
      args[DNNL_ARG_WEIGHTS] = wmem;
      if (b) args[DNNL_ARG_BIAS] = memory(p.b_md, cpu_engine(), const_cast<void*>(b->data()));
      args[DNNL_ARG_DST] = memory(ch.dst_md, cpu_engine(), dst);
      execute_with_scratchpad(ch.prim, ch.pd, args, buffers);
      running_max(dst, m, ch.length, acc);
    }
  }
}

}  // namespace pointrt::nn
