"""PVN3D's pose step as ``pointrt`` operators: MeanShift, InstanceReduce, RigidFit.

Each Function's ``forward`` follows docs/operators-pose.md in plain PyTorch (CPU or CUDA), and its
``symbolic`` writes the ``pointrt`` node, so a network that ends in :func:`pose_from_votes`
exports as one file whose outputs are poses. The forwards are the semantics, not fast code (the
density step is O(n^2) per instance, the shift runs in float64).

Conventions (PVN3D's): votes are ``points - offsets``; ``pose`` is ``[R | t]`` with
``target ~ R @ source + t`` (model frame to camera frame).
"""
from typing import Optional, Tuple

import torch

from ._tracing import UntracedFunction, untraced

__all__ = ["MeanShift", "InstanceReduce", "RigidFit", "mean_shift", "instance_reduce", "rigid_fit",
           "pose_from_votes", "FIT_OK", "FIT_TOO_FEW_POINTS", "FIT_DEGENERATE", "FIT_NON_FINITE"]

FIT_OK, FIT_TOO_FEW_POINTS, FIT_DEGENERATE, FIT_NON_FINITE = 0, 1, 2, 3


def _err(op: str, msg: str) -> ValueError:
    return ValueError(f"pointrt::{op}: {msg}")


def _check_labels(op: str, labels: torch.Tensor, batch: int, n: int, instances: int) -> torch.Tensor:
    if labels.dtype not in (torch.int32, torch.int64):
        raise _err(op, f"input 'labels' must be int32 or int64, got {labels.dtype}")
    if tuple(labels.shape) != (batch, n):
        raise _err(op, f"input 'labels' must be [B, N] = [{batch}, {n}], got {list(labels.shape)}")
    if labels.numel() and int(labels.max()) >= instances:
        raise _err(op, f"input 'labels' has label {int(labels.max())} >= num_instances = {instances}")
    return labels.long()


def _pair_d2(v: torch.Tensor) -> torch.Tensor:
    """float32 squared distances [n, n], term by term (dx*dx + dy*dy) + dz*dz, as OPS.md."""
    d = v[:, None, :] - v[None, :, :]
    d = d * d
    return (d[..., 0] + d[..., 1]) + d[..., 2]


def _shift_set(v: torch.Tensor, bandwidth: float, iterations: int, threshold: float
               ) -> Tuple[torch.Tensor, torch.Tensor]:
    """Mode of the finite votes v [n, 3] (n >= 1) and the inlier mask of the densest vote."""
    bw2 = torch.tensor(bandwidth, dtype=torch.float32) ** 2
    near = _pair_d2(v) < bw2
    seed = int(torch.argmax(near.sum(1)))  # first maximum: ties to the lowest index
    inliers = near[seed]
    a = v.double()
    m = a[seed].clone()
    inv = 1.0 / (2.0 * float(bandwidth) ** 2)
    for _ in range(iterations):
        w = torch.exp(-((m - a) ** 2).sum(1) * inv)
        sw = w.sum()
        if not bool(sw > 0):
            break
        nxt = (w[:, None] * a).sum(0) / sw
        shift2 = float(((nxt - m) ** 2).sum())
        m = nxt
        if shift2 < float(threshold) ** 2:
            break
    return m.float(), inliers


