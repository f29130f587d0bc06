// Conv strategy "Winograd": which convolutions ask oneDNN for its Winograd algorithm (the plan is
// a DnnlConvPlan, conv_dnnl.cc) and which of its implementations are worth their memory.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "ops/onnx/nn/conv_plan.h"
#include "ops/onnx/nn/nn_kernels.h"

namespace pointrt::nn {

namespace {
// POINTRT_WINOGRAD: "0" never, "1" wherever oneDNN has it, unset: where it is worth its memory.
int winograd_mode() {
  static const int mode = [] {
    const char* e = std::getenv("POINTRT_WINOGRAD");
    if (e && std::string(e) == "0") return 0;
    if (e && std::string(e) == "1") return 1;
    return 2;
  }();
  return mode;
}
}  // namespace

bool winograd_enabled() { return winograd_mode() != 0; }

bool winograd_worth_its_memory(double extra_weight_bytes, double layer_output_bytes) {
  if (winograd_mode() == 1) return true;
  // Winograd keeps the weights transformed for the session's life: F(4x4,3x3) in 6x6 tiles, 4x
  // the plain 3x3 weights; F(2x2,3x3) in 4x4 tiles, 1.8x. (Its scratchpad is a temporary in the
  // run's arena.) The speed-up grows with the image, so the extra weights may take up to twice
  // the layer's output, or 8 MiB whatever the output: early, large-image layers and
  // F(2x2,3x3) on small maps (ResNet-18's layer4: 7 MB) yes; 512 channels at 60x80 with
  // F(4x4,3x3) (the PSPNet benchmark's layer4: 27 MB extra for a 9.4 MB output) no.
  constexpr double kPerOutputByte = 2.0, kAlwaysBytes = 8.0 * 1048576;
  return extra_weight_bytes <= std::max(kPerOutputByte * layer_output_bytes, kAlwaysBytes);
}

bool winograd_applies(const ConvGeometry& g, const ConvNode& node, size_t rank) {
  return !node.transpose && rank == 4 && g.group <= 1 && g.kernel[0] == 3 && g.kernel[1] == 3 && g.strides[0] == 1 &&
         g.strides[1] == 1 && g.dilations[0] == 1 && g.dilations[1] == 1 && g.in_channels >= 64 &&
         g.out_channels >= 64 && winograd_enabled();
}

bool choose_winograd_impl(dnnl::convolution_forward::primitive_desc& pd, double plain_weight_bytes,
                          double layer_output_bytes) {
  // The first implementation whose memory is worth it (oneDNN lists F(4x4,3x3) before
  // F(2x2,3x3), which keeps smaller weights and scratchpad).
  while (!winograd_worth_its_memory(pd.weights_desc().get_size() - plain_weight_bytes, layer_output_bytes))
    if (!pd.next_impl()) return false;
  return true;
}

}  // namespace pointrt::nn
