// Conv strategy "fallback": configurations oneDNN refuses (rank > 5, negative transpose padding,
// ...) run the reference kernels of conv_ref.cc, with the node's layouts, fused Add and ReLU.
#include <cmath>
#include <cstring>

#include "ops/onnx/nn/conv_plan.h"

namespace pointrt::nn {

void run_conv_fallback(const ConvGeometry& g, const ConvNode& node, const Tensor& x, const Tensor& w, const Tensor* b,
                       Tensor& y) {
  size_t rank = x.rank();
  Shape ys = g.output_shape();
  Tensor xp = x;
  if (node.src_blocked) {
    xp = Tensor::allocate(DType::kFloat32, x.shape());
    reorder_memory(f32_desc(x.shape(), blocked_tag(rank)), x.data(), f32_desc(x.shape(), plain_tag(rank)), xp.data());
  }
  Tensor yp = Tensor::allocate(DType::kFloat32, ys);
  const float* bias = b ? b->data_as<float>() : nullptr;
  if (node.transpose)
    conv_transpose_ref(g, xp.data_as<float>(), w.data_as<float>(), bias, yp.data_as<float>());
  else
    conv_ref(g, xp.data_as<float>(), w.data_as<float>(), bias, yp.data_as<float>());
  Tensor sum;
  if (node.has_sum) {
    sum = y;  // holds the Add operand in y's layout
    if (node.dst_blocked) {
      sum = Tensor::allocate(DType::kFloat32, ys);
      reorder_memory(f32_desc(ys, blocked_tag(rank)), y.data(), f32_desc(ys, plain_tag(rank)), sum.data());
    }
  }
  float* yd = yp.data_as<float>();
  int64_t n = yp.numel();
  for (int64_t i = 0; i < n; ++i) {
    float v = yd[i] + (node.has_sum ? sum.data_as<float>()[i] : 0.f);
    yd[i] = node.relu && v < 0 ? 0.f : v;
  }
  if (node.dst_blocked)
    reorder_memory(f32_desc(ys, plain_tag(rank)), yd, f32_desc(ys, blocked_tag(rank)), y.data());
  else
    std::memcpy(y.data(), yd, yp.nbytes());
}

void run_global_max_fallback(const ConvGeometry& g, const ConvNode& node, const Tensor& x, const Tensor& w,
                             const Tensor* b, float* out) {
  const int64_t rows = g.batch * g.out_channels, points = g.out_spatial[0];
  Tensor full = Tensor::allocate(DType::kFloat32, g.output_shape());
  run_conv_fallback(g, node, x, w, b, full);
  const float* f = full.data_as<float>();
  for (int64_t i = 0; i < rows; ++i) {
    float acc = f[i * points];
    for (int64_t k = 1; k < points; ++k) {
      float v = f[i * points + k];
      acc = (v > acc || std::isnan(v)) ? v : acc;
    }
    out[i] = acc;
  }
}

}  // namespace pointrt::nn
