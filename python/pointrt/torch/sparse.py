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

import itertools
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch
from torch import Tensor, nn

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
    """Function.apply; while exporting, without autograd, so torch 1.13's tracer records the
    node's outputs (it cannot record outputs that require grad but were computed untraced)."""
    if _exporting():
        with torch.no_grad():
            return function.apply(*args)
    return function.apply(*args)


# Site pairing etc. run outside the ONNX tracer: recomputed by the runtime, not exported.
_NotTraced = NotTraced


# --------------------------------------------------------------------------- site keys
def _site_keys(indices: Tensor, shape: Sequence[int]) -> Tensor:
    """Linear key of each (b, i0, i1, i2) row, row-major over [B, S0, S1, S2]."""
    idx = indices.long()
    return ((idx[:, 0] * shape[0] + idx[:, 1]) * shape[1] + idx[:, 2]) * shape[2] + idx[:, 3]


def _keys_to_indices(keys: Tensor, shape: Sequence[int]) -> Tensor:
    s0, s1, s2 = shape
    i2 = keys % s2
    rest = keys // s2
    i1 = rest % s1
    rest = rest // s1
    i0 = rest % s0
    b = rest // s0
    return torch.stack([b, i0, i1, i2], dim=1).to(torch.int32)


def _lookup(sorted_keys: Tensor, order: Tensor, queries: Tensor) -> Tuple[Tensor, Tensor]:
    """Rows of `queries` in a key set (given sorted with its argsort); returns (found mask, row)."""
    if sorted_keys.numel() == 0:
        return torch.zeros_like(queries, dtype=torch.bool), torch.zeros_like(queries)
    pos = torch.searchsorted(sorted_keys, queries).clamp(max=sorted_keys.numel() - 1)
    found = sorted_keys[pos] == queries
    return found, order[pos]


def check_sparse_indices(indices: Tensor, spatial_shape: Sequence[int], where: str, batch_size: Optional[int] = None) -> None:
    """The errors OPS.md requires: a column out of range, a negative batch, a duplicate site."""
    if indices.dim() != 2 or indices.shape[1] != 4:
        raise ValueError(f"{where}: indices must be [N, 4] (batch, i0, i1, i2), got {list(indices.shape)}")
    if indices.numel() == 0:
        return
    idx = indices.long()
    if int(idx[:, 0].min()) < 0:
        raise ValueError(f"{where}: negative batch index {int(idx[:, 0].min())}")
    if batch_size is not None and int(idx[:, 0].max()) >= batch_size:
        raise ValueError(f"{where}: batch index {int(idx[:, 0].max())} is >= batch_size {batch_size}")
    for axis in range(3):
        col = idx[:, axis + 1]
        lo, hi = int(col.min()), int(col.max())
        if lo < 0 or hi >= spatial_shape[axis]:
            raise ValueError(f"{where}: indices column {axis + 1} (spatial axis {axis}) has values in [{lo}, {hi}], "
                             f"outside [0, {spatial_shape[axis]}) of spatial shape {list(spatial_shape)}")
    keys = _site_keys(idx, spatial_shape)
    if torch.unique(keys).numel() != keys.numel():
        raise ValueError(f"{where}: duplicate sites in indices")


# --------------------------------------------------------------------------- rulebooks
class Rulebook:
    """Site pairing of one convolution: for each kernel offset, (input row, output row) pairs."""

    def __init__(self, pairs: List[Tuple[Tensor, Tensor]], in_indices: Tensor, out_indices: Tensor,
                 in_shape: List[int], out_shape: List[int]):
        self.pairs = pairs
        self.in_indices = in_indices
        self.out_indices = out_indices
        self.in_shape = in_shape
        self.out_shape = out_shape


def _offsets(kernel: List[int]) -> List[Tuple[int, int, int]]:
    return list(itertools.product(range(kernel[0]), range(kernel[1]), range(kernel[2])))


