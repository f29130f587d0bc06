"""Pure-PyTorch sparse convolution with spconv 2.x's module API, exportable to the `pointrt` domain.

Semantics are OPS.md's "Sparse-convolution family" exactly (output site order included), so
the eager result here is the reference the exported file must reproduce. Parameters and
state_dict keys match spconv 2.x: a convolution's ``weight`` is [Cout, k0, k1, k2, Cin] and its
``bias`` is [Cout]; ``SparseSequential`` indexes children like ``nn.Sequential``.

Export (``torch.onnx.export``, or ``pointrt.export``) writes one ``pointrt::SparseConv`` per
convolution. Inside a ``SparseSequential`` a following ``BatchNorm1d`` (eval mode) is folded
into the convolution and a following ReLU / LeakyReLU / Sigmoid becomes its ``activation``.
A child the exporter cannot express raises ``SparseExportError`` naming it; nothing is dropped.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor, nn

from . import _axes, _library
from . import _sparse_compute as sc
from ._sparse_library import SCATTER_DENSE, SPARSE_CONV, VOXELIZE, use_custom_ops
from ._tracing import NotTraced

IntTriple = Union[int, Sequence[int]]


class SparseExportError(RuntimeError):
    """A module inside a sparse network that cannot be written as pointrt operators."""


def _triple(v: IntTriple) -> List[int]:
    if isinstance(v, int):
        return [v, v, v]
    out = [int(x) for x in v]
    if len(out) != 3:
        raise ValueError(f"expected 3 values, got {out}")
    return out


def _exporting() -> bool:
    return torch.onnx.is_in_onnx_export()


def _apply(function, *args):
    """Function.apply (through the point-axis analysis' hook); while exporting, without autograd,
    so torch 1.13's tracer records the node's outputs (it cannot record outputs that require grad
    but were computed untraced)."""
    def run(probe: bool):
        if _exporting():
            with torch.no_grad():
                return function.apply(*args)
        return function.apply(*args)
    return _axes.pointrt_op(function.__name__.strip("_").replace("Function", ""), args, run)


def _op(decl, *args):
    """The registered custom op (torch >= 2.4, while exporting), through the same hook."""
    return _axes.pointrt_op(decl.name, args, lambda probe: decl.call(*args))


# Site pairing etc. run outside the ONNX tracer: recomputed by the runtime, not exported.
_NotTraced = NotTraced

# The computations (one implementation for the modules and the custom-op kernels).
Rulebook = sc.Rulebook
check_sparse_indices = sc.check_sparse_indices
build_subm_rulebook = sc.build_subm_rulebook
build_regular_rulebook = sc.build_regular_rulebook
conv_output_shape = sc.conv_output_shape
voxel_grid_shape = sc.voxel_grid_shape
_site_keys = sc.site_keys
_offsets = sc.kernel_offsets


# --------------------------------------------------------------------------- tensors
class SparseConvTensor:
    """spconv's SparseConvTensor: features [N, C], indices [N, 4] int32 (batch, i0, i1, i2)."""

    def __init__(self, features: Tensor, indices: Tensor, spatial_shape: Sequence[int], batch_size: int,
                 indice_dict: Optional[Dict[str, Rulebook]] = None):
        self.features = features
        self.indices = indices
        self.spatial_shape = [int(s) for s in spatial_shape]
        self.batch_size = int(batch_size)
        self.indice_dict: Dict[str, Rulebook] = indice_dict if indice_dict is not None else {}

    def replace_feature(self, features: Tensor) -> "SparseConvTensor":
        return SparseConvTensor(features, self.indices, self.spatial_shape, self.batch_size, self.indice_dict)

    def dense(self, channels_first: bool = True) -> Tensor:
        out = scatter_dense(self.features, self.indices, self.spatial_shape, self.batch_size)
        return out if channels_first else out.permute(0, 2, 3, 4, 1).contiguous()


# --------------------------------------------------------------------------- autograd Functions
def _conv_attr_values(attrs: dict, source: Optional[Rulebook]) -> list:
    """SparseConv's attribute values in declaration order (an inverse's source geometry last)."""
    geometry = source.source_geometry if source is not None else ([1, 1, 1], [0, 0, 0], [1, 1, 1])
    keys = ["kernel_size", "stride", "padding", "dilation", "output_padding", "input_spatial_shape",
            "output_spatial_shape", "subm", "transposed", "inverse", "rulebook", "activation", "alpha"]
    return [attrs[k] for k in keys] + [list(g) for g in geometry]


class _SparseConvFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features: Tensor, indices: Tensor, weight: Tensor, bias: Optional[Tensor], attrs: dict,
                rulebook: Rulebook) -> Tuple[Tensor, Tensor]:  # type: ignore[override]
        with _NotTraced():
            return sc.sparse_conv(features, weight, bias, rulebook, bool(attrs["inverse"]), attrs["activation"],
                                  attrs["alpha"])

    @staticmethod
    def symbolic(g, features, indices, weight, bias, attrs, rulebook):  # type: ignore[no-untyped-def]
        return _library.write_node(g, SPARSE_CONV, [features, indices, weight, bias, None],
                                   _conv_attr_values(attrs, None))