class MeanShift(UntracedFunction):
    """``modes [B,C,K,3], counts [B,C,K] = MeanShift(votes [B,K,N,3], labels [B,N]; num_instances,
    bandwidth, max_iterations=300, stop_threshold=bandwidth*1e-3, ignore_label=-1, filter_vote=-1)``.

    Per instance and vote set: the finite votes of the instance's points; the seed is the vote
    with the most votes within the bandwidth (ties to the lowest point index); Gaussian mean shift
    from the seed. With ``filter_vote = f`` the other sets use only the inliers of set f's seed.
    A count of 0 means no mode (the mode is 0)."""

    @staticmethod
    @untraced
    def forward(ctx, votes, labels, num_instances, bandwidth, max_iterations=300, stop_threshold=None,
                ignore_label=-1, filter_vote=-1):
        op = "MeanShift"
        if votes.dim() != 4 or votes.shape[3] != 3:
            raise _err(op, f"input 'votes' must be [B, K, N, 3], got {list(votes.shape)}")
        if not bandwidth > 0:
            raise _err(op, f"attribute 'bandwidth' must be > 0, got {bandwidth}")
        B, K, N, _ = votes.shape
        if filter_vote >= K:
            raise _err(op, f"attribute 'filter_vote' = {filter_vote} is not a vote set (K = {K})")
        lab = _check_labels(op, labels, B, N, num_instances)
        thr = bandwidth * 1e-3 if stop_threshold is None else stop_threshold
        modes = votes.new_zeros((B, num_instances, K, 3), dtype=torch.float32)
        counts = torch.zeros((B, num_instances, K), dtype=torch.int32)
        order = [filter_vote] if filter_vote >= 0 else []
        order += [k for k in range(K) if k != filter_vote]
        for b in range(B):
            for c in range(num_instances):
                members = (lab[b] == c) if c != ignore_label else torch.zeros(N, dtype=torch.bool)
                voters = members.clone()
                for k in order:
                    v = votes[b, k].float()
                    use = voters & torch.isfinite(v).all(1)
                    counts[b, c, k] = int(use.sum())
                    if not bool(use.any()):
                        if k == filter_vote:
                            voters = use
                        continue
                    mode, inl = _shift_set(v[use], bandwidth, max_iterations, thr)
                    modes[b, c, k] = mode
                    if k == filter_vote:
                        voters = torch.zeros_like(use)
                        voters[torch.nonzero(use).flatten()[inl]] = True
        ctx.mark_non_differentiable(modes, counts)
        return modes, counts

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * 8

    @staticmethod
    def symbolic(g, votes, labels, num_instances, bandwidth, max_iterations=300, stop_threshold=None,
                 ignore_label=-1, filter_vote=-1):
        kw = dict(num_instances_i=int(num_instances), bandwidth_f=float(bandwidth),
                  max_iterations_i=int(max_iterations), ignore_label_i=int(ignore_label),
                  filter_vote_i=int(filter_vote))
        if stop_threshold is not None:
            kw["stop_threshold_f"] = float(stop_threshold)
        return g.op("pointrt::MeanShift", votes, labels, outputs=2, **kw)


class InstanceReduce(UntracedFunction):
    """``reduced [B,C,D], counts [B,C] = InstanceReduce(values [B,N,D], labels [B,N];
    num_instances, reduction="mean", ignore_label=-1)``; sums in float64, empty instances 0."""

    @staticmethod
    @untraced
    def forward(ctx, values, labels, num_instances, reduction="mean", ignore_label=-1):
        op = "InstanceReduce"
        if values.dim() != 3:
            raise _err(op, f"input 'values' must be [B, N, D], got {list(values.shape)}")
        if reduction not in ("mean", "sum"):
            raise _err(op, f"attribute 'reduction' must be 'mean' or 'sum', got {reduction!r}")
        B, N, D = values.shape
        lab = _check_labels(op, labels, B, N, num_instances)
        keep = (lab >= 0) & (lab != ignore_label)
        idx = torch.where(keep, lab, torch.zeros_like(lab))
        sums = torch.zeros((B, num_instances, D), dtype=torch.float64)
        sums.scatter_add_(1, idx[:, :, None].expand(B, N, D), values.double() * keep[:, :, None])
        counts = torch.zeros((B, num_instances), dtype=torch.int64).scatter_add_(1, idx, keep.long())
        if reduction == "mean":
            sums = sums / counts.clamp(min=1)[:, :, None]
        ctx.mark_non_differentiable(counts)
        return sums.float(), counts.to(torch.int32)

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * 5

    @staticmethod
    def symbolic(g, values, labels, num_instances, reduction="mean", ignore_label=-1):
        return g.op("pointrt::InstanceReduce", values, labels, num_instances_i=int(num_instances),
                    reduction_s=reduction, ignore_label_i=int(ignore_label), outputs=2)


def _fit_one(s: torch.Tensor, t: torch.Tensor, w: torch.Tensor) -> Tuple[torch.Tensor, int]:
    """[R | t] (float64 [3, 4]) and the status of one fit (docs/operators-pose.md)."""
    pose = torch.zeros((3, 4), dtype=torch.float64)
    pose[:, :3] = torch.eye(3, dtype=torch.float64)
    use = w > 0
    s, t, w = s[use].double(), t[use].double(), w[use].double()
    if not (torch.isfinite(s).all() and torch.isfinite(t).all()):
        return pose, FIT_NON_FINITE
    if s.shape[0] == 0:
        return pose, FIT_TOO_FEW_POINTS
    cs = (w[:, None] * s).sum(0) / w.sum()
    ct = (w[:, None] * t).sum(0) / w.sum()
    pose[:, 3] = ct - cs
    if s.shape[0] < 3:
        return pose, FIT_TOO_FEW_POINTS
    h = ((s - cs) * w[:, None]).T @ (t - ct)
    u, sv, vt = torch.linalg.svd(h)
    scale = float(torch.sqrt((w * (s * s).sum(1)).sum() * (w * (t * t).sum(1)).sum()))
    if float(sv[1]) <= 1e-6 * float(sv[0]) or float(sv[0]) <= 1e-10 * scale:
        return pose, FIT_DEGENERATE
    d = torch.sign(torch.det(vt.T @ u.T))
    r = vt.T @ torch.diag(torch.tensor([1.0, 1.0, float(d)], dtype=torch.float64)) @ u.T
    pose[:, :3] = r
    pose[:, 3] = ct - r @ cs
    return pose, FIT_OK


