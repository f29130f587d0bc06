"""Accuracy metrics for the pipelines' answers: 6D poses (ADD, ADD-S, their AUC) and 3D boxes
(rotated IoU, average precision). numpy only; ``pointrt run --eval`` computes the same in C++
(tools/pipeline_eval.cc; tests/python/test_metrics.py checks that both agree).

Poses are ``[R | t]`` arrays [3, 4] mapping model points to the camera: ``p_cam = R p + t``.
Boxes are ``(x, y, z, dx, dy, dz, yaw, ...)`` with z the box centre, dx along the heading and yaw
counter-clockwise from +x.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

import numpy as np

__all__ = ["transform", "add", "add_s", "pose_auc", "box_iou_bev", "box_iou_3d", "average_precision",
           "detection_ap"]


def transform(pose: np.ndarray, points: np.ndarray) -> np.ndarray:
    pose = np.asarray(pose, np.float64)
    return np.asarray(points, np.float64) @ pose[:, :3].T + pose[:, 3]


def add(pred: np.ndarray, gt: np.ndarray, points: np.ndarray) -> float:
    """ADD (Hinterstoisser et al.): mean distance between the model points under both poses."""
    return float(np.linalg.norm(transform(pred, points) - transform(gt, points), axis=1).mean())


def add_s(pred: np.ndarray, gt: np.ndarray, points: np.ndarray, chunk: int = 2048) -> float:
    """ADD-S (PoseCNN): mean over the ground-truth-posed points of the distance to the closest
    point of the predicted-posed model (the metric for symmetric objects)."""
    p, g = transform(pred, points), transform(gt, points)
    best = np.empty(len(g))
    for s in range(0, len(g), chunk):
        d2 = ((g[s:s + chunk, None, :] - p[None, :, :]) ** 2).sum(-1)
        best[s:s + chunk] = np.sqrt(d2.min(1))
    return float(best.mean())


def pose_auc(distances: Sequence[float], max_distance: float = 0.1) -> float:
    """The area under the accuracy-threshold curve for thresholds 0 .. max_distance, in percent,
    as the YCB-Video evaluation (PoseCNN's VOCap, used by PVN3D's cal_auc): distances above
    max_distance never count; the sorted distances d_1 <= .. <= d_n give accuracy k/n on
    (d_{k-1}, d_k] (the right end of each step), and the area is normalised by max_distance."""
    d = np.sort(np.asarray(distances, np.float64))
    n = len(d)
    if n == 0:
        return 0.0
    d = d[d <= max_distance]
    if len(d) == 0:
        return 0.0
    edges = np.concatenate([[0.0], d, [max_distance]])
    acc = np.concatenate([np.arange(1, len(d) + 1) / n, [len(d) / n]])
    return float(np.sum(np.diff(edges) * acc) / max_distance * 100)


# ----------------------------------------------------------------------------- boxes

def _corners_bev(b: np.ndarray) -> np.ndarray:
    c, s = np.cos(b[6]), np.sin(b[6])
    hx, hy = b[3] / 2, b[4] / 2
    local = np.array([[-hx, -hy], [hx, -hy], [hx, hy], [-hx, hy]])
    return local @ np.array([[c, s], [-s, c]]) + b[:2]


def _clip(subject: np.ndarray, clip: np.ndarray) -> np.ndarray:
    """Sutherland-Hodgman: the part of convex polygon `subject` inside convex CCW `clip`."""
    out = list(subject)
    for i in range(len(clip)):
        a, b = clip[i], clip[(i + 1) % len(clip)]
        side = lambda p: (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
        src, out = out, []
        for j in range(len(src)):
            p, q = src[j], src[(j + 1) % len(src)]
            sp, sq = side(p), side(q)
            if sp >= 0:
                out.append(p)
            if (sp >= 0) != (sq >= 0):
                out.append(p + sp / (sp - sq) * (q - p))
        if not out:
            break
    return np.array(out)


def _area(poly: np.ndarray) -> float:
    if len(poly) < 3:
        return 0.0
    x, y = poly[:, 0], poly[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2)


def _bev_overlap(a: np.ndarray, b: np.ndarray) -> float:
    return _area(_clip(_corners_bev(a), _corners_bev(b)))


def box_iou_bev(a: Sequence[float], b: Sequence[float]) -> float:
    """Exact rotated bird's-eye-view IoU (polygon clipping in float64)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    inter = _bev_overlap(a, b)
    union = a[3] * a[4] + b[3] * b[4] - inter
    return inter / union if union > 0 else 0.0


