"""CenterPoint's decode and 3D box NMS as ``pointrt`` operators: CenterPointDecode, BoxNMS.

The forwards follow docs/operators-detect.md in plain PyTorch/numpy (the semantics, not fast
code); the ``symbolic`` functions write the ``pointrt`` nodes, so a detector that ends in
:func:`decode_and_nms` exports as one file whose outputs are boxes: ``num_detections [B]``,
``boxes [B, M, 7 | 9]`` (x, y, z, dx, dy, dz, yaw[, vx, vy]), ``scores [B, M]``, ``labels [B, M]``.
"""
import math
from typing import Optional, Sequence, Tuple

import numpy as np
import torch
import torch.nn.functional as F

from ._tracing import UntracedFunction, untraced

__all__ = ["CenterPointDecode", "BoxNMS", "center_point_decode", "box_nms", "decode_and_nms", "bev_iou"]

_CHANNELS = {"offset": 2, "height": 1, "size": 3, "rotation": 2, "velocity": 2}


def _err(op: str, msg: str) -> ValueError:
    return ValueError(f"pointrt::{op}: {msg}")


class CenterPointDecode(UntracedFunction):
    """``boxes [B,K,7|9], scores [B,K], labels [B,K], count [B] = CenterPointDecode(heatmap, offset,
    height, size, rotation, velocity=None; voxel_size, point_cloud_range, out_size_factor, ...)``.
    See docs/operators-detect.md for every attribute; the defaults are CUDA-CenterPoint's."""

    @staticmethod
    @untraced
    def forward(ctx, heatmap, offset, height, size, rotation, velocity, voxel_size, point_cloud_range,
                out_size_factor, score_threshold=0.1, post_center_range=None, max_detections=1000,
                heatmap_activation="sigmoid", size_activation="exp", peak_kernel=1, candidates="pixel"):
        op = "CenterPointDecode"
        if heatmap.dim() != 4:
            raise _err(op, f"input 'heatmap' must be [B, C, H, W], got {list(heatmap.shape)}")
        B, C, H, W = heatmap.shape
        maps = dict(offset=offset, height=height, size=size, rotation=rotation, velocity=velocity)
        for name, t in maps.items():
            if t is not None and tuple(t.shape) != (B, _CHANNELS[name], H, W):
                raise _err(op, f"input '{name}' must be {[B, _CHANNELS[name], H, W]}, got {list(t.shape)}")
        f32 = torch.float32
        score = torch.sigmoid(heatmap.to(f32)) if heatmap_activation == "sigmoid" else heatmap.to(f32)
        if peak_kernel > 1:
            pooled = F.max_pool2d(score, peak_kernel, stride=1, padding=peak_kernel // 2)
            peak = score >= pooled
        else:
            peak = torch.ones_like(score, dtype=torch.bool)
        dim = 9 if velocity is not None else 7
        K = int(max_detections)
        boxes = torch.zeros((B, K, dim), dtype=f32)
        scores = torch.zeros((B, K), dtype=f32)
        labels = torch.full((B, K), -1, dtype=torch.int32)
        counts = torch.zeros((B,), dtype=torch.int32)
        ys, xs = torch.meshgrid(torch.arange(H, dtype=f32), torch.arange(W, dtype=f32), indexing="ij")
        for b in range(B):
            if candidates == "class":
                cand_score = score[b].reshape(-1)
                cand_label = torch.arange(C).repeat_interleave(H * W)
                cand_pixel = torch.arange(H * W).repeat(C)
                cand_peak = peak[b].reshape(-1)
            else:
                best, label = score[b].max(0)  # the first maximum: the lowest class wins ties
                cand_score, cand_label = best.reshape(-1), label.reshape(-1)
                cand_pixel = torch.arange(H * W)
                cand_peak = peak[b].reshape(C, -1).gather(0, cand_label[None]).reshape(-1)
            box = torch.zeros((H * W, dim), dtype=f32)
            box[:, 0] = ((offset[b, 0].to(f32) + xs) * out_size_factor * voxel_size[0] + point_cloud_range[0]).reshape(-1)
            box[:, 1] = ((offset[b, 1].to(f32) + ys) * out_size_factor * voxel_size[1] + point_cloud_range[1]).reshape(-1)
            box[:, 2] = height[b, 0].reshape(-1)
            sz = size[b].reshape(3, -1).to(f32)
            box[:, 3:6] = (torch.exp(sz) if size_activation == "exp" else sz).T
            box[:, 6] = torch.atan2(rotation[b, 0], rotation[b, 1]).reshape(-1)
            if velocity is not None:
                box[:, 7:9] = velocity[b].reshape(2, -1).T
            keep = (cand_score >= score_threshold) & cand_peak
            if post_center_range is not None:
                r = post_center_range
                inside = ((box[:, 0] >= r[0]) & (box[:, 0] <= r[3]) & (box[:, 1] >= r[1]) & (box[:, 1] <= r[4]) &
                          (box[:, 2] >= r[2]) & (box[:, 2] <= r[5]))
                keep &= inside[cand_pixel]
            idx = torch.nonzero(keep).flatten()
            order = torch.sort(cand_score[idx], descending=True, stable=True).indices[:K]
            idx = idx[order]
            n = idx.numel()
            boxes[b, :n] = box[cand_pixel[idx]]
            scores[b, :n] = cand_score[idx]
            labels[b, :n] = cand_label[idx].to(torch.int32)
            counts[b] = n
        ctx.mark_non_differentiable(boxes, scores, labels, counts)
        return boxes, scores, labels, counts

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * 16

    @staticmethod
    def symbolic(g, heatmap, offset, height, size, rotation, velocity, voxel_size, point_cloud_range,
                 out_size_factor, score_threshold=0.1, post_center_range=None, max_detections=1000,
                 heatmap_activation="sigmoid", size_activation="exp", peak_kernel=1, candidates="pixel"):
        kw = dict(voxel_size_f=[float(v) for v in voxel_size],
                  point_cloud_range_f=[float(v) for v in point_cloud_range],
                  out_size_factor_f=float(out_size_factor), score_threshold_f=float(score_threshold),
                  max_detections_i=int(max_detections), heatmap_activation_s=heatmap_activation,
                  size_activation_s=size_activation, peak_kernel_i=int(peak_kernel), candidates_s=candidates)
        if post_center_range is not None:
            kw["post_center_range_f"] = [float(v) for v in post_center_range]
        args = [heatmap, offset, height, size, rotation] + ([velocity] if velocity is not None else [])
        return g.op("pointrt::CenterPointDecode", *args, outputs=4, **kw)


# ----------------------------------------------------------------------------- rotated IoU
def _corners(b: np.ndarray) -> np.ndarray:
    f = np.float32
    hx, hy = b[3] / f(2), b[4] / f(2)
    raw = np.array([[b[0] - hx, b[1] - hy], [b[0] + hx, b[1] - hy], [b[0] + hx, b[1] + hy], [b[0] - hx, b[1] + hy]],
                   dtype=f)
    c, s = np.cos(b[6]), np.sin(b[6])
    d = raw - b[:2]
    out = np.stack([d[:, 0] * c + d[:, 1] * (-s) + b[0], d[:, 0] * s + d[:, 1] * c + b[1]], 1).astype(f)
    return np.concatenate([out, out[:1]])


def _cross(p1, p2, p0):
    return (p1[0] - p0[0]) * (p2[1] - p0[1]) - (p2[0] - p0[0]) * (p1[1] - p0[1])


def _inside(box, p) -> bool:
    c, s = np.cos(-box[6]), np.sin(-box[6])
    rx = (p[0] - box[0]) * c + (p[1] - box[1]) * (-s)
    ry = (p[0] - box[0]) * s + (p[1] - box[1]) * c
    return bool(abs(rx) < box[3] / 2 + np.float32(1e-2) and abs(ry) < box[4] / 2 + np.float32(1e-2))


def _crossing(p1, p0, q1, q0):
    if not (min(p0[0], p1[0]) <= max(q0[0], q1[0]) and min(q0[0], q1[0]) <= max(p0[0], p1[0]) and
            min(p0[1], p1[1]) <= max(q0[1], q1[1]) and min(q0[1], q1[1]) <= max(p0[1], p1[1])):
        return None
    s1, s2 = _cross(q0, p1, p0), _cross(p1, q1, p0)
    s3, s4 = _cross(p0, q1, q0), _cross(q1, p1, q0)
    if not (s1 * s2 > 0 and s3 * s4 > 0):
        return None
    s5 = _cross(q1, p1, p0)
    if abs(s5 - s1) > 1e-8:
        return np.array([(s5 * q0[0] - s1 * q1[0]) / (s5 - s1), (s5 * q0[1] - s1 * q1[1]) / (s5 - s1)], np.float32)
    a0, b0, c0 = p0[1] - p1[1], p1[0] - p0[0], p0[0] * p1[1] - p1[0] * p0[1]
    a1, b1, c1 = q0[1] - q1[1], q1[0] - q0[0], q0[0] * q1[1] - q1[0] * q0[1]
    d = a0 * b1 - a1 * b0
    return np.array([(b0 * c1 - b1 * c0) / d, (a1 * c0 - a0 * c1) / d], np.float32)


def bev_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Rotated BEV IoU of two (x, y, z, dx, dy, dz, yaw, ...) boxes, CUDA-CenterPoint's devIoU rules."""
    a = np.asarray(a, np.float32)[:7]
    b = np.asarray(b, np.float32)[:7]
    ca, cb = _corners(a), _corners(b)
    pts = []
    for i in range(4):
        for j in range(4):
            p = _crossing(ca[i + 1], ca[i], cb[j + 1], cb[j])
            if p is not None:
                pts.append(p)
    for k in range(4):
        if _inside(a, cb[k]):
            pts.append(cb[k])
        if _inside(b, ca[k]):
            pts.append(ca[k])
    if not pts:
        return 0.0
    p = np.array(pts, np.float32)
    centre = p.mean(0)
    ang = np.arctan2(p[:, 1] - centre[1], p[:, 0] - centre[0])
    p = p[np.argsort(ang, kind="stable")]
    u, v = p[1:-1] - p[0], p[2:] - p[0]
    area = float(np.sum(u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0])) if len(p) > 2 else 0.0
    overlap = abs(area) / 2
    return overlap / max(float(a[3] * a[4] + b[3] * b[4]) - overlap, 1e-8)


