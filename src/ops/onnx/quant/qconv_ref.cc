// ConvInteger / QLinearConv reference: direct int32 loops and the float requantization epilogue.
#include "ops/onnx/quant/qconv.h"

#include <algorithm>
#include <cmath>

#include "ops/onnx/quant/quantize.h"

namespace pointrt::quant {

namespace {
// Three spatial dimensions (leading ones of size 1) so that one loop nest serves 1D to 3D.
struct Window3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, p[3] = {0, 0, 0};
};
Window3 window3(const nn::ConvGeometry& g) {
  Window3 w;
  const size_t n = g.in_spatial.size(), off = 3 - n;
  for (size_t i = 0; i < n; ++i) {
    w.in[off + i] = g.in_spatial[i];
    w.out[off + i] = g.out_spatial[i];
    w.k[off + i] = g.kernel[i];
    w.s[off + i] = g.strides[i];
    w.d[off + i] = g.dilations[i];
    w.p[off + i] = g.pad_begin[i];
  }
  return w;
}
}  // namespace

void conv_integer_ref(const nn::ConvGeometry& g, const Tensor& x, int32_t x_zp, const Tensor& w,
                      const std::vector<int32_t>& w_zp, int32_t* acc) {
  const Window3 q = window3(g);
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  const int64_t in_size = q.in[0] * q.in[1] * q.in[2], out_size = q.out[0] * q.out[1] * q.out[2];
  const int64_t k_size = q.k[0] * q.k[1] * q.k[2];
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t m = 0; m < g.out_channels; ++m) {
      const int64_t grp = m / mg;
      const int32_t wz = w_zp.size() == 1 ? w_zp[0] : w_zp[m];
      for (int64_t o = 0; o < out_size; ++o) {
        const int64_t o0 = o / (q.out[1] * q.out[2]), o1 = (o / q.out[2]) % q.out[1], o2 = o % q.out[2];
        int64_t sum = 0;
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t k = 0; k < k_size; ++k) {
            const int64_t k0 = k / (q.k[1] * q.k[2]), k1 = (k / q.k[2]) % q.k[1], k2 = k % q.k[2];
            const int64_t i0 = o0 * q.s[0] - q.p[0] + k0 * q.d[0], i1 = o1 * q.s[1] - q.p[1] + k1 * q.d[1],
                          i2 = o2 * q.s[2] - q.p[2] + k2 * q.d[2];
            if (i0 < 0 || i0 >= q.in[0] || i1 < 0 || i1 >= q.in[1] || i2 < 0 || i2 >= q.in[2]) continue;
            const int64_t xi = ((n * g.in_channels + grp * cg + c) * in_size) + (i0 * q.in[1] + i1) * q.in[2] + i2;
            const int64_t wi = (m * cg + c) * k_size + k;
            sum += (load_as_int(x, xi) - x_zp) * (load_as_int(w, wi) - wz);
          }
        acc[(n * g.out_channels + m) * out_size + o] = static_cast<int32_t>(sum);
      }
    }
}

void requantize_ref(const Requantize& r, const int32_t* acc, const int32_t* bias, int64_t batch, int64_t channels,
                    int64_t spatial, const Tensor* s, Tensor& y) {
  int64_t lo = 0, hi = 0;
  if (!r.float_output && r.out != DType::kInt32) quantized_range(r.out, lo, hi);
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t m = 0; m < channels; ++m)
      for (int64_t i = 0; i < spatial; ++i) {
        const int64_t e = (n * channels + m) * spatial + i;
        const int64_t a = static_cast<int64_t>(acc[e]) + (bias ? bias[m] : 0);
        if (r.out == DType::kInt32) {
          y.data_as<int32_t>()[e] = static_cast<int32_t>(a);
          continue;
        }
        float v = static_cast<float>(a) * r.channel_multiplier(m);
        if (r.mid) v = std::min(std::max(std::nearbyint(v), r.mid_lo), r.mid_hi) * r.mid_to_y;
        if (r.has_sum)
          v += r.float_output ? s->data_as<float>()[e]
                              : r.sum_scale * static_cast<float>(load_as_int(*s, e) - r.sum_zero_point);
        if (r.relu) v = std::max(v, 0.f);
        if (r.float_output)
          y.data_as<float>()[e] = v;
        else if (r.out == DType::kUInt8)
          y.data_as<uint8_t>()[e] = static_cast<uint8_t>(saturate_round(v, r.zero_point, lo, hi));
        else
          y.data_as<int8_t>()[e] = static_cast<int8_t>(saturate_round(v, r.zero_point, lo, hi));
      }
}

}  // namespace pointrt::quant
