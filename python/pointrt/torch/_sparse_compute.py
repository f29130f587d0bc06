"""The pure-PyTorch computations of the sparse-convolution operators (OPS.md "Sparse-convolution
family"): site pairing (rulebooks), the gather-GEMM-scatter convolution, ScatterDense and
Voxelize. One implementation serves the eager modules (``pointrt.torch.sparse``) and the
``torch.library`` kernels (``_sparse_library``). Every tensor is created on the input's device,
so the same code runs on CPU and CUDA tensors.
"""
from __future__ import annotations

import itertools
from typing import List, Optional, Sequence, Tuple

import torch
from torch import Tensor


# --------------------------------------------------------------------------- site keys
def site_keys(indices: Tensor, shape: Sequence[int]) -> Tensor:
    """Linear key of each (b, i0, i1, i2) row, row-major over [B, S0, S1, S2]."""
    idx = indices.long()
    return ((idx[:, 0] * shape[0] + idx[:, 1]) * shape[1] + idx[:, 2]) * shape[2] + idx[:, 3]


def keys_to_indices(keys: Tensor, shape: Sequence[int]) -> Tensor:
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


def check_sparse_indices(indices: Tensor, spatial_shape: Sequence[int], where: str,
                         batch_size: Optional[int] = None) -> None:
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
    keys = site_keys(idx, spatial_shape)
    if torch.unique(keys).numel() != keys.numel():
        raise ValueError(f"{where}: duplicate sites in indices")


# --------------------------------------------------------------------------- rulebooks
class Rulebook:
    """Site pairing of one convolution: for each kernel offset, (input row, output row) pairs."""

    def __init__(self, pairs: Optional[List[Tuple[Tensor, Tensor]]], in_indices: Tensor, out_indices: Tensor,
                 in_shape: List[int], out_shape: List[int], source_geometry=None):
        self.pairs = pairs  # None when only the geometry is kept (the custom-op kernels pair the sites)
        self.in_indices = in_indices
        self.out_indices = out_indices
        self.in_shape = in_shape
        self.out_shape = out_shape
        # (stride, padding, dilation) of a regular convolution: what an inverse convolution needs
        self.source_geometry = source_geometry


def kernel_offsets(kernel: List[int]) -> List[Tuple[int, int, int]]:
    return list(itertools.product(range(kernel[0]), range(kernel[1]), range(kernel[2])))