class BoxNMS(UntracedFunction):
    """``num [B], boxes [B,M,D], scores [B,M], labels [B,M] = BoxNMS(boxes [B,K,D], scores [B,K],
    labels=None, count=None; mode="rotated", iou_threshold=0.2, min_radius=None, max_output=83,
    per_class=0)``: greedy, score descending with ties to the lower index."""

    @staticmethod
    @untraced
    def forward(ctx, boxes, scores, labels, count, mode="rotated", iou_threshold=0.2, min_radius=None,
                max_output=83, per_class=0):
        op = "BoxNMS"
        if boxes.dim() != 3 or boxes.shape[2] < 7:
            raise _err(op, f"input 'boxes' must be [B, K, D >= 7], got {list(boxes.shape)}")
        if mode == "circle" and min_radius is None:
            raise _err(op, "mode 'circle' needs the attribute 'min_radius'")
        B, K, D = boxes.shape
        M = int(max_output)
        out_n = torch.zeros((B,), dtype=torch.int32)
        out_b = torch.zeros((B, M, D), dtype=torch.float32)
        out_s = torch.zeros((B, M), dtype=torch.float32)
        out_l = torch.full((B, M), -1, dtype=torch.int32)
        for b in range(B):
            used = K if count is None else int(count[b])
            bx = boxes[b, :used].float().numpy()
            sc = scores[b, :used].float().numpy()
            lb = labels[b, :used].numpy() if labels is not None else np.zeros(used, np.int64)
            order = [int(i) for i in np.argsort(-sc, kind="stable") if not np.isnan(sc[i])]
            suppressed = np.zeros(used, bool)
            kept = []
            for oi, i in enumerate(order):
                if len(kept) >= M:
                    break
                if suppressed[i]:
                    continue
                kept.append(i)
                for j in order[oi + 1:]:
                    if suppressed[j] or (per_class and lb[i] != lb[j]):
                        continue
                    if mode == "circle":
                        dx, dy = bx[i, 0] - bx[j, 0], bx[i, 1] - bx[j, 1]
                        suppressed[j] = dx * dx + dy * dy <= np.float32(min_radius)
                    else:
                        suppressed[j] = bev_iou(bx[i], bx[j]) >= iou_threshold
            n = len(kept)
            out_n[b] = n
            if n:
                out_b[b, :n] = torch.from_numpy(bx[kept])
                out_s[b, :n] = torch.from_numpy(sc[kept])
                out_l[b, :n] = torch.from_numpy(lb[kept].astype(np.int32))
        ctx.mark_non_differentiable(out_n, out_b, out_s, out_l)
        return out_n, out_b, out_s, out_l

    @staticmethod
    def backward(ctx, *grads):
        return (None,) * 9

    @staticmethod
    def symbolic(g, boxes, scores, labels, count, mode="rotated", iou_threshold=0.2, min_radius=None,
                 max_output=83, per_class=0):
        kw = dict(mode_s=mode, iou_threshold_f=float(iou_threshold), max_output_i=int(max_output),
                  per_class_i=int(per_class))
        if min_radius is not None:
            kw["min_radius_f"] = float(min_radius)
        if labels is None and count is not None:
            raise _err("BoxNMS", "export with a count needs the labels too (ONNX inputs are positional)")
        args = [boxes, scores] + [t for t in (labels, count) if t is not None]
        return g.op("pointrt::BoxNMS", *args, outputs=4, **kw)