def build_subm_rulebook(indices: Tensor, shape: List[int], kernel: List[int], dilation: List[int]) -> Rulebook:
    if any(k % 2 == 0 for k in kernel):
        raise ValueError(f"submanifold convolution needs odd kernel sizes, got {kernel}")
    idx = indices.long()
    keys = _site_keys(idx, shape)
    sorted_keys, order = torch.sort(keys)
    pairs = []
    rows = torch.arange(idx.shape[0], dtype=torch.long)
    for off in _offsets(kernel):
        delta = [(off[a] - (kernel[a] - 1) // 2) * dilation[a] for a in range(3)]
        q = idx.clone()
        for a in range(3):
            q[:, a + 1] += delta[a]
        inside = torch.ones(idx.shape[0], dtype=torch.bool)
        for a in range(3):
            inside &= (q[:, a + 1] >= 0) & (q[:, a + 1] < shape[a])
        found, q_rows = _lookup(sorted_keys, order, _site_keys(q, shape))
        ok = inside & found
        pairs.append((q_rows[ok], rows[ok]))
    return Rulebook(pairs, indices, indices, shape, shape)


def build_regular_rulebook(indices: Tensor, shape: List[int], kernel: List[int], stride: List[int],
                           padding: List[int], dilation: List[int], transposed: bool,
                           output_padding: List[int], out_shape: List[int]) -> Rulebook:
    idx = indices.long()
    cand_rows, cand_keys, cand_off = [], [], []
    rows = torch.arange(idx.shape[0], dtype=torch.long)
    for o, off in enumerate(_offsets(kernel)):
        p = idx.clone()
        ok = torch.ones(idx.shape[0], dtype=torch.bool)
        for a in range(3):
            q = idx[:, a + 1]
            if transposed:  # p = q*stride - pad + o*dil
                pa = q * stride[a] - padding[a] + off[a] * dilation[a]
            else:  # p*stride = q + pad - o*dil
                num = q + padding[a] - off[a] * dilation[a]
                ok &= (num % stride[a]) == 0
                pa = torch.div(num, stride[a], rounding_mode="floor")
            ok &= (pa >= 0) & (pa < out_shape[a])
            p[:, a + 1] = pa
        cand_rows.append(rows[ok])
        cand_keys.append(_site_keys(p[ok], out_shape))
        cand_off.append(torch.full((int(ok.sum()),), o, dtype=torch.long))
    all_keys = torch.cat(cand_keys) if cand_keys else torch.zeros(0, dtype=torch.long)
    out_keys = torch.unique(all_keys)  # sorted by (b, i0, i1, i2)
    out_indices = _keys_to_indices(out_keys, out_shape)
    pairs = []
    for o in range(len(cand_keys)):
        out_rows = torch.searchsorted(out_keys, cand_keys[o]) if out_keys.numel() else cand_keys[o]
        pairs.append((cand_rows[o], out_rows))
    return Rulebook(pairs, indices, out_indices, shape, out_shape)


def conv_output_shape(in_shape: List[int], kernel: List[int], stride: List[int], padding: List[int],
                      dilation: List[int], transposed: bool, output_padding: List[int]) -> List[int]:
    if transposed:
        return [(in_shape[a] - 1) * stride[a] - 2 * padding[a] + dilation[a] * (kernel[a] - 1) + output_padding[a] + 1
                for a in range(3)]
    return [(in_shape[a] + 2 * padding[a] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1 for a in range(3)]


def _apply_pairs(features: Tensor, weight: Tensor, pairs: List[Tuple[Tensor, Tensor]], n_out: int,
                 reverse: bool) -> Tensor:
    cout, cin = weight.shape[0], weight.shape[-1]
    w = weight.reshape(cout, -1, cin)
    out = features.new_zeros((n_out, cout))
    for o, (in_rows, out_rows) in enumerate(pairs):
        if in_rows.numel() == 0:
            continue
        src, dst = (out_rows, in_rows) if reverse else (in_rows, out_rows)
        out.index_add_(0, dst, features[src] @ w[:, o, :].t())
    return out


def _activate(x: Tensor, activation: str, alpha: float) -> Tensor:
    if activation == "ReLU":
        return torch.relu(x)
    if activation == "LeakyReLU":
        return torch.nn.functional.leaky_relu(x, alpha)
    if activation == "Sigmoid":
        return torch.sigmoid(x)
    return x


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
class _SparseConvFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features: Tensor, indices: Tensor, weight: Tensor, bias: Optional[Tensor], attrs: dict,
                rulebook: Rulebook) -> Tuple[Tensor, Tensor]:  # type: ignore[override]
        with _NotTraced():
            return _SparseConvFunction._compute(features, weight, bias, attrs, rulebook)

    @staticmethod
    def _compute(features: Tensor, weight: Tensor, bias: Optional[Tensor], attrs: dict,
                 rulebook: Rulebook) -> Tuple[Tensor, Tensor]:
        out = _apply_pairs(features, weight, rulebook.pairs, rulebook.out_indices.shape[0] if not attrs["inverse"]
                           else rulebook.in_indices.shape[0], reverse=bool(attrs["inverse"]))
        if bias is not None:
            out = out + bias
        out = _activate(out, attrs["activation"], attrs["alpha"])
        out_indices = rulebook.in_indices if attrs["inverse"] else rulebook.out_indices
        # A fresh tensor: an autograd Function must not hand back its input as an output.
        return out, out_indices.to(torch.int32).clone()

    @staticmethod
    def symbolic(g, features, indices, weight, bias, attrs, rulebook):  # type: ignore[no-untyped-def]
        inputs = [features, indices, weight] + ([bias] if bias is not None else [])
        kw = dict(kernel_size_i=attrs["kernel_size"], stride_i=attrs["stride"], padding_i=attrs["padding"],
                  dilation_i=attrs["dilation"], output_padding_i=attrs["output_padding"],
                  input_spatial_shape_i=attrs["input_spatial_shape"],
                  output_spatial_shape_i=attrs["output_spatial_shape"], subm_i=attrs["subm"],
                  transposed_i=attrs["transposed"], inverse_i=attrs["inverse"], rulebook_s=attrs["rulebook"],
                  activation_s=attrs["activation"])
        if attrs["activation"] == "LeakyReLU":
            kw["alpha_f"] = attrs["alpha"]
        return g.op("pointrt::SparseConv", *inputs, outputs=2, **kw)


def scatter_dense(features: Tensor, indices: Tensor, spatial_shape: Sequence[int], batch_size: int = 1) -> Tensor:
    """[N, C] features at [N, 4] sites -> dense [B, C, S0, S1, S2] (spconv's dense())."""
    return _apply(_ScatterDenseFunction, features, indices, [int(s) for s in spatial_shape], int(batch_size))


class _ScatterDenseFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, features: Tensor, indices: Tensor, spatial_shape: List[int], batch_size: int) -> Tensor:  # type: ignore[override]
        with _NotTraced():
            return _ScatterDenseFunction._compute(ctx, features, indices, spatial_shape, batch_size)

    @staticmethod
    def _compute(ctx, features: Tensor, indices: Tensor, spatial_shape: List[int], batch_size: int) -> Tensor:
        check_sparse_indices(indices, spatial_shape, "ScatterDense", batch_size)
        s0, s1, s2 = spatial_shape
        out = features.new_zeros((batch_size, s0, s1, s2, features.shape[1]))
        idx = indices.long()
        out[idx[:, 0], idx[:, 1], idx[:, 2], idx[:, 3]] = features
        ctx.save_for_backward(indices)
        return out.permute(0, 4, 1, 2, 3).contiguous()

    @staticmethod
    def backward(ctx, grad: Tensor):  # type: ignore[override]
        (indices,) = ctx.saved_tensors
        idx = indices.long()
        g = grad.permute(0, 2, 3, 4, 1)[idx[:, 0], idx[:, 1], idx[:, 2], idx[:, 3]]
        return g, None, None, None

    @staticmethod
    def symbolic(g, features, indices, spatial_shape, batch_size):  # type: ignore[no-untyped-def]
        return g.op("pointrt::ScatterDense", features, indices, spatial_shape_i=spatial_shape, batch_size_i=batch_size)


def voxelize(points: Tensor, voxel_size: Sequence[float], point_cloud_range: Sequence[float],
             max_points_per_voxel: int, max_voxels: int) -> Tuple[Tensor, Tensor, Tensor]:
    """OPS.md Voxelize: mean voxel features [V, F], coords [V, 4] (0, z, y, x), num_points [V]."""
    return _apply(_VoxelizeFunction, points, [float(v) for v in voxel_size], [float(v) for v in point_cloud_range],
                                   int(max_points_per_voxel), int(max_voxels))


def voxel_grid_shape(voxel_size: Sequence[float], point_cloud_range: Sequence[float]) -> List[int]:
    """[Gx, Gy, Gz] = round((max - min) / size), as OPS.md defines."""
    return [int(round((point_cloud_range[a + 3] - point_cloud_range[a]) / voxel_size[a])) for a in range(3)]


class _VoxelizeFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, points: Tensor, voxel_size: List[float], pc_range: List[float], max_points: int,
                max_voxels: int) -> Tuple[Tensor, Tensor, Tensor]:  # type: ignore[override]
        with _NotTraced():
            return _VoxelizeFunction._compute(points, voxel_size, pc_range, max_points, max_voxels)

    @staticmethod
    def _compute(points: Tensor, voxel_size: List[float], pc_range: List[float], max_points: int,
                 max_voxels: int) -> Tuple[Tensor, Tensor, Tensor]:
        if points.dim() != 2 or points.shape[1] < 3:
            raise ValueError(f"Voxelize: points must be [P, F] with F >= 3, got {list(points.shape)}")
        grid = voxel_grid_shape(voxel_size, pc_range)
        pts = points.float()
        lo = torch.tensor(pc_range[:3], dtype=torch.float32)
        hi = torch.tensor(pc_range[3:], dtype=torch.float32)
        size = torch.tensor(voxel_size, dtype=torch.float32)
        xyz = pts[:, :3]
        cell = torch.floor((xyz - lo) / size).long()
        keep = ((xyz >= lo) & (xyz < hi)).all(dim=1)
        keep &= ((cell >= 0) & (cell < torch.tensor(grid))).all(dim=1)
        point_ids = torch.nonzero(keep).flatten()
        cell = cell[keep]
        key = (cell[:, 2] * grid[1] + cell[:, 1]) * grid[0] + cell[:, 0]
        uniq, inverse = torch.unique(key, return_inverse=True)
        n_uniq = uniq.numel()
        # Voxels are numbered by their first point; points keep file order inside a voxel.
        grouped = torch.sort(inverse, stable=True).indices
        starts_mask = torch.ones_like(grouped, dtype=torch.bool)
        starts_mask[1:] = inverse[grouped[1:]] != inverse[grouped[:-1]]
        first = grouped[starts_mask]  # first point (position in point_ids) of each unique key
        voxel_order = torch.argsort(first)
        rank_of_voxel = torch.empty_like(voxel_order)
        rank_of_voxel[voxel_order] = torch.arange(n_uniq)
        vid = rank_of_voxel[inverse]
        sort_idx = torch.sort(vid * (point_ids.numel() + 1) + torch.arange(point_ids.numel()))[1]
        sorted_vid = vid[sort_idx]
        counts_all = torch.bincount(sorted_vid, minlength=n_uniq)
        starts = torch.cumsum(counts_all, 0) - counts_all
        slot = torch.arange(sorted_vid.numel()) - starts[sorted_vid]
        take = (slot < max_points) & (sorted_vid < max_voxels)
        v_keep = min(n_uniq, max_voxels)
        sel_points = point_ids[sort_idx[take]]
        sel_vid = sorted_vid[take]
        sums = pts.new_zeros((v_keep, pts.shape[1])).index_add_(0, sel_vid, pts[sel_points])
        num = torch.bincount(sel_vid, minlength=v_keep)[:v_keep]
        feats = sums / num.clamp(min=1).unsqueeze(1).to(pts.dtype)
        vcell = torch.zeros((v_keep, 3), dtype=torch.long)
        vcell[sel_vid] = cell[sort_idx[take]]
        coords = torch.stack([torch.zeros(v_keep, dtype=torch.long), vcell[:, 2], vcell[:, 1], vcell[:, 0]], dim=1)
        return feats, coords.to(torch.int32), num.to(torch.int32)

    @staticmethod
    def symbolic(g, points, voxel_size, pc_range, max_points, max_voxels):  # type: ignore[no-untyped-def]
        return g.op("pointrt::Voxelize", points, voxel_size_f=voxel_size, point_cloud_range_f=pc_range,
                    max_points_per_voxel_i=max_points, max_voxels_i=max_voxels, outputs=3)


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

    def _rulebook(self, x: SparseConvTensor) -> Tuple[Rulebook, List[int]]:
        key = self.indice_key
        if self.inverse:
            rb = x.indice_dict.get(key)
            if rb is None or rb.in_indices is rb.out_indices:
                raise ValueError(f"{self.__class__.__name__}: indice_key {key!r} names no earlier regular SparseConv3d")
            return rb, rb.in_shape
        if self.subm:
            cached = x.indice_dict.get(key) if key else None
            if cached is not None and cached.out_indices is cached.in_indices and torch.equal(cached.in_indices, x.indices):
                return cached, x.spatial_shape
            check_sparse_indices(x.indices, x.spatial_shape, self.__class__.__name__)
            rb = build_subm_rulebook(x.indices, x.spatial_shape, self.kernel_size, self.dilation)
        else:
            check_sparse_indices(x.indices, x.spatial_shape, self.__class__.__name__)
            out_shape = conv_output_shape(x.spatial_shape, self.kernel_size, self.stride, self.padding, self.dilation,
                                          self.transposed, self.output_padding)
            rb = build_regular_rulebook(x.indices, x.spatial_shape, self.kernel_size, self.stride, self.padding,
                                        self.dilation, self.transposed, self.output_padding, out_shape)
        if key:
            x.indice_dict[key] = rb
        return rb, rb.out_shape

    def forward(self, x: SparseConvTensor) -> SparseConvTensor:
        if x.features.shape[1] != self.in_channels:
            raise ValueError(f"{self.__class__.__name__}: expected {self.in_channels} input channels, "
                             f"got features {list(x.features.shape)}")
        with _NotTraced():
            rb, out_shape = self._rulebook(x)
        weight, bias, activation, alpha = self.weight, self.bias, "None", 0.01
        if self._fused is not None:
            weight, bias, activation, alpha = self._fused
        attrs = dict(kernel_size=self.kernel_size, stride=self.stride, padding=self.padding, dilation=self.dilation,
                     output_padding=self.output_padding, input_spatial_shape=list(x.spatial_shape),
                     output_spatial_shape=list(out_shape), subm=int(self.subm), transposed=int(self.transposed),
                     inverse=int(self.inverse), rulebook=self.indice_key, activation=activation, alpha=alpha)
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
