"""Pure-PyTorch autograd Functions for the ``pointrt`` PointNet++ operators.

Each Function's ``forward`` follows OPS.md ("The `pointrt` operator domain, version 1",
PointNet++ family) exactly: same indices, same order, same tie and fill rules.  They run on
CPU or CUDA tensors without any compiled extension, and are vectorised over points (only
FurthestPointSample loops, over ``npoint``).  Each Function's ``symbolic`` writes the
``pointrt`` node, so ``torch.onnx.export`` (or :func:`pointrt.export`) produces a file the
pointrt runtime executes.  Every ``forward`` runs outside the ONNX tracer (``@untraced``): the
values are computed as usual, but the tracer records only the Function's node, whose
``symbolic`` replaces it anyway (tracing FPS's npoint-step loop op by op took minutes).

Conventions (OPS.md "General rules"):
  * floating tensors are float32; index outputs are int32; index inputs may be int32 or int64;
  * squared distances are ``dx*dx + dy*dy + dz*dz`` in float32, ``dx = a.x - b.x``, evaluated
    term by term (no fused multiply-add, no reordering);
  * an index out of range, a bad attribute or a shape that does not fit raises ValueError
    naming the operator, the input and the offending value.

Backward passes exist where the reference (Pointnet2_PyTorch ``pointnet2_ops``) has one:
GatherPoints, GroupPoints and ThreeInterpolate (w.r.t. ``features`` only, as the reference).
"""
from typing import List, Optional, Tuple

import numpy as np
import torch

from ._tracing import UntracedFunction, untraced

__all__ = [
    "FurthestPointSample", "GatherPoints", "BallQuery", "GroupPoints", "ThreeNN",
    "ThreeInterpolate", "KNN",
    "furthest_point_sample", "gather_points", "ball_query", "group_points", "three_nn",
    "three_interpolate", "knn",
]

# Elements of a [B, chunk, N] temporary processed at once by the query operators.
_CHUNK_ELEMS = 1 << 22
# OPS.md constants.
_FPS_INIT_DIST = 1e10
_FPS_ORIGIN_MAG2 = 1e-3
_THREE_NN_FILL = 1e20


# ----------------------------------------------------------------------------- helpers

def _err(op: str, msg: str) -> ValueError:
    return ValueError(f"pointrt::{op}: {msg}")


def _check_xyz(op: str, name: str, t: torch.Tensor, allow_empty: bool = False) -> None:
    if not isinstance(t, torch.Tensor):
        raise _err(op, f"input '{name}' must be a torch.Tensor, got {type(t).__name__}")
    if t.dim() != 3 or t.shape[2] != 3:
        raise _err(op, f"input '{name}' must have shape [B, N, 3], got {list(t.shape)}")
    if not t.is_floating_point():
        raise _err(op, f"input '{name}' must be floating point, got {t.dtype}")
    if t.shape[0] < 1:
        raise _err(op, f"input '{name}' has batch size 0")
    if not allow_empty and t.shape[1] == 0:
        raise _err(op, f"input '{name}' has no points (N = 0)")


def _check_index(op: str, name: str, idx: torch.Tensor, bound: int) -> torch.Tensor:
    """Validate an index tensor against [0, bound) and return it as int64."""
    if idx.dtype not in (torch.int32, torch.int64):
        raise _err(op, f"input '{name}' must be int32 or int64, got {idx.dtype}")
    if idx.numel() > 0:
        lo = int(idx.min())
        hi = int(idx.max())
        if lo < 0 or hi >= bound:
            bad = lo if lo < 0 else hi
            raise _err(op, f"input '{name}' holds index {bad}, outside [0, {bound})")
    return idx.long()


