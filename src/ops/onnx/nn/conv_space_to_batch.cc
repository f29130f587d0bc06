// Conv strategy "space-to-batch": a 2D dilated conv that keeps the spatial size, with padding a
// multiple of the dilation and sizes divisible by it, is dh*dw undilated convs on sub-sampled
// images (TensorFlow's SpaceToBatch trick); those can use Winograd, which dilated kernels cannot.
#include <string>

#include "ops/onnx/nn/conv_plan.h"
#include "ops/onnx/nn/nn_kernels.h"

namespace pointrt::nn {

namespace {

// Space-to-batch convs call Winograd on chunks of at least this many 4x4 output tiles: the
// scratchpad scales with the chunk, and below ~160 tiles oneDNN's F(4x4,3x3) slows down
// (layer3 of the PSPNet benchmark: 12.7 ms whole, 13.5 ms at 160 tiles, 22 ms at 80).
constexpr int64_t kS2bMinTiles = 160;

bool is_space_to_batch_case(const ConvGeometry& g, const ConvNode& node, const Shape& x) {
  if (node.transpose || x.size() != 4 || g.group != 1 || !winograd_enabled()) return false;
  const int64_t dh = g.dilations[0], dw = g.dilations[1];
  if (dh == 1 && dw == 1) return false;
  if (g.strides[0] != 1 || g.strides[1] != 1 || g.out_spatial != g.in_spatial) return false;
  if (g.in_spatial[0] % dh || g.in_spatial[1] % dw) return false;
  if (g.kernel[0] != 3 || g.kernel[1] != 3 || g.in_channels < 64 || g.out_channels < 64)
    return false;  // Winograd's case
  for (int i = 0; i < 2; ++i)
    if (g.pad_begin[i] % g.dilations[i] || g.pad_end[i] % g.dilations[i]) return false;
  if ((node.src_blocked && g.in_channels % channel_block()) || (node.dst_blocked && g.out_channels % channel_block()))
    return false;
  return true;
}

// Copies between a [N, C, H, W] tensor and sub-images [first, first + count) of its
// [N*dh*dw, C, H/dh, W/dw] space-to-batch form (`small` holds just those sub-images). Both
// layouts this kernel uses are [N, C/U, H, W, U] with U = 1 (plain) or the channel block, so
// one loop moving U contiguous floats serves both.
void space_to_batch(float* big, float* small, int64_t first, int64_t count, int64_t cu, int64_t h, int64_t w, int64_t u,
                    int64_t dh, int64_t dw, bool to_small) {
  int64_t hs = h / dh, ws = w / dw;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t k = 0; k < count; ++k)
    for (int64_t c = 0; c < cu; ++c) {
      int64_t nb = first + k;
      int64_t b0 = nb / (dh * dw), a = (nb / dw) % dh, bb = nb % dw;
      for (int64_t i = 0; i < hs; ++i) {
        const int64_t big_row = (((b0 * cu + c) * h) + i * dh + a) * w;
        const int64_t small_row = ((k * cu + c) * hs + i) * ws;
        for (int64_t j = 0; j < ws; ++j) {
          float* bp = big + (big_row + j * dw + bb) * u;
          float* sp = small + (small_row + j) * u;
          if (to_small)
            for (int64_t e = 0; e < u; ++e) sp[e] = bp[e];
          else
            for (int64_t e = 0; e < u; ++e) bp[e] = sp[e];
        }
      }
    }
}

}  // namespace

bool build_space_to_batch_plan(SpaceToBatchPlan& p, const ConvGeometry& g, const ConvNode& node, const Shape& x,
                               const Shape& w, bool has_bias) {
  if (!is_space_to_batch_case(g, node, x)) return false;
  const int64_t dh = g.dilations[0], dw = g.dilations[1];
  // Sub-images per call: enough 4x4 output tiles to keep the Winograd GEMMs efficient.
  int64_t total = g.batch * dh * dw;
  int64_t tiles = ((g.in_spatial[0] / dh + 3) / 4) * ((g.in_spatial[1] / dw + 3) / 4);
  int64_t chunk = total;
  for (int64_t d = 1; d <= total; ++d)
    if (total % d == 0 && d * tiles >= kS2bMinTiles) {
      chunk = d;
      break;
    }
  ConvGeometry sub_geo = g;
  sub_geo.batch = chunk;
  sub_geo.in_spatial = {g.in_spatial[0] / dh, g.in_spatial[1] / dw};
  sub_geo.out_spatial = sub_geo.in_spatial;
  sub_geo.dilations = {1, 1};
  sub_geo.pad_begin = {g.pad_begin[0] / dh, g.pad_begin[1] / dw};
  sub_geo.pad_end = {g.pad_end[0] / dh, g.pad_end[1] / dw};
  Shape sx{sub_geo.batch, g.in_channels, sub_geo.in_spatial[0], sub_geo.in_spatial[1]};
  auto sub = std::make_shared<DnnlConvPlan>();
  // Winograd's memory is judged against the whole layer's output, not a chunk's.
  build_dnnl_plan(*sub, sub_geo, node, sx, w, has_bias,
                  sizeof(float) * static_cast<double>(shape_numel(g.output_shape())));
  if (sub->impl.find("wino") == std::string::npos) return false;  // no gain without Winograd
  p.sub = sub;
  p.dh = dh;
  p.dw = dw;
  p.chunk = chunk;
  return true;
}

// The sub-images go through the Winograd primitive a chunk at a time (p.chunk of them): its
// scratchpad and the gathered copies then scale with the chunk, not the whole image.
void run_space_to_batch_plan(const SpaceToBatchPlan& p, const ConvGeometry& g, const ConvNode& node, const Tensor& x,
                             const Tensor& w, const Tensor* b, Tensor& y, RunBuffers& buffers) {
  int64_t n = g.batch, h = g.in_spatial[0], wd = g.in_spatial[1];
  int64_t ux = node.src_blocked ? channel_block() : 1, uy = node.dst_blocked ? channel_block() : 1;
  int64_t total = n * p.dh * p.dw, chunk = p.chunk;
  size_t sub_pixels = static_cast<size_t>(h / p.dh) * (wd / p.dw);
  float* xs = static_cast<float*>(buffers.get(kS2bSrcSlot, chunk * g.in_channels * sub_pixels * sizeof(float)));
  float* ys = static_cast<float*>(buffers.get(kS2bDstSlot, chunk * g.out_channels * sub_pixels * sizeof(float)));
  float* xd = const_cast<float*>(x.data_as<float>());
  float* yd = y.data_as<float>();
  for (int64_t first = 0; first < total; first += chunk) {
    space_to_batch(xd, xs, first, chunk, g.in_channels / ux, h, wd, ux, p.dh, p.dw, true);
    if (node.has_sum) space_to_batch(yd, ys, first, chunk, g.out_channels / uy, h, wd, uy, p.dh, p.dw, true);
    run_dnnl_plan(*p.sub, node, xs, ys, w, b, buffers);
    space_to_batch(yd, ys, first, chunk, g.out_channels / uy, h, wd, uy, p.dh, p.dw, false);
  }
}

}  // namespace pointrt::nn