def scatter_dense(features: Tensor, indices: Tensor, spatial_shape: Sequence[int], batch_size: int = 1) -> Tensor:
    """[N, C] features at [N, 4] sites -> dense [B, C, S0, S1, S2] (spconv's dense())."""
    shape, batch_size = [int(s) for s in spatial_shape], int(batch_size)
    if use_custom_ops():
        return _op(SCATTER_DENSE, features, indices, shape, batch_size)
    return _apply(_ScatterDenseFunction, features, indices, shape, batch_size)


class _ScatterDenseFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features: Tensor, indices: Tensor, spatial_shape: List[int], batch_size: int) -> Tensor:  # type: ignore[override]
        with _NotTraced():
            ctx.save_for_backward(indices)
            return sc.scatter_dense(features, indices, spatial_shape, batch_size)

    @staticmethod
    def backward(ctx, grad: Tensor):  # type: ignore[override]
        (indices,) = ctx.saved_tensors
        return sc.scatter_dense_backward(grad, indices), None, None, None

    @staticmethod
    def symbolic(g, features, indices, spatial_shape, batch_size):  # type: ignore[no-untyped-def]
        return _library.write_node(g, SCATTER_DENSE, [features, indices], [spatial_shape, batch_size])


def voxelize(points: Tensor, voxel_size: Sequence[float], point_cloud_range: Sequence[float],
             max_points_per_voxel: int, max_voxels: int) -> Tuple[Tensor, Tensor, Tensor]:
    """OPS.md Voxelize: mean voxel features [V, F], coords [V, 4] (0, z, y, x), num_points [V]."""
    args = ([float(v) for v in voxel_size], [float(v) for v in point_cloud_range], int(max_points_per_voxel),
            int(max_voxels))
    if use_custom_ops():
        return _op(VOXELIZE, points, *args)
    return _apply(_VoxelizeFunction, points, *args)


class _VoxelizeFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, points: Tensor, voxel_size: List[float], pc_range: List[float], max_points: int,
                max_voxels: int) -> Tuple[Tensor, Tensor, Tensor]:  # type: ignore[override]
        with _NotTraced():
            return sc.voxelize(points, voxel_size, pc_range, max_points, max_voxels)

    @staticmethod
    def symbolic(g, points, voxel_size, pc_range, max_points, max_voxels):  # type: ignore[no-untyped-def]
        return _library.write_node(g, VOXELIZE, [points], [voxel_size, pc_range, max_points, max_voxels])