def center_point_decode(heatmap, offset, height, size, rotation, velocity=None, *, voxel_size, point_cloud_range,
                        out_size_factor, score_threshold=0.1, post_center_range=None, max_detections=1000,
                        heatmap_activation="sigmoid", size_activation="exp", peak_kernel=1, candidates="pixel"):
    return CenterPointDecode.apply(heatmap, offset, height, size, rotation, velocity, list(voxel_size),
                                   list(point_cloud_range), out_size_factor, score_threshold, post_center_range,
                                   max_detections, heatmap_activation, size_activation, peak_kernel, candidates)


def box_nms(boxes, scores, labels=None, count=None, *, mode="rotated", iou_threshold=0.2,
            min_radius: Optional[float] = None, max_output=83, per_class=0):
    return BoxNMS.apply(boxes, scores, labels, count, mode, iou_threshold, min_radius, max_output, per_class)


def decode_and_nms(heads: Tuple[torch.Tensor, ...], *, voxel_size, point_cloud_range, out_size_factor,
                   score_threshold=0.1, post_center_range=None, max_detections=1000, heatmap_activation="sigmoid",
                   size_activation="exp", peak_kernel=1, candidates="pixel", nms_mode="rotated",
                   iou_threshold=0.2, min_radius=None, max_output=83, per_class=0):
    """CenterPoint head outputs (heatmap, offset, height, size, rotation[, velocity]) ->
    (num_detections, boxes, scores, labels)."""
    heatmap, offset, height, size, rotation = heads[:5]
    velocity = heads[5] if len(heads) > 5 else None
    boxes, scores, labels, count = center_point_decode(
        heatmap, offset, height, size, rotation, velocity, voxel_size=voxel_size, point_cloud_range=point_cloud_range,
        out_size_factor=out_size_factor, score_threshold=score_threshold, post_center_range=post_center_range,
        max_detections=max_detections, heatmap_activation=heatmap_activation, size_activation=size_activation,
        peak_kernel=peak_kernel, candidates=candidates)
    return box_nms(boxes, scores, labels, count, mode=nms_mode, iou_threshold=iou_threshold, min_radius=min_radius,
                   max_output=max_output, per_class=per_class)
