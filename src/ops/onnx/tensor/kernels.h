// Kernel factories of the ONNX tensor/shape family; table.cc binds them to opset ranges.
// Flags select the opset-dependent behaviour (attributes that became inputs, new modes).
#pragma once
#include "ops/kernel.h"

namespace pointrt {
struct Family;
}

namespace pointrt::tensor {

std::unique_ptr<OpKernel> make_concat(const KernelInit& init);
std::unique_ptr<OpKernel> make_split(const KernelInit& init, bool split_is_input, bool has_num_outputs);
std::unique_ptr<OpKernel> make_transpose(const KernelInit& init);
std::unique_ptr<OpKernel> make_slice(const KernelInit& init, bool params_are_inputs);
std::unique_ptr<OpKernel> make_pad(const KernelInit& init, bool params_are_inputs, bool has_axes, bool allow_wrap);
std::unique_ptr<OpKernel> make_gather(const KernelInit& init);
std::unique_ptr<OpKernel> make_gather_elements(const KernelInit& init);
std::unique_ptr<OpKernel> make_gather_nd(const KernelInit& init);
/// Internal: GatherElements(data, Expand(i, shape)) as one node, inputs (data, i, shape).
std::unique_ptr<OpKernel> make_gather_elements_expanded(const KernelInit& init);
/// The tensor pass (gather_expand_pass.cc): folds such Expands into their GatherElements.
bool fold_expand_into_gather_elements(Graph& g);
/// Adds GatherElements' row, the GatherElementsExpanded row and that pass to the tensor family.
void add_gather_elements(Family& family);
std::unique_ptr<OpKernel> make_expand(const KernelInit& init);
std::unique_ptr<OpKernel> make_tile(const KernelInit& init);
std::unique_ptr<OpKernel> make_shape(const KernelInit& init, bool has_start_end);
std::unique_ptr<OpKernel> make_size(const KernelInit& init);
std::unique_ptr<OpKernel> make_reshape(const KernelInit& init, bool has_allowzero);
std::unique_ptr<OpKernel> make_flatten(const KernelInit& init);
std::unique_ptr<OpKernel> make_squeeze(const KernelInit& init, bool axes_is_input);
std::unique_ptr<OpKernel> make_unsqueeze(const KernelInit& init, bool axes_is_input);
std::unique_ptr<OpKernel> make_constant(const KernelInit& init);
std::unique_ptr<OpKernel> make_constant_of_shape(const KernelInit& init);
std::unique_ptr<OpKernel> make_range(const KernelInit& init);
std::unique_ptr<OpKernel> make_nonzero(const KernelInit& init);
std::unique_ptr<OpKernel> make_onehot(const KernelInit& init);
/// `max_reduction`: 0 = no 'reduction' attribute, 1 = none/add/mul (16), 2 = also max/min (18).
std::unique_ptr<OpKernel> make_scatter_elements(const KernelInit& init, int reductions);
std::unique_ptr<OpKernel> make_scatter_nd(const KernelInit& init, int reductions);
// reorder_kernels.cc
std::unique_ptr<OpKernel> make_trilu(const KernelInit& init);
std::unique_ptr<OpKernel> make_eye_like(const KernelInit& init);
/// DepthToSpace (`to_space`) or SpaceToDepth.
std::unique_ptr<OpKernel> make_depth_space(const KernelInit& init, bool to_space);
std::unique_ptr<OpKernel> make_reverse_sequence(const KernelInit& init);
std::unique_ptr<OpKernel> make_center_crop_pad(const KernelInit& init);
std::unique_ptr<OpKernel> make_compress(const KernelInit& init);
std::unique_ptr<OpKernel> make_unique(const KernelInit& init);

}  // namespace pointrt::tensor