# --------------------------------------------------------------------------- modules
class SparseConvolution(nn.Module):
    """Base of SubMConv3d / SparseConv3d / SparseConvTranspose3d / SparseInverseConv3d."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntTriple = 3, stride: IntTriple = 1,
                 padding: IntTriple = 0, dilation: IntTriple = 1, groups: int = 1, bias: bool = True,
                 subm: bool = False, output_padding: IntTriple = 0, transposed: bool = False, inverse: bool = False,
                 indice_key: Optional[str] = None, algo=None, fp32_accum=None, name=None):
        super().__init__()
        if groups != 1:
            raise ValueError("grouped sparse convolution is not supported")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _triple(kernel_size)
        self.stride = _triple(stride)
        self.padding = _triple(padding)
        self.dilation = _triple(dilation)
        self.output_padding = _triple(output_padding)
        self.subm = subm
        self.transposed = transposed
        self.inverse = inverse
        self.indice_key = indice_key or ""
        if inverse and not self.indice_key:
            raise ValueError("SparseInverseConv3d needs the indice_key of the SparseConv3d it inverts")
        self.weight = nn.Parameter(torch.empty(out_channels, *self.kernel_size, in_channels))
        self.bias = nn.Parameter(torch.zeros(out_channels)) if bias else None
        nn.init.kaiming_uniform_(self.weight.view(out_channels, -1), a=5 ** 0.5)
        # Set by SparseSequential at export: folded BatchNorm and fused activation.
        self._fused: Optional[Tuple[Tensor, Optional[Tensor], str, float]] = None

    def extra_repr(self) -> str:
        kind = "subm" if self.subm else "inverse" if self.inverse else "transposed" if self.transposed else "regular"
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"padding={self.padding}, dilation={self.dilation}, {kind}, indice_key={self.indice_key!r}")

    def _source(self, x: SparseConvTensor) -> Rulebook:
        """The site pairing an inverse convolution reverses (an earlier regular SparseConv3d's)."""
        rb = x.indice_dict.get(self.indice_key)
        if rb is None or rb.source_geometry is None:
            raise ValueError(f"{self.__class__.__name__}: indice_key {self.indice_key!r} names no earlier regular "
                             "SparseConv3d")
        return rb

    def _out_shape(self, x: SparseConvTensor) -> List[int]:
        if self.inverse:
            return self._source(x).in_shape
        if self.subm:
            return list(x.spatial_shape)
        return conv_output_shape(x.spatial_shape, self.kernel_size, self.stride, self.padding, self.dilation,
                                 self.transposed, self.output_padding)

    def _rulebook(self, x: SparseConvTensor) -> Rulebook:
        key = self.indice_key
        if self.inverse:
            return self._source(x)
        if self.subm:
            cached = x.indice_dict.get(key) if key else None
            if cached is not None and cached.out_indices is cached.in_indices and torch.equal(cached.in_indices, x.indices):
                return cached
            check_sparse_indices(x.indices, x.spatial_shape, self.__class__.__name__)
            rb = build_subm_rulebook(x.indices, x.spatial_shape, self.kernel_size, self.dilation)
        else:
            check_sparse_indices(x.indices, x.spatial_shape, self.__class__.__name__)
            rb = build_regular_rulebook(x.indices, x.spatial_shape, self.kernel_size, self.stride, self.padding,
                                        self.dilation, self.transposed, self.output_padding, self._out_shape(x))
        if key:
            x.indice_dict[key] = rb
        return rb

    def forward(self, x: SparseConvTensor) -> SparseConvTensor:
        if x.features.shape[1] != self.in_channels:
            raise ValueError(f"{self.__class__.__name__}: expected {self.in_channels} input channels, "
                             f"got features {list(x.features.shape)}")
        weight, bias, activation, alpha = self.weight, self.bias, "None", 0.01
        if self._fused is not None:
            weight, bias, activation, alpha = self._fused
        out_shape = self._out_shape(x)
        attrs = dict(kernel_size=self.kernel_size, stride=self.stride, padding=self.padding, dilation=self.dilation,
                     output_padding=self.output_padding, input_spatial_shape=list(x.spatial_shape),
                     output_spatial_shape=list(out_shape), subm=int(self.subm), transposed=int(self.transposed),
                     inverse=int(self.inverse), rulebook=self.indice_key, activation=activation, alpha=alpha)
        if use_custom_ops():  # one registered op; its kernel pairs the sites itself
            source = self._source(x) if self.inverse else None
            feats, inds = _op(SPARSE_CONV, x.features, x.indices, weight, bias,
                                           source.in_indices if source is not None else None,
                                           *_conv_attr_values(attrs, source))
            if self.indice_key and not self.subm and not self.inverse and not self.transposed:
                x.indice_dict[self.indice_key] = Rulebook(None, x.indices, inds, list(x.spatial_shape), out_shape,
                                                          (self.stride, self.padding, self.dilation))
        else:
            with _NotTraced():
                rb = self._rulebook(x)
            feats, inds = _apply(_SparseConvFunction, x.features, x.indices, weight, bias, attrs, rb)
        return SparseConvTensor(feats, inds, out_shape, x.batch_size, x.indice_dict)


class SubMConv3d(SparseConvolution):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntTriple = 3, stride: IntTriple = 1,
                 padding: IntTriple = 0, dilation: IntTriple = 1, groups: int = 1, bias: bool = True,
                 indice_key: Optional[str] = None, **kw):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, subm=True,
                         indice_key=indice_key, **kw)


class SparseConv3d(SparseConvolution):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntTriple = 3, stride: IntTriple = 1,
                 padding: IntTriple = 0, dilation: IntTriple = 1, groups: int = 1, bias: bool = True,
                 indice_key: Optional[str] = None, **kw):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         indice_key=indice_key, **kw)


class SparseConvTranspose3d(SparseConvolution):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntTriple = 3, stride: IntTriple = 1,
                 padding: IntTriple = 0, dilation: IntTriple = 1, groups: int = 1, bias: bool = True,
                 output_padding: IntTriple = 0, indice_key: Optional[str] = None, **kw):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         output_padding=output_padding, transposed=True, indice_key=indice_key, **kw)


class SparseInverseConv3d(SparseConvolution):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntTriple, indice_key: str,
                 bias: bool = True, **kw):
        super().__init__(in_channels, out_channels, kernel_size, bias=bias, inverse=True, indice_key=indice_key, **kw)