class RigidFit(UntracedFunction):
    """``pose [T...,3,4], status [T...] = RigidFit(source [S...,P,3], target [T...,P,3], weight)``:
    weighted Kabsch with the reflection fix; S... is a suffix of T...; status 0 ok, 1 fewer than
    3 points of positive weight, 2 collinear/coincident, 3 non-finite (R = I, never NaN)."""

    @staticmethod
    @untraced
    def forward(ctx, source, target, weight=None):
        op = "RigidFit"
        if source.dim() < 2 or source.shape[-1] != 3 or target.dim() < 2 or target.shape[-1] != 3:
            raise _err(op, f"inputs must be [..., P, 3], got {list(source.shape)} and {list(target.shape)}")
        ns = source.dim()
        if ns > target.dim() or tuple(target.shape[-ns:]) != tuple(source.shape):
            raise _err(op, f"input 'source' {list(source.shape)} must equal the last dimensions of 'target' "
                           f"{list(target.shape)}")
        lead = tuple(target.shape[:-2])
        p = target.shape[-2]
        if weight is None:
            weight = torch.ones(lead + (p,))
        elif tuple(weight.shape) != lead + (p,):
            raise _err(op, f"input 'weight' must be {list(lead + (p,))}, got {list(weight.shape)}")
        elif weight.numel() and (not torch.isfinite(weight).all() or bool((weight < 0).any())):
            raise _err(op, "input 'weight' must be finite and >= 0")
        src = source.reshape(-1, p, 3)
        tgt, wts = target.reshape(-1, p, 3), weight.reshape(-1, p)
        poses, status = [], []
        for f in range(tgt.shape[0]):
            pose, st = _fit_one(src[f % src.shape[0]], tgt[f], wts[f])
            poses.append(pose)
            status.append(st)
        pose_t = torch.stack(poses).float().reshape(lead + (3, 4)) if poses else torch.zeros(lead + (3, 4))
        status_t = torch.tensor(status, dtype=torch.int32).reshape(lead)
        ctx.mark_non_differentiable(pose_t, status_t)
        return pose_t, status_t

    @staticmethod
    def backward(ctx, *grads):
        return None, None, None

    @staticmethod
    def symbolic(g, source, target, weight=None):
        args = [source, target] + ([weight] if weight is not None else [])
        return g.op("pointrt::RigidFit", *args, outputs=2)


def mean_shift(votes, labels, num_instances: int, bandwidth: float, max_iterations: int = 300,
               stop_threshold: Optional[float] = None, ignore_label: int = -1, filter_vote: int = -1):
    return MeanShift.apply(votes, labels, num_instances, bandwidth, max_iterations, stop_threshold,
                           ignore_label, filter_vote)


def instance_reduce(values, labels, num_instances: int, reduction: str = "mean", ignore_label: int = -1):
    return InstanceReduce.apply(values, labels, num_instances, reduction, ignore_label)


def rigid_fit(source, target, weight=None):
    return RigidFit.apply(source, target, weight)


def pose_from_votes(points: torch.Tensor, kp_offsets: torch.Tensor, ctr_offsets: torch.Tensor,
                    seg_logits: torch.Tensor, model_kps: torch.Tensor, bandwidth: float = 0.08,
                    background: int = 0) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """PVN3D's pose step: ``poses [B, C, 3, 4], status [B, C], labels [B, N]``.

    points [B, N, 3]; kp_offsets [B, K, N, 3]; ctr_offsets [B, 1, N, 3]; seg_logits [B, C, N];
    model_kps [C, K + 1, 3] (the keypoints then the centre of each class's model). Votes are
    ``points - offsets`` (PVN3D), instances the segmentation's argmax, background class ignored;
    the centre votes filter the keypoint votes (PVN3D's ``use_ctr_clus_flter``); a keypoint
    without votes gets weight 0 in the fit, so an absent class has status 1."""
    votes = torch.cat([kp_offsets, ctr_offsets], dim=1)
    votes = points[:, None] - votes
    labels = torch.argmax(seg_logits, dim=1)
    classes, sets = int(seg_logits.shape[1]), int(votes.shape[1])  # plain ints, not traced sizes
    modes, counts = mean_shift(votes, labels, classes, bandwidth, ignore_label=background, filter_vote=sets - 1)
    weight = (counts > 0).to(torch.float32)
    poses, status = rigid_fit(model_kps, modes, weight)
    return poses, status, labels
