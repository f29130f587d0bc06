// Internal to the Conv kernel (conv.cc): the plan types of its strategies, one file each.
//
//   conv_dnnl.cc            one oneDNN (de)convolution primitive with the reorders around it;
//   conv_winograd.cc        when that primitive uses oneDNN's Winograd algorithm (policy);
//   conv_space_to_batch.cc  a dilated "same" 2D conv as undilated Winograd convs on sub-images;
//   conv_global_max.cc      pointwise Conv1d + max over points, a chunk of points at a time;
//   conv_fallback.cc        the reference kernel of conv_ref.cc where oneDNN refuses.
//
// ConvKernel (conv.cc) parses the node, builds one ConvPlan per input shape (choosing the strategy)
// and delegates each run to the plan's strategy.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ops/kernel.h"
#include "ops/onnx/nn/conv.h"
#include "ops/onnx/nn/dnnl_common.h"

namespace pointrt::nn {

/// What the strategies need to know about the node; fixed when the kernel is made.
struct ConvNode {
  std::string where;
  bool transpose = false;
  bool relu = false, has_sum = false;             // fused ReLU / residual Add (input 3)
  bool src_blocked = false, dst_blocked = false;  // X / Y channel-blocked (dnnl_common.h)
  Tensor weights;                                 // constant W, until its plain copy is released
  const void* weights_data = nullptr;             // identity of the constant W (kept after its release)
  bool weights_released = false;                  // only packed copies of W remain

  /// The constant W's data when it has shape `w` (a plan packs it once), else null.
  const void* packable_weights(const Shape& w) const {
    return weights.defined() && weights.shape() == w ? weights.data() : nullptr;
  }
  /// True when `w` (the run's W) is the constant the plans packed: the constant itself, or the
  /// data-less placeholder the session leaves once the plain copy is released.
  bool is_packed_constant(const Tensor& w) const {
    return weights_data && (w.data() == weights_data || (weights_released && w.data() == nullptr));
  }
};

/// One oneDNN convolution (or deconvolution) primitive.
struct DnnlConvPlan {
  std::shared_ptr<void> op_desc;  // kept alive for as long as its primitive_desc
  dnnl::primitive_desc pd;
  dnnl::primitive prim;
  dnnl::memory::desc x_md, y_md;            // layouts of the tensors the graph holds
  dnnl::memory::desc src_md, dst_md, w_md;  // layouts the primitive wants
  dnnl::memory::desc w_plain_md, b_md;
  dnnl::memory packed_weights;  // weights reordered once (constant W only)
  std::string impl;
  PreparedReorder src_reorder, sum_reorder, dst_reorder;  // only where the layouts differ

  bool owns_packed_copy() const { return packed_weights && w_md != w_plain_md; }
};

/// Dilated "same" conv run as space-to-batch: sub-images of every dh-th row / dw-th column are
/// independent undilated convs (Winograd applies), computed by `sub` on [chunk, C, H/dh, W/dw].
struct SpaceToBatchPlan {
  std::shared_ptr<DnnlConvPlan> sub;
  int64_t dh = 1, dw = 1, chunk = 1;  // chunk: sub-images per primitive call
};

/// Global-max mode (pointwise Conv1d + max over points): one primitive per chunk length.
struct GlobalMaxPlan {
  struct Chunk {
    int64_t length = 0;
    std::shared_ptr<void> op_desc;
    dnnl::convolution_forward::primitive_desc pd;
    dnnl::primitive prim;
    dnnl::memory::desc src_md, dst_md;  // dense chunk layouts
    dnnl::memory packed_weights;
    PreparedReorder gather;  // strided view of X's chunk -> dense src
  };
  dnnl::memory::desc w_plain_md, b_md, x_md;
  Chunk main_chunk, tail_chunk;

  bool owns_packed_copy() const {
    return main_chunk.packed_weights && (tail_chunk.length == 0 || tail_chunk.packed_weights);
  }
};

struct ConvPlan {
  enum class Strategy { kEmpty, kFallback, kDnnl, kSpaceToBatch, kGlobalMax };
  ConvGeometry geo;
  Strategy strategy = Strategy::kEmpty;  // kEmpty: zero-sized output, nothing to compute
  std::string impl;                      // for tests and the profiler
  DnnlConvPlan dnnl;                     // kDnnl
  SpaceToBatchPlan space_to_batch;       // kSpaceToBatch
  GlobalMaxPlan global_max;              // kGlobalMax
};

// ---- conv_dnnl.cc
/// Make the primitive for geometry `g` on X shape `x` (throws dnnl::error when oneDNN has none).
/// `layer_output_bytes` judges Winograd's memory (0: this primitive's output).
void build_dnnl_plan(DnnlConvPlan& p, const ConvGeometry& g, const ConvNode& node, const Shape& x, const Shape& w,
                     bool has_bias, double layer_output_bytes = 0);
/// Run on X data `x_data` (layout x_md) into `y_data` (layout y_md, holding the Add operand first
/// when a sum is fused).
void run_dnnl_plan(const DnnlConvPlan& p, const ConvNode& node, const void* x_data, void* y_data, const Tensor& w,
                   const Tensor* b, RunBuffers& buffers);

// ---- conv_winograd.cc
/// A 3x3 stride-1 undilated 2D conv with enough channels, where Winograd is enabled.
bool winograd_applies(const ConvGeometry& g, const ConvNode& node, size_t rank);
/// Advance `pd` to the first Winograd implementation worth its memory; false when none is.
bool choose_winograd_impl(dnnl::convolution_forward::primitive_desc& pd, double plain_weight_bytes,
                          double layer_output_bytes);

// ---- conv_space_to_batch.cc
/// False when the conv is not a space-to-batch case or its sub-convs would not use Winograd.
bool build_space_to_batch_plan(SpaceToBatchPlan& p, const ConvGeometry& g, const ConvNode& node, const Shape& x,
                               const Shape& w, bool has_bias);
void run_space_to_batch_plan(const SpaceToBatchPlan& p, const ConvGeometry& g, const ConvNode& node, const Tensor& x,
                             const Tensor& w, const Tensor* b, Tensor& y, RunBuffers& buffers);

// ---- conv_global_max.cc
void build_global_max_plan(GlobalMaxPlan& p, const ConvGeometry& g, const ConvNode& node, const Shape& x,
                           const Shape& w, bool has_bias);
/// out [N, M] = max over points of the conv (after bias and ReLU).
void run_global_max_plan(const GlobalMaxPlan& p, const ConvGeometry& g, const ConvNode& node, const Tensor& x,
                         const Tensor& w, const Tensor* b, float* out, RunBuffers& buffers);

// ---- conv_fallback.cc
/// The reference kernel, with the node's layouts, fused Add and ReLU; y holds the Add operand
/// first when a sum is fused.
void run_conv_fallback(const ConvGeometry& g, const ConvNode& node, const Tensor& x, const Tensor& w, const Tensor* b,
                       Tensor& y);
/// Global-max mode on the reference kernel: out [N, M] = max over the points (NaN wins).
void run_global_max_fallback(const ConvGeometry& g, const ConvNode& node, const Tensor& x, const Tensor& w,
                             const Tensor* b, float* out);

}  // namespace pointrt::nn