def _sqdist(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Pairwise squared distances [B, P, Q] between a [B, P, 3] and b [B, Q, 3].

    Computed term by term as OPS.md writes it: ``dx*dx + dy*dy + dz*dz``, ``dx = a.x - b.x``
    (each step rounded to the tensor dtype; in-place to keep one temporary).
    """
    at = a.transpose(1, 2).contiguous()
    bt = b.transpose(1, 2).contiguous()
    d = at[:, 0, :, None] - bt[:, 0, None, :]
    d.mul_(d)
    t = at[:, 1, :, None] - bt[:, 1, None, :]
    t.mul_(t)
    d.add_(t)
    torch.sub(at[:, 2, :, None], bt[:, 2, None, :], out=t)
    t.mul_(t)
    d.add_(t)
    return d


def _chunks(total: int, per_row: int):
    step = max(1, _CHUNK_ELEMS // max(1, per_row))
    for s in range(0, total, step):
        yield s, min(total, s + step)


def _f32(v: float) -> float:
    """Round a Python float to float32 (attributes are float32 in the ONNX node)."""
    return float(np.float32(v))


def _f32_square(v: float) -> float:
    f = np.float32(v)
    return float(np.float32(f * f))


def _set_type(value, like, dtype: torch.dtype, sizes: List[Optional[int]]):
    """Give a custom node's output a dtype/rank (and the dims known statically)."""
    try:
        value.setType(like.type().with_dtype(dtype).with_sizes(sizes))
    except Exception:  # pragma: no cover - type info is only a hint for the exporter
        pass
    return value


def _sizes(v) -> List[Optional[int]]:
    try:
        s = v.type().varyingSizes()
        if s is not None:
            return list(s)
    except Exception:
        pass
    return []


def _dim(v, i: int) -> Optional[int]:
    s = _sizes(v)
    return s[i] if i < len(s) else None


# ----------------------------------------------------------------------------- FPS

class FurthestPointSample(UntracedFunction):
    """``idx = FurthestPointSample(xyz [B,N,3], npoint, ignore_origin=0) -> [B, npoint] int32``.

    ``idx[:, 0] = 0``; each next index is the candidate with the largest running minimum squared
    distance to the chosen set (running distance starts at 1e10), ties to the lowest index.
    With ``ignore_origin=1`` points with ``x*x+y*y+z*z <= 1e-3`` are never candidates (the
    Pointnet2_PyTorch / PVN3D kernel); with no candidate the index is 0.
    """

    @staticmethod
    @untraced
    def forward(ctx, xyz: torch.Tensor, npoint: int, ignore_origin: int = 0) -> torch.Tensor:
        op = "FurthestPointSample"
        _check_xyz(op, "xyz", xyz)
        npoint = int(npoint)
        if npoint < 1:
            raise _err(op, f"attribute 'npoint' must be >= 1, got {npoint}")
        out = FurthestPointSample._sample(xyz, npoint, ignore_origin)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def _sample(xyz: torch.Tensor, npoint: int, ignore_origin: int) -> torch.Tensor:
        B, N, _ = xyz.shape
        x, y, z = xyz[..., 0], xyz[..., 1], xyz[..., 2]
        dist = torch.full((B, N), _FPS_INIT_DIST, dtype=xyz.dtype, device=xyz.device)
        idx = torch.zeros((B, npoint), dtype=torch.int64, device=xyz.device)
        if ignore_origin:
            mag = x * x + y * y + z * z
            # the reference compares the float magnitude against the double constant 1e-3
            candidate = mag.double() > _FPS_ORIGIN_MAG2
        last = torch.zeros((B, 1), dtype=torch.int64, device=xyz.device)
        neg = torch.tensor(-1.0, dtype=xyz.dtype, device=xyz.device)
        for j in range(1, npoint):
            dx = x - x.gather(1, last)
            d = dx * dx
            dy = y - y.gather(1, last)
            d = d + dy * dy
            dz = z - z.gather(1, last)
            d = d + dz * dz
            dist = torch.minimum(dist, d)
            score = torch.where(candidate, dist, neg) if ignore_origin else dist
            # argmax returns the first maximal index: ties go to the lowest k; with no
            # candidate every score is -1 and the index is 0.
            last = score.argmax(dim=1, keepdim=True)
            idx[:, j:j + 1] = last
        return idx.to(torch.int32)

    @staticmethod
    def backward(ctx, grad_out):
        return None, None, None

    @staticmethod
    def symbolic(g, xyz, npoint, ignore_origin=0):
        out = g.op("pointrt::FurthestPointSample", xyz, npoint_i=int(npoint),
                   ignore_origin_i=int(ignore_origin))
        return _set_type(out, xyz, torch.int32, [_dim(xyz, 0), int(npoint)])


# ----------------------------------------------------------------------------- GatherPoints

def _gather_points(features: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    B, C, N = features.shape
    M = idx.shape[1]
    return features.gather(2, idx.view(B, 1, M).expand(B, C, M))


class GatherPoints(UntracedFunction):
    """``out[b, c, m] = features[b, c, idx[b, m]]``: features [B,C,N], idx [B,M] -> [B,C,M]."""

    @staticmethod
    @untraced
    def forward(ctx, features: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        op = "GatherPoints"
        if features.dim() != 3:
            raise _err(op, f"input 'features' must be [B, C, N], got {list(features.shape)}")
        if idx.dim() != 2 or idx.shape[0] != features.shape[0]:
            raise _err(op, f"input 'idx' must be [B, M] with B = {features.shape[0]}, "
                           f"got {list(idx.shape)}")
        N = features.shape[2]
        lidx = _check_index(op, "idx", idx, N)
        ctx.save_for_backward(lidx)
        ctx.N = N
        return _gather_points(features.contiguous(), lidx)

    @staticmethod
    def backward(ctx, grad_out):
        (lidx,) = ctx.saved_tensors
        B, C, M = grad_out.shape
        grad = grad_out.new_zeros((B, C, ctx.N))
        grad.scatter_add_(2, lidx.view(B, 1, M).expand(B, C, M), grad_out.contiguous())
        return grad, None

    @staticmethod
    def symbolic(g, features, idx):
        out = g.op("pointrt::GatherPoints", features, idx)
        return _set_type(out, features, torch.float32,
                         [_dim(features, 0), _dim(features, 1), _dim(idx, 1)])


# ----------------------------------------------------------------------------- BallQuery

class BallQuery(UntracedFunction):
    """``idx = BallQuery(xyz [B,N,3], new_xyz [B,M,3]; radius, nsample, min_radius=0)``.

    Per centre, scan points in order; accept ``d2 == 0 or (min_r^2 <= d2 < r^2)``.  The first
    accepted index fills every slot, later ones overwrite the next slots, at most ``nsample``
    ("first nsample hits in point order", not the nearest).  No hit -> all zeros.
    """

    @staticmethod
    @untraced
    def forward(ctx, xyz: torch.Tensor, new_xyz: torch.Tensor, radius: float, nsample: int,
                min_radius: float = 0.0) -> torch.Tensor:
        op = "BallQuery"
        _check_xyz(op, "xyz", xyz)
        _check_xyz(op, "new_xyz", new_xyz, allow_empty=True)
        if new_xyz.shape[0] != xyz.shape[0]:
            raise _err(op, f"batch of 'new_xyz' ({new_xyz.shape[0]}) differs from 'xyz' "
                           f"({xyz.shape[0]})")
        radius = float(radius)
        nsample = int(nsample)
        min_radius = float(min_radius)
        if not radius > 0:
            raise _err(op, f"attribute 'radius' must be > 0, got {radius}")
        if nsample < 1:
            raise _err(op, f"attribute 'nsample' must be >= 1, got {nsample}")
        B, N, _ = xyz.shape
        M = new_xyz.shape[1]
        r2 = _f32_square(radius)
        mr2 = _f32_square(min_radius)
        out = torch.zeros((B, M, nsample), dtype=torch.int64, device=xyz.device)
        ar = torch.arange(N, device=xyz.device)
        k = min(nsample, N)
        for s, e in _chunks(M, B * N):
            d2 = _sqdist(new_xyz[:, s:e], xyz)                      # [B, m, N]
            acc = (d2 == 0) | ((d2 >= mr2) & (d2 < r2))
            key = torch.where(acc, ar, torch.full_like(ar, N))       # N = "not accepted"
            first_k = torch.topk(key, k, dim=2, largest=False, sorted=True).values
            if k < nsample:
                pad = first_k.new_full((B, e - s, nsample - k), N)
                first_k = torch.cat([first_k, pad], dim=2)
            first = first_k[:, :, :1]
            first = torch.where(first == N, torch.zeros_like(first), first)
            out[:, s:e] = torch.where(first_k == N, first.expand_as(first_k), first_k)
        out = out.to(torch.int32)
        ctx.mark_non_differentiable(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        return None, None, None, None, None

    @staticmethod
    def symbolic(g, xyz, new_xyz, radius, nsample, min_radius=0.0):
        kw = dict(radius_f=_f32(radius), nsample_i=int(nsample))
        if float(min_radius) != 0.0:
            kw["min_radius_f"] = _f32(min_radius)
        out = g.op("pointrt::BallQuery", xyz, new_xyz, **kw)
        return _set_type(out, xyz, torch.int32,
                         [_dim(new_xyz, 0), _dim(new_xyz, 1), int(nsample)])


# ----------------------------------------------------------------------------- GroupPoints

class GroupPoints(UntracedFunction):
    """``out[b, c, m, s] = features[b, c, idx[b, m, s]]``: [B,C,N], [B,M,S] -> [B,C,M,S]."""

    @staticmethod
    @untraced
    def forward(ctx, features: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        op = "GroupPoints"
        if features.dim() != 3:
            raise _err(op, f"input 'features' must be [B, C, N], got {list(features.shape)}")
        if idx.dim() != 3 or idx.shape[0] != features.shape[0]:
            raise _err(op, f"input 'idx' must be [B, M, S] with B = {features.shape[0]}, "
                           f"got {list(idx.shape)}")
        B, C, N = features.shape
        _, M, S = idx.shape
        lidx = _check_index(op, "idx", idx, N)
        ctx.save_for_backward(lidx)
        ctx.N = N
        flat = lidx.reshape(B, 1, M * S).expand(B, C, M * S)
        return features.contiguous().gather(2, flat).view(B, C, M, S)

    @staticmethod
    def backward(ctx, grad_out):
        (lidx,) = ctx.saved_tensors
        B, C, M, S = grad_out.shape
        grad = grad_out.new_zeros((B, C, ctx.N))
        flat = lidx.reshape(B, 1, M * S).expand(B, C, M * S)
        grad.scatter_add_(2, flat, grad_out.reshape(B, C, M * S))
        return grad, None

    @staticmethod
    def symbolic(g, features, idx):
        out = g.op("pointrt::GroupPoints", features, idx)
        return _set_type(out, features, torch.float32,
                         [_dim(features, 0), _dim(features, 1), _dim(idx, 1), _dim(idx, 2)])


# ----------------------------------------------------------------------------- ThreeNN

def _k_smallest_stable(d2: torch.Tensor, k: int) -> Tuple[torch.Tensor, torch.Tensor]:
    """k smallest along the last dim, ascending, equal values by lower index (k small)."""
    work = d2.clone()
    vals, idxs = [], []
    inf = float("inf")
    for _ in range(k):
        i = work.argmin(dim=-1, keepdim=True)      # first minimal index
        vals.append(d2.gather(-1, i))
        idxs.append(i)
        work.scatter_(-1, i, inf)
    return torch.cat(vals, -1), torch.cat(idxs, -1)


class ThreeNN(UntracedFunction):
    """``dist, idx = ThreeNN(unknown [B,n,3], known [B,m,3])``: the three nearest known points,
    ascending by d2, ties to the lower index; ``dist = sqrt(d2)``; for m < 3 the missing slots
    get index 0 and distance 1e20."""

    @staticmethod
    @untraced
    def forward(ctx, unknown: torch.Tensor, known: torch.Tensor):
        op = "ThreeNN"
        _check_xyz(op, "unknown", unknown, allow_empty=True)
        _check_xyz(op, "known", known)
        if unknown.shape[0] != known.shape[0]:
            raise _err(op, f"batch of 'unknown' ({unknown.shape[0]}) differs from 'known' "
                           f"({known.shape[0]})")
        B, n, _ = unknown.shape
        m = known.shape[1]
        k = min(3, m)
        dist = torch.full((B, n, 3), _THREE_NN_FILL, dtype=unknown.dtype, device=unknown.device)
        idx = torch.zeros((B, n, 3), dtype=torch.int64, device=unknown.device)
        for s, e in _chunks(n, B * m):
            d2 = _sqdist(unknown[:, s:e], known)
            v, i = _k_smallest_stable(d2, k)
            dist[:, s:e, :k] = torch.sqrt(v)
            idx[:, s:e, :k] = i
        idx = idx.to(torch.int32)
        ctx.mark_non_differentiable(dist, idx)
        return dist, idx

    @staticmethod
    def backward(ctx, grad_dist, grad_idx):
        return None, None

    @staticmethod
    def symbolic(g, unknown, known):
        dist, idx = g.op("pointrt::ThreeNN", unknown, known, outputs=2)
        sizes = [_dim(unknown, 0), _dim(unknown, 1), 3]
        return (_set_type(dist, unknown, torch.float32, sizes),
                _set_type(idx, unknown, torch.int32, sizes))


# ----------------------------------------------------------------------------- ThreeInterpolate

class ThreeInterpolate(UntracedFunction):
    """``out[b,c,i] = w0*f[idx0] + w1*f[idx1] + w2*f[idx2]`` (summed in that order):
    features [B,C,m], idx [B,n,3], weight [B,n,3] -> [B,C,n]."""

    @staticmethod
    @untraced
    def forward(ctx, features: torch.Tensor, idx: torch.Tensor, weight: torch.Tensor):
        op = "ThreeInterpolate"
        if features.dim() != 3:
            raise _err(op, f"input 'features' must be [B, C, m], got {list(features.shape)}")
        B, C, m = features.shape
        if idx.dim() != 3 or idx.shape[0] != B or idx.shape[2] != 3:
            raise _err(op, f"input 'idx' must be [B, n, 3] with B = {B}, got {list(idx.shape)}")
        if tuple(weight.shape) != tuple(idx.shape):
            raise _err(op, f"input 'weight' must have the shape of 'idx' {list(idx.shape)}, "
                           f"got {list(weight.shape)}")
        n = idx.shape[1]
        lidx = _check_index(op, "idx", idx, m)
        f = features.contiguous()
        out = None
        for j in range(3):
            fj = f.gather(2, lidx[:, :, j].view(B, 1, n).expand(B, C, n))
            term = weight[:, :, j].reshape(B, 1, n) * fj
            out = term if out is None else out + term
        ctx.save_for_backward(lidx, weight)
        ctx.m = m
        return out

    @staticmethod
    def backward(ctx, grad_out):
        lidx, weight = ctx.saved_tensors
        B, C, n = grad_out.shape
        grad = grad_out.new_zeros((B, C, ctx.m))
        for j in range(3):
            contrib = grad_out * weight[:, :, j].reshape(B, 1, n)
            grad.scatter_add_(2, lidx[:, :, j].view(B, 1, n).expand(B, C, n), contrib)
        return grad, None, None

    @staticmethod
    def symbolic(g, features, idx, weight):
        out = g.op("pointrt::ThreeInterpolate", features, idx, weight)
        return _set_type(out, features, torch.float32,
                         [_dim(features, 0), _dim(features, 1), _dim(idx, 1)])


# ----------------------------------------------------------------------------- KNN

class KNN(UntracedFunction):
    """``idx, dist2 = KNN(xyz [B,N,3], new_xyz [B,M,3]; k)``: the k nearest points of each
    query, ascending by squared distance, ties to the lower index.  ``k <= N``."""

    @staticmethod
    @untraced
    def forward(ctx, xyz: torch.Tensor, new_xyz: torch.Tensor, k: int):
        op = "KNN"
        _check_xyz(op, "xyz", xyz)
        _check_xyz(op, "new_xyz", new_xyz, allow_empty=True)
        if new_xyz.shape[0] != xyz.shape[0]:
            raise _err(op, f"batch of 'new_xyz' ({new_xyz.shape[0]}) differs from 'xyz' "
                           f"({xyz.shape[0]})")
        k = int(k)
        B, N, _ = xyz.shape
        M = new_xyz.shape[1]
        if k < 1 or k > N:
            raise _err(op, f"attribute 'k' must be in [1, N = {N}], got {k}")
        idx = torch.empty((B, M, k), dtype=torch.int64, device=xyz.device)
        dist2 = torch.empty((B, M, k), dtype=xyz.dtype, device=xyz.device)
        for s, e in _chunks(M, B * N):
            d2 = _sqdist(new_xyz[:, s:e], xyz)
            if k <= 4:
                v, i = _k_smallest_stable(d2, k)
            else:
                v, i = torch.sort(d2, dim=-1, stable=True)
                v, i = v[..., :k], i[..., :k]
            idx[:, s:e] = i
            dist2[:, s:e] = v
        idx = idx.to(torch.int32)
        ctx.mark_non_differentiable(idx, dist2)
        return idx, dist2

    @staticmethod
    def backward(ctx, grad_idx, grad_dist):
        return None, None, None

    @staticmethod
    def symbolic(g, xyz, new_xyz, k):
        idx, dist2 = g.op("pointrt::KNN", xyz, new_xyz, k_i=int(k), outputs=2)
        sizes = [_dim(new_xyz, 0), _dim(new_xyz, 1), int(k)]
        return (_set_type(idx, xyz, torch.int32, sizes),
                _set_type(dist2, xyz, torch.float32, sizes))


# ----------------------------------------------------------------------------- functional

def furthest_point_sample(xyz: torch.Tensor, npoint: int, ignore_origin: int = 0) -> torch.Tensor:
    return FurthestPointSample.apply(xyz, npoint, ignore_origin)


def gather_points(features: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return GatherPoints.apply(features, idx)


def ball_query(xyz: torch.Tensor, new_xyz: torch.Tensor, radius: float, nsample: int,
               min_radius: float = 0.0) -> torch.Tensor:
    return BallQuery.apply(xyz, new_xyz, radius, nsample, min_radius)


def group_points(features: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    return GroupPoints.apply(features, idx)


def three_nn(unknown: torch.Tensor, known: torch.Tensor):
    return ThreeNN.apply(unknown, known)


def three_interpolate(features: torch.Tensor, idx: torch.Tensor, weight: torch.Tensor):
    return ThreeInterpolate.apply(features, idx, weight)


def knn(xyz: torch.Tensor, new_xyz: torch.Tensor, k: int):
    return KNN.apply(xyz, new_xyz, k)