def box_iou_3d(a: Sequence[float], b: Sequence[float]) -> float:
    """Exact 3D IoU of yawed boxes: BEV overlap times the overlap of the z ranges."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    dz = min(a[2] + a[5] / 2, b[2] + b[5] / 2) - max(a[2] - a[5] / 2, b[2] - b[5] / 2)
    if dz <= 0:
        return 0.0
    inter = _bev_overlap(a, b) * dz
    union = a[3] * a[4] * a[5] + b[3] * b[4] * b[5] - inter
    return inter / union if union > 0 else 0.0


def average_precision(scores: np.ndarray, true_positive: np.ndarray, num_gt: int) -> float:
    """All-point interpolated AP (PASCAL VOC 2010+): the area under the precision-recall curve
    with precision made monotone from the right."""
    if num_gt == 0:
        return float("nan")
    order = np.argsort(-np.asarray(scores), kind="stable")
    tp = np.asarray(true_positive, np.float64)[order]
    ctp, cfp = np.cumsum(tp), np.cumsum(1 - tp)
    recall = ctp / num_gt
    precision = ctp / np.maximum(ctp + cfp, 1e-12)
    mrec = np.concatenate([[0.0], recall, [recall[-1] if len(recall) else 0.0]])
    mpre = np.concatenate([[0.0], precision, [0.0]])
    for i in range(len(mpre) - 2, -1, -1):
        mpre[i] = max(mpre[i], mpre[i + 1])
    steps = np.where(mrec[1:] != mrec[:-1])[0]
    return float(np.sum((mrec[steps + 1] - mrec[steps]) * mpre[steps + 1]))


def match_detections(boxes: np.ndarray, scores: np.ndarray, gt_boxes: np.ndarray, threshold: float,
                     iou=box_iou_3d) -> np.ndarray:
    """True-positive flags for one scan and one class: detections by descending score take the
    unmatched ground-truth box of the highest IoU >= threshold."""
    tp = np.zeros(len(boxes), bool)
    used = np.zeros(len(gt_boxes), bool)
    for i in np.argsort(-np.asarray(scores), kind="stable"):
        best, best_j = threshold, -1
        for j in range(len(gt_boxes)):
            if used[j]:
                continue
            v = iou(boxes[i], gt_boxes[j])
            if v >= best:
                best, best_j = v, j
        if best_j >= 0:
            used[best_j] = True
            tp[i] = True
    return tp


def detection_ap(scans: List[Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
                 classes: Sequence[int], threshold: float = 0.5, iou=box_iou_3d) -> Dict[int, float]:
    """AP per class over many scans. Each scan: (boxes [n, >=7], scores [n], labels [n],
    gt_boxes [g, >=7], gt_labels [g])."""
    result = {}
    for c in classes:
        all_scores, all_tp, num_gt = [], [], 0
        for boxes, scores, labels, gt_boxes, gt_labels in scans:
            mine, gt_mine = labels == c, gt_labels == c
            num_gt += int(gt_mine.sum())
            all_scores.append(scores[mine])
            all_tp.append(match_detections(boxes[mine], scores[mine], gt_boxes[gt_mine], threshold, iou))
        result[c] = average_precision(np.concatenate(all_scores), np.concatenate(all_tp), num_gt)
    return result
