"""The sparse-convolution operators (Voxelize, SparseConv, ScatterDense) declared once each
(:class:`pointrt.torch._library.OpDecl`): torch.library custom ops on torch >= 2.4 with fake
kernels for torch.export, whose data-dependent sizes (the voxel count, a regular convolution's
output sites) are unbacked symbols; the same declarations write the ONNX nodes for the
TorchScript exporter on every torch (``write_node``) and for the dynamo exporter.

SparseConv's kernel builds the site pairing from the indices it gets, so it needs no state from
earlier calls. An inverse convolution needs its source convolution's input sites and geometry:
they are hidden inputs (``source_indices``, ``source_stride``, ...) that the PyTorch kernel uses
and the ONNX node leaves out; the runtime finds the source by the ``rulebook`` key.
"""
from __future__ import annotations

from typing import List, Optional

import torch
from torch import Tensor

from . import _library
from . import _sparse_compute as sc
from ._library import Attr, OpDecl

__all__ = ["VOXELIZE", "SPARSE_CONV", "SCATTER_DENSE", "DECLS"]


def _voxelize_kernel(points, voxel_size, point_cloud_range, max_points_per_voxel, max_voxels):
    return sc.voxelize(points, list(voxel_size), list(point_cloud_range), int(max_points_per_voxel), int(max_voxels))


def _voxelize_fake(points, voxel_size, point_cloud_range, max_points_per_voxel, max_voxels):
    v = _library.dynamic_size(int(max_voxels))
    return (points.new_empty((v, points.shape[1]), dtype=torch.float32), points.new_empty((v, 4), dtype=torch.int32),
            points.new_empty((v,), dtype=torch.int32))


def _rulebook(indices: Tensor, source_indices: Optional[Tensor], kernel: List[int], stride: List[int],
              padding: List[int], dilation: List[int], output_padding: List[int], in_shape: List[int],
              out_shape: List[int], subm: int, transposed: int, inverse: int, source_geometry) -> sc.Rulebook:
    if inverse:
        if source_indices is None:
            raise ValueError("pointrt::SparseConv: an inverse convolution needs its source convolution's input sites")
        src_stride, src_padding, src_dilation = source_geometry
        # the source convolution maps out_shape (its input) to in_shape (its output)
        return sc.build_regular_rulebook(source_indices, out_shape, kernel, src_stride, src_padding, src_dilation,
                                         False, [0, 0, 0], in_shape)
    sc.check_sparse_indices(indices, in_shape, "pointrt::SparseConv")
    if subm:
        return sc.build_subm_rulebook(indices, in_shape, kernel, dilation)
    return sc.build_regular_rulebook(indices, in_shape, kernel, stride, padding, dilation, bool(transposed),
                                     output_padding, out_shape)


def _sparse_conv_kernel(features, indices, weight, bias, source_indices, kernel_size, stride, padding, dilation,
                        output_padding, input_spatial_shape, output_spatial_shape, subm, transposed, inverse, rulebook,
                        activation, alpha, source_stride, source_padding, source_dilation):
    rb = _rulebook(indices, source_indices, list(kernel_size), list(stride), list(padding), list(dilation),
                   list(output_padding), list(input_spatial_shape), list(output_spatial_shape), subm, transposed,
                   inverse, (list(source_stride), list(source_padding), list(source_dilation)))
    return sc.sparse_conv(features, weight, bias, rb, bool(inverse), activation, float(alpha))


def _sparse_conv_fake(features, indices, weight, bias, source_indices, kernel_size, stride, padding, dilation,
                      output_padding, input_spatial_shape, output_spatial_shape, subm, transposed, inverse, *rest):
    if subm:
        m = features.shape[0]
    elif inverse:
        m = source_indices.shape[0]
    else:
        m = _library.dynamic_size()
    return (features.new_empty((m, weight.shape[0])), indices.new_empty((m, 4), dtype=torch.int32))


SPARSE_CONV_ATTRS = [
    Attr("kernel_size", "ints"), Attr("stride", "ints", [1, 1, 1]), Attr("padding", "ints", [0, 0, 0]),
    Attr("dilation", "ints", [1, 1, 1]), Attr("output_padding", "ints", [0, 0, 0]),
    Attr("input_spatial_shape", "ints"), Attr("output_spatial_shape", "ints"), Attr("subm", "int", 0),
    Attr("transposed", "int", 0), Attr("inverse", "int", 0), Attr("rulebook", "str", ""),
    Attr("activation", "str", "None"), Attr("alpha", "float", 0.01, omit_default=True),
    Attr("source_stride", "ints", [1, 1, 1]), Attr("source_padding", "ints", [0, 0, 0]),
    Attr("source_dilation", "ints", [1, 1, 1]),
]

VOXELIZE = OpDecl("pointrt", "Voxelize", ["points"],
                  [Attr("voxel_size", "floats"), Attr("point_cloud_range", "floats"),
                   Attr("max_points_per_voxel", "int"), Attr("max_voxels", "int")],
                  ["voxel_features", "coords", "num_points"], _voxelize_kernel, _voxelize_fake)

SPARSE_CONV = OpDecl("pointrt", "SparseConv", ["features", "indices", "weight", "bias", "source_indices"],
                     SPARSE_CONV_ATTRS, ["out_features", "out_indices"], _sparse_conv_kernel, _sparse_conv_fake,
                     optional_inputs=("bias", "source_indices"),
                     hidden=("source_indices", "source_stride", "source_padding", "source_dilation"))


def _scatter_dense_kernel(features, indices, spatial_shape, batch_size):
    return sc.scatter_dense(features, indices, list(spatial_shape), int(batch_size))


def _scatter_dense_fake(features, indices, spatial_shape, batch_size):
    return features.new_empty((int(batch_size), features.shape[1], *[int(s) for s in spatial_shape]))


def _scatter_dense_setup(ctx, inputs, output) -> None:
    ctx.save_for_backward(inputs[1])


def _scatter_dense_backward(ctx, grad):
    (indices,) = ctx.saved_tensors
    return sc.scatter_dense_backward(grad, indices), None, None, None


SCATTER_DENSE = OpDecl("pointrt", "ScatterDense", ["features", "indices"],
                       [Attr("spatial_shape", "ints"), Attr("batch_size", "int", 1)], ["out"], _scatter_dense_kernel,
                       _scatter_dense_fake, _scatter_dense_setup, _scatter_dense_backward)

DECLS = [VOXELIZE, SPARSE_CONV, SCATTER_DENSE]
for _decl in DECLS:
    _library.register(_decl)


def use_custom_ops() -> bool:
    """True while an exporter (or torch.export / torch.compile) traces on a torch with the
    custom-op API: the modules then call the registered ops (one node each, whichever exporter);
    eagerly they call the Functions, which reuse the site pairing a key names."""
    if not _library.available():
        return False
    return torch.onnx.is_in_onnx_export() or torch.compiler.is_compiling()
