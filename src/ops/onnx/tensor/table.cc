// Operator table rows of the ONNX tensor family (opsets 1..21). Rows are split where the
// semantics change (attributes that became inputs, new attributes or modes); each row's types
// are those of its main input. Copy-type ops move bytes and serve every dtype (kCopyTypes).
#include "ops/families.h"
#include "ops/onnx/tensor/eye_like.h"
#include "ops/onnx/tensor/kernels.h"
#include "ops/onnx/tensor/legacy.h"
#include "ops/onnx/tensor/tensor_utils.h"

namespace pointrt {
Family register_onnx_tensor() {
  Family family{"onnx/tensor"};
  OpTable& t = family.rows;
  using namespace tensor;
  const auto& C = kCopyTypes;
  auto row = [&](const char* op, int since, int until, std::vector<DType> types, KernelFactory f, const char* note,
                 int typed_input = 0) {
    t.add({"", op, since, until, std::move(types), std::move(f), note, typed_input});
  };

  row("Concat", 1, 3, C, make_concat, "axis attribute >= 0, default 1");
  row("Concat", 4, 10, C, make_concat, "axis attribute >= 0");
  row("Concat", 11, 21, C, make_concat, "negative axis allowed");
  row("ConstantOfShape", 9, 21, {DType::kInt64}, make_constant_of_shape, "value attribute, default float 0");
  row("Constant", 1, 11, {}, make_constant, "value tensor attribute (importer folds it)", -1);
  row("Constant", 12, 21, {}, make_constant, "value / value_float(s) / value_int(s) attributes (importer folds it)",
      -1);
  row("Expand", 8, 21, C, make_expand, "bidirectional broadcast");
  row("Flatten", 1, 10, C, make_flatten, "zero-copy");
  row("Flatten", 11, 21, kMoveTypes, make_flatten, "zero-copy, negative axis");
  row("Gather", 1, 10, C, make_gather, "");
  row("Gather", 11, 21, C, make_gather, "negative indices wrap");
  add_gather_elements(family);  // with its internal Expand-folded form and that pass
  row("GatherND", 11, 11, C, make_gather_nd, "no batch_dims");
  row("GatherND", 12, 21, C, make_gather_nd, "batch_dims");
  row("Reshape", 1, 4, C, make_reshape_v1, "shape attribute, zero-copy");
  row(
      "Reshape", 5, 13, C, [](const KernelInit& i) { return make_reshape(i, false); }, "zero-copy, 0 copies the dim");
  row(
      "Reshape", 14, 21, kMoveTypes, [](const KernelInit& i) { return make_reshape(i, true); }, "zero-copy, allowzero");
  row(
      "Shape", 1, 14, C, [](const KernelInit& i) { return make_shape(i, false); }, "int64");
  row(
      "Shape", 15, 21, kMoveTypes, [](const KernelInit& i) { return make_shape(i, true); }, "int64, start/end");
  row("Size", 1, 21, kMoveTypes, make_size, "int64 scalar");
  row(
      "Slice", 1, 9, C, [](const KernelInit& i) { return make_slice(i, false); }, "starts/ends/axes attributes");
  row(
      "Slice", 10, 21, C, [](const KernelInit& i) { return make_slice(i, true); }, "inputs, negative steps");
  row("Split", 1, 1, C, make_split_v1, "split input or attribute");
  row(
      "Split", 2, 12, C, [](const KernelInit& i) { return make_split(i, false, false); }, "split attribute");
  row(
      "Split", 13, 17, C, [](const KernelInit& i) { return make_split(i, true, false); }, "split input");
  row(
      "Split", 18, 21, C, [](const KernelInit& i) { return make_split(i, true, true); },
      "num_outputs, uneven last chunk");
  row(
      "Squeeze", 1, 12, C, [](const KernelInit& i) { return make_squeeze(i, false); }, "axes attribute, zero-copy");
  row(
      "Squeeze", 13, 21, kMoveTypes, [](const KernelInit& i) { return make_squeeze(i, true); },
      "axes input, zero-copy");
  row(
      "Unsqueeze", 1, 12, C, [](const KernelInit& i) { return make_unsqueeze(i, false); }, "axes attribute, zero-copy");
  row(
      "Unsqueeze", 13, 21, kMoveTypes, [](const KernelInit& i) { return make_unsqueeze(i, true); },
      "axes input, zero-copy");
  row("Tile", 1, 5, C, make_tile_v1, "tiles and axis scalar inputs");
  row("Tile", 6, 21, C, make_tile, "");
  row("Transpose", 1, 21, C, make_transpose, "tiled 2D fast path");
  row("Pad", 1, 1, C, make_pad_v1, "paddings/value attributes");
  row(
      "Pad", 2, 10, C, [](const KernelInit& i) { return make_pad(i, false, false, false); }, "pads/value attributes");
  row(
      "Pad", 11, 17, C, [](const KernelInit& i) { return make_pad(i, true, false, false); },
      "pads/constant_value inputs");
  row(
      "Pad", 18, 18, C, [](const KernelInit& i) { return make_pad(i, true, true, false); }, "axes input");
  row(
      "Pad", 19, 21, C, [](const KernelInit& i) { return make_pad(i, true, true, true); }, "wrap mode");
  row("Range", 11, 21, {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32, DType::kInt64}, make_range, "");
  row("NonZero", 9, 21, C, make_nonzero, "int64 [rank, nnz]");
  row("OneHot", 9, 10, C, make_onehot, "types of the values input", 2);
  row("OneHot", 11, 21, C, make_onehot, "negative indices wrap; types of the values input", 2);
  row(
      "Scatter", 9, 10, C, [](const KernelInit& i) { return make_scatter_elements(i, 0); },
      "deprecated ScatterElements");
  row(
      "ScatterElements", 11, 15, C, [](const KernelInit& i) { return make_scatter_elements(i, 0); }, "");
  row(
      "ScatterElements", 16, 17, C, [](const KernelInit& i) { return make_scatter_elements(i, 1); },
      "reduction add/mul");
  row(
      "ScatterElements", 18, 21, C, [](const KernelInit& i) { return make_scatter_elements(i, 2); },
      "reduction add/mul/max/min");
  row(
      "ScatterND", 11, 15, C, [](const KernelInit& i) { return make_scatter_nd(i, 0); }, "");
  row(
      "ScatterND", 16, 17, C, [](const KernelInit& i) { return make_scatter_nd(i, 1); }, "reduction add/mul");
  row(
      "ScatterND", 18, 21, C, [](const KernelInit& i) { return make_scatter_nd(i, 2); }, "reduction add/mul/max/min");
  row("Trilu", 14, 21, C, make_trilu, "upper/lower, optional k input");
  row("EyeLike", 9, 21, eye_like_types(), make_eye_like, "dtype and k attributes; X's values not read");
  auto depth_to_space = [](const KernelInit& i) { return make_depth_space(i, true); };
  auto space_to_depth = [](const KernelInit& i) { return make_depth_space(i, false); };
  row("DepthToSpace", 1, 10, C, depth_to_space, "DCR");
  row("DepthToSpace", 11, 21, C, depth_to_space, "mode DCR|CRD");
  row("SpaceToDepth", 1, 21, C, space_to_depth, "");
  row("ReverseSequence", 10, 21, C, make_reverse_sequence, "batch_axis/time_axis 0 or 1");
  row("CenterCropPad", 18, 21, C, make_center_crop_pad, "axes attribute; zero padding");
  row("Compress", 9, 10, C, make_compress, "axis optional (flattens)");
  row("Compress", 11, 21, C, make_compress, "negative axis");
  row("Unique", 11, 21, C, make_unique, "sorted, axis; outputs indices, inverse_indices, counts");
  return family;
}
}  // namespace pointrt