_ACTIVATIONS = {nn.ReLU: "ReLU", nn.LeakyReLU: "LeakyReLU", nn.Sigmoid: "Sigmoid"}


def _fold_batchnorm(conv: SparseConvolution, bn: nn.BatchNorm1d) -> Tuple[Tensor, Tensor]:
    if bn.training:
        raise SparseExportError(f"BatchNorm1d after {conv.__class__.__name__} is in training mode: call model.eval() "
                                "before export")
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    weight = conv.weight * scale.view(-1, 1, 1, 1, 1)
    bias = conv.bias if conv.bias is not None else torch.zeros_like(bn.running_mean)
    return weight, (bias - bn.running_mean) * scale + bn.bias


def conv_bn_act(conv: SparseConvolution, bn: Optional[nn.BatchNorm1d], act: Optional[nn.Module],
                x: SparseConvTensor) -> SparseConvTensor:
    """conv -> BatchNorm1d -> activation on features; folded into one SparseConv node at export."""
    if _exporting():
        weight, bias = _fold_batchnorm(conv, bn) if bn is not None else (conv.weight, conv.bias)
        activation, alpha = "None", 0.01
        if act is not None:
            if type(act) not in _ACTIVATIONS:
                raise SparseExportError(f"activation {act.__class__.__name__} after {conv.__class__.__name__} "
                                        "cannot be fused (ReLU, LeakyReLU and Sigmoid can)")
            activation, alpha = _ACTIVATIONS[type(act)], float(getattr(act, "negative_slope", 0.01))
        conv._fused = (weight, bias, activation, alpha)
        try:
            return conv(x)
        finally:
            conv._fused = None
    y = conv(x)
    if bn is not None:
        y = y.replace_feature(bn(y.features))
    if act is not None:
        y = y.replace_feature(act(y.features))
    return y


class SparseModule(nn.Module):
    """Base of modules that take and return a SparseConvTensor (spconv's SparseModule)."""


class SparseSequential(nn.Sequential):
    """spconv's SparseSequential: sparse modules get the SparseConvTensor, other children (BatchNorm1d,
    activations) are applied to its features."""

    def forward(self, x):  # type: ignore[override]
        children = list(self._modules.items())
        i = 0
        while i < len(children):
            name, m = children[i]
            if isinstance(m, SparseConvolution) and _exporting():
                i = self._export_fused(children, i, x)
                x = self._last
                continue
            if isinstance(m, (SparseConvolution, SparseSequential, SparseModule)) or not isinstance(x, SparseConvTensor):
                x = m(x)
            else:
                if _exporting() and not isinstance(m, (nn.BatchNorm1d, nn.Identity, nn.Dropout, *_ACTIVATIONS)):
                    raise SparseExportError(f"SparseSequential child '{name}' ({m.__class__.__name__}) cannot be "
                                            "exported as pointrt operators")
                if _exporting() and isinstance(m, nn.BatchNorm1d):
                    raise SparseExportError(f"SparseSequential child '{name}' (BatchNorm1d) does not follow a sparse "
                                            "convolution, so it cannot be folded")
                x = x.replace_feature(m(x.features))
            i += 1
        return x

    def _export_fused(self, children, i: int, x: SparseConvTensor) -> int:
        conv: SparseConvolution = children[i][1]
        weight, bias, activation, alpha = conv.weight, conv.bias, "None", 0.01
        j = i + 1
        if j < len(children) and isinstance(children[j][1], nn.BatchNorm1d):
            weight, bias = _fold_batchnorm(conv, children[j][1])
            j += 1
        while j < len(children) and isinstance(children[j][1], (nn.Identity, nn.Dropout)):
            j += 1
        if j < len(children) and type(children[j][1]) in _ACTIVATIONS:
            act = children[j][1]
            activation = _ACTIVATIONS[type(act)]
            alpha = float(getattr(act, "negative_slope", 0.01))
            j += 1
        conv._fused = (weight, bias, activation, alpha)
        try:
            self._last = conv(x)
        finally:
            conv._fused = None
        return j


def load_spconv1_state_dict(model: nn.Module, state_dict: Dict[str, Tensor], strict: bool = True):
    """Load a spconv 1.x checkpoint, whose sparse convolution weights are [k0, k1, k2, Cin, Cout]."""
    converted = dict(state_dict)
    for name, module in model.named_modules():
        if isinstance(module, SparseConvolution):
            key = f"{name}.weight" if name else "weight"
            w = converted.get(key)
            if w is not None and w.dim() == 5 and w.shape[-1] == module.out_channels and w.shape[3] == module.in_channels:
                converted[key] = w.permute(4, 0, 1, 2, 3).contiguous()
    return model.load_state_dict(converted, strict=strict)