def build_subm_rulebook(indices: Tensor, shape: List[int], kernel: List[int], dilation: List[int]) -> Rulebook:
    if any(k % 2 == 0 for k in kernel):
        raise ValueError(f"submanifold convolution needs odd kernel sizes, got {kernel}")
    idx = indices.long()
    keys = site_keys(idx, shape)
    sorted_keys, order = torch.sort(keys)
    pairs = []
    rows = torch.arange(idx.shape[0], dtype=torch.long, device=idx.device)
    for off in kernel_offsets(kernel):
        delta = [(off[a] - (kernel[a] - 1) // 2) * dilation[a] for a in range(3)]
        q = idx.clone()
        for a in range(3):
            q[:, a + 1] += delta[a]
        inside = torch.ones(idx.shape[0], dtype=torch.bool, device=idx.device)
        for a in range(3):
            inside &= (q[:, a + 1] >= 0) & (q[:, a + 1] < shape[a])
        found, q_rows = _lookup(sorted_keys, order, site_keys(q, shape))
        ok = inside & found
        pairs.append((q_rows[ok], rows[ok]))
    return Rulebook(pairs, indices, indices, shape, shape)


def build_regular_rulebook(indices: Tensor, shape: List[int], kernel: List[int], stride: List[int],
                           padding: List[int], dilation: List[int], transposed: bool,
                           output_padding: List[int], out_shape: List[int]) -> Rulebook:
    idx = indices.long()
    cand_rows, cand_keys = [], []
    rows = torch.arange(idx.shape[0], dtype=torch.long, device=idx.device)
    for off in kernel_offsets(kernel):
        p = idx.clone()
        ok = torch.ones(idx.shape[0], dtype=torch.bool, device=idx.device)
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
        cand_keys.append(site_keys(p[ok], out_shape))
    all_keys = torch.cat(cand_keys) if cand_keys else torch.zeros(0, dtype=torch.long, device=idx.device)
    out_keys = torch.unique(all_keys)  # sorted by (b, i0, i1, i2)
    out_indices = keys_to_indices(out_keys, out_shape)
    pairs = []
    for o in range(len(cand_keys)):
        out_rows = torch.searchsorted(out_keys, cand_keys[o]) if out_keys.numel() else cand_keys[o]
        pairs.append((cand_rows[o], out_rows))
    geometry = None if transposed else (list(stride), list(padding), list(dilation))
    return Rulebook(pairs, indices, out_indices, shape, out_shape, geometry)


def conv_output_shape(in_shape: List[int], kernel: List[int], stride: List[int], padding: List[int],
                      dilation: List[int], transposed: bool, output_padding: List[int]) -> List[int]:
    if transposed:
        return [(in_shape[a] - 1) * stride[a] - 2 * padding[a] + dilation[a] * (kernel[a] - 1) + output_padding[a] + 1
                for a in range(3)]
    return [(in_shape[a] + 2 * padding[a] - dilation[a] * (kernel[a] - 1) - 1) // stride[a] + 1 for a in range(3)]


# --------------------------------------------------------------------------- operators
def apply_pairs(features: Tensor, weight: Tensor, pairs: List[Tuple[Tensor, Tensor]], n_out: int,
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


def activate(x: Tensor, activation: str, alpha: float) -> Tensor:
    if activation == "ReLU":
        return torch.relu(x)
    if activation == "LeakyReLU":
        return torch.nn.functional.leaky_relu(x, alpha)
    if activation == "Sigmoid":
        return torch.sigmoid(x)
    return x


def sparse_conv(features: Tensor, weight: Tensor, bias: Optional[Tensor], rulebook: Rulebook, inverse: bool,
                activation: str, alpha: float) -> Tuple[Tensor, Tensor]:
    """OPS.md SparseConv on a built rulebook -> (out_features [M, Cout], out_indices [M, 4] int32)."""
    n_out = rulebook.in_indices.shape[0] if inverse else rulebook.out_indices.shape[0]
    out = apply_pairs(features, weight, rulebook.pairs, n_out, reverse=inverse)  # bench/ counts its work
    if bias is not None:
        out = out + bias
    out = activate(out, activation, alpha)
    out_indices = rulebook.in_indices if inverse else rulebook.out_indices
    # A fresh tensor: an operator must not hand back its input as an output.
    return out, out_indices.to(torch.int32).clone()


def scatter_dense(features: Tensor, indices: Tensor, spatial_shape: List[int], batch_size: int) -> Tensor:
    """[N, C] features at [N, 4] sites -> dense [B, C, S0, S1, S2]; errors as OPS.md requires."""
    check_sparse_indices(indices, spatial_shape, "ScatterDense", batch_size)
    s0, s1, s2 = spatial_shape
    out = features.new_zeros((batch_size, s0, s1, s2, features.shape[1]))
    idx = indices.long()
    out[idx[:, 0], idx[:, 1], idx[:, 2], idx[:, 3]] = features
    return out.permute(0, 4, 1, 2, 3).contiguous()


def scatter_dense_backward(grad: Tensor, indices: Tensor) -> Tensor:
    idx = indices.long()
    return grad.permute(0, 2, 3, 4, 1)[idx[:, 0], idx[:, 1], idx[:, 2], idx[:, 3]]


def voxel_grid_shape(voxel_size: Sequence[float], point_cloud_range: Sequence[float]) -> List[int]:
    """[Gx, Gy, Gz] = round((max - min) / size), as OPS.md defines."""
    return [int(round((point_cloud_range[a + 3] - point_cloud_range[a]) / voxel_size[a])) for a in range(3)]


def _kept_points(pts: Tensor, voxel_size: List[float], pc_range: List[float]) -> Tuple[Tensor, Tensor, List[int]]:
    """Indices of the points inside the range and grid, their cells (x, y, z), and the grid."""
    grid = voxel_grid_shape(voxel_size, pc_range)
    dev = pts.device
    lo = torch.tensor(pc_range[:3], dtype=torch.float32, device=dev)
    hi = torch.tensor(pc_range[3:], dtype=torch.float32, device=dev)
    size = torch.tensor(voxel_size, dtype=torch.float32, device=dev)
    xyz = pts[:, :3]
    cell = torch.floor((xyz - lo) / size).long()
    keep = ((xyz >= lo) & (xyz < hi)).all(dim=1)
    keep &= ((cell >= 0) & (cell < torch.tensor(grid, device=dev))).all(dim=1)
    return torch.nonzero(keep).flatten(), cell[keep], grid


def voxelize(points: Tensor, voxel_size: List[float], pc_range: List[float], max_points: int,
             max_voxels: int) -> Tuple[Tensor, Tensor, Tensor]:
    """OPS.md Voxelize: mean voxel features [V, F], coords [V, 4] (0, z, y, x), num_points [V]."""
    if points.dim() != 2 or points.shape[1] < 3:
        raise ValueError(f"Voxelize: points must be [P, F] with F >= 3, got {list(points.shape)}")
    pts = points.float()
    dev = pts.device
    point_ids, cell, grid = _kept_points(pts, voxel_size, pc_range)
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
    rank_of_voxel[voxel_order] = torch.arange(n_uniq, device=dev)
    vid = rank_of_voxel[inverse]
    sort_idx = torch.sort(vid * (point_ids.numel() + 1) + torch.arange(point_ids.numel(), device=dev))[1]
    sorted_vid = vid[sort_idx]
    counts_all = torch.bincount(sorted_vid, minlength=n_uniq)
    starts = torch.cumsum(counts_all, 0) - counts_all
    slot = torch.arange(sorted_vid.numel(), device=dev) - starts[sorted_vid]
    take = (slot < max_points) & (sorted_vid < max_voxels)
    v_keep = min(n_uniq, max_voxels)
    sel_points = point_ids[sort_idx[take]]
    sel_vid = sorted_vid[take]
    sums = pts.new_zeros((v_keep, pts.shape[1])).index_add_(0, sel_vid, pts[sel_points])
    num = torch.bincount(sel_vid, minlength=v_keep)[:v_keep]
    feats = sums / num.clamp(min=1).unsqueeze(1).to(pts.dtype)
    vcell = torch.zeros((v_keep, 3), dtype=torch.long, device=dev)
    vcell[sel_vid] = cell[sort_idx[take]]
    zeros = torch.zeros(v_keep, dtype=torch.long, device=dev)
    coords = torch.stack([zeros, vcell[:, 2], vcell[:, 1], vcell[:, 0]], dim=1)
    return feats, coords.to(torch.int32), num.to(torch.int32)
