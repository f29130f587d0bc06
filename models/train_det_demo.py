"""Trains the detection demo: a small CenterPoint-style detector for cars and pedestrians on
synthetic LiDAR scans (models/lidar_synth.py), exported with its decode as one file: scan in,
boxes out.

    nice -n 10 python models/train_det_demo.py [--minutes 25] [--threads 2] [--out models/demo_det]

Network: Voxelize (0.2 x 0.2 x 0.5 m over x 0..32, y -16..16, z -2.5..1.5) -> a per-voxel encoder
(the voxel mean and its offset from the voxel centre, a linear layer) -> ScatterDense to
[16 x 8 heights] x 160 x 160 -> a two-scale BEV CNN at 80 x 80 (stride 2) -> CenterPoint's head
(class heatmaps, sub-pixel offset, height, log size, sin/cos yaw) -> CenterPointDecode (3x3 peaks)
-> BoxNMS (rotated, per class). CenterNet's focal loss on the heatmaps, L1 on the regression at
the object centres (CenterPoint's targets and Gaussian radii). Writes `detector_demo.onnx`,
`detector_demo.pt` and `training.json` (settings, wall time, load average, loss curve).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from typing import Dict, List, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, ROOT)

from models import lidar_synth as ls  # noqa: E402
from models.common import demo_cache_path, training_clock, write_training_record  # noqa: E402
from pointrt.torch import detect  # noqa: E402
from pointrt.torch import sparse as sp  # noqa: E402

VOXEL = [0.2, 0.2, 0.5]
RANGE = [0.0, -16.0, -2.5, 32.0, 16.0, 1.5]
GRID = sp.voxel_grid_shape(VOXEL, RANGE)  # x, y, z = 160, 160, 8
STRIDE = 2
CLASSES = ls.DETECTION_CLASSES
OUTPUT_NAMES = ["num_detections", "boxes", "scores", "labels"]
TRAIN_SEED0, TEST_SEED0 = 0, 100_000


def _conv(c_in: int, c_out: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(inplace=True))


class SmallCenterPoint(nn.Module):
    """forward(points [P, 4]) -> heads, or with decode=True the boxes (OUTPUT_NAMES)."""

    def __init__(self, decode: bool = False, encoder: int = 16, width: int = 64):
        super().__init__()
        self.decode = decode
        self.encoder = nn.Linear(7, encoder)
        gx, gy, gz = GRID
        self.bev_in = _conv(encoder * gz, width, 2)
        self.block1 = nn.Sequential(_conv(width, width), _conv(width, width))
        self.block2 = nn.Sequential(_conv(width, 2 * width, 2), _conv(2 * width, 2 * width))
        self.up2 = nn.Sequential(nn.ConvTranspose2d(2 * width, width, 2, 2, bias=False), nn.BatchNorm2d(width),
                                 nn.ReLU(inplace=True))
        self.shared = _conv(2 * width, width)
        outs = {"heatmap": len(CLASSES), "offset": 2, "height": 1, "size": 3, "rotation": 2}
        self.heads = nn.ModuleDict({k: nn.Sequential(nn.Conv2d(width, width, 1), nn.ReLU(inplace=True),
                                                     nn.Conv2d(width, c, 1)) for k, c in outs.items()})
        self.heads["heatmap"][-1].bias.data.fill_(-2.19)  # CenterNet's prior: sigmoid = 0.1

    @staticmethod
    def voxelize(points: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        feats, coords, _ = sp.voxelize(points, VOXEL, RANGE, 8, 40000)
        # the voxel mean and its offset from the voxel centre (coords are (0, z, y, x))
        centre = (coords[:, [3, 2, 1]].to(torch.float32) + 0.5) * torch.tensor(VOXEL) + torch.tensor(RANGE[:3])
        return torch.cat([feats, feats[:, :3] - centre], 1), coords

    def heads_from_voxels(self, feats: torch.Tensor, coords: torch.Tensor, batch: int) -> Tuple[torch.Tensor, ...]:
        gx, gy, gz = GRID
        x = sp.scatter_dense(F.relu(self.encoder(feats)), coords, [gz, gy, gx], batch)  # [B, C, Z, Y, X]
        b, c, z, h, w = x.shape
        a = self.block1(self.bev_in(x.reshape(b, c * z, h, w)))
        f = self.shared(torch.cat([a, self.up2(self.block2(a))], 1))
        return tuple(torch.sigmoid(h(f)) if k == "heatmap" else h(f) for k, h in self.heads.items())

    def forward(self, points: torch.Tensor):
        feats, coords = self.voxelize(points)
        heads = self.heads_from_voxels(feats, coords, 1)
        if not self.decode:
            return heads
        return detect.decode_and_nms(heads, voxel_size=VOXEL[:2], point_cloud_range=RANGE, out_size_factor=STRIDE,
                                     score_threshold=0.1, post_center_range=[RANGE[0], RANGE[1], -5, RANGE[3], RANGE[4], 3],
                                     max_detections=200, heatmap_activation="none", peak_kernel=3, iou_threshold=0.1,
                                     max_output=60, per_class=1)


# ----------------------------------------------------------------------------- targets

def gaussian_radius(height: float, width: float, min_overlap: float = 0.1) -> float:
    """CenterNet's radius for a box of height x width cells (the smallest of its three cases)."""
    b1, c1 = height + width, width * height * (1 - min_overlap) / (1 + min_overlap)
    r1 = (b1 + math.sqrt(b1 ** 2 - 4 * c1)) / 2
    b2, c2 = 2 * (height + width), (1 - min_overlap) * width * height
    r2 = (b2 + math.sqrt(b2 ** 2 - 16 * c2)) / 2
    a3, b3, c3 = 4 * min_overlap, -2 * min_overlap * (height + width), (min_overlap - 1) * width * height
    r3 = (b3 + math.sqrt(b3 ** 2 - 4 * a3 * c3)) / 2
    return min(r1, r2, r3)


def targets(boxes: np.ndarray, labels: np.ndarray) -> Dict[str, np.ndarray]:
    """CenterPoint's training targets at stride 2: heatmaps [C, H, W], and per object its centre
    cell, the regression (offset 2, height 1, log size 3, sin/cos 2) and a mask."""
    gx, gy = GRID[0] // STRIDE, GRID[1] // STRIDE
    cell_x, cell_y = VOXEL[0] * STRIDE, VOXEL[1] * STRIDE
    heat = np.zeros((len(CLASSES), gy, gx), np.float32)
    ys, xs = np.mgrid[0:gy, 0:gx]
    index, reg = [], []
    for b, c in zip(boxes, labels):
        fx, fy = (b[0] - RANGE[0]) / cell_x, (b[1] - RANGE[1]) / cell_y
        ix, iy = int(fx), int(fy)
        if not (0 <= ix < gx and 0 <= iy < gy):
            continue
        radius = max(2, int(gaussian_radius(b[4] / cell_y, b[3] / cell_x)))
        sigma = (2 * radius + 1) / 6
        g = np.exp(-((xs - ix) ** 2 + (ys - iy) ** 2) / (2 * sigma * sigma))
        g[(np.abs(xs - ix) > radius) | (np.abs(ys - iy) > radius)] = 0
        heat[c] = np.maximum(heat[c], g)
        index.append(iy * gx + ix)
        reg.append([fx - ix, fy - iy, b[2], math.log(b[3]), math.log(b[4]), math.log(b[5]), math.sin(b[6]),
                    math.cos(b[6])])
    return dict(heat=heat, index=np.array(index, np.int64), reg=np.array(reg, np.float32).reshape(-1, 8))


def focal_loss(pred: torch.Tensor, gt: torch.Tensor) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss, normalised by the number of objects."""
    pred = pred.clamp(1e-4, 1 - 1e-4)
    pos = gt.eq(1).float()
    pos_loss = torch.log(pred) * (1 - pred) ** 2 * pos
    neg_loss = torch.log(1 - pred) * pred ** 2 * (1 - gt) ** 4 * (1 - pos)
    return -(pos_loss.sum() + neg_loss.sum()) / pos.sum().clamp(min=1)


def make_sample(seed: int) -> Dict[str, object]:
    scan, boxes, labels = ls.synth_labelled_scan(seed)
    feats, coords = SmallCenterPoint.voxelize(torch.from_numpy(scan))
    return dict(feats=feats, coords=coords, **targets(boxes, labels))


def batch_loss(model: SmallCenterPoint, samples: List[Dict[str, object]]) -> Tuple[torch.Tensor, Dict[str, float]]:
    coords = []
    for b, s in enumerate(samples):
        c = s["coords"].clone()
        c[:, 0] = b
        coords.append(c)
    heads = model.heads_from_voxels(torch.cat([s["feats"] for s in samples]), torch.cat(coords), len(samples))
    heat = torch.from_numpy(np.stack([s["heat"] for s in samples]))
    hm_loss = focal_loss(heads[0], heat)
    reg_pred = torch.cat(heads[1:], 1).flatten(2)  # [B, 8, H*W]
    preds, wants = [], []
    for b, s in enumerate(samples):
        if len(s["index"]):
            preds.append(reg_pred[b][:, torch.from_numpy(s["index"])].T)
            wants.append(torch.from_numpy(s["reg"]))
    reg_loss = F.l1_loss(torch.cat(preds), torch.cat(wants)) if preds else heads[0].sum() * 0
    return hm_loss + 2.0 * reg_loss, dict(heatmap=float(hm_loss), regression=float(reg_loss))


def train(minutes: float, cpu_budget: bool, threads: int, scans: int, batch: int, seed: int) -> Tuple[SmallCenterPoint, dict]:
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    t0 = time.time()
    cache = demo_cache_path(f"det_{scans}.pt")
    if os.path.exists(cache):
        pool = torch.load(cache)
    else:
        pool = [make_sample(TRAIN_SEED0 + i) for i in range(scans)]
        torch.save(pool, cache)
    data_s = time.time() - t0
    model = SmallCenterPoint().train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-2)
    budget, start, cpu0, step, loads, curve = minutes * 60, time.time(), time.process_time(), 0, [], []
    elapsed = training_clock(cpu_budget, threads)
    rng = np.random.default_rng(seed)
    while elapsed() < budget:
        frac = elapsed() / budget
        for g in opt.param_groups:
            g["lr"] = 2e-3 * 0.5 * (1 + math.cos(math.pi * min(frac, 1.0))) + 1e-5
        loss, parts = batch_loss(model, [pool[i] for i in rng.choice(len(pool), batch, replace=False)])
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 20 == 0:
            loads.append(os.getloadavg()[0])
            curve.append(dict(step=step, seconds=round(time.time() - start, 1), **{k: round(v, 5) for k, v in parts.items()}))
            print(f"step {step} {time.time() - start:7.1f}s {parts}", flush=True)
    facts = dict(scans=scans, batch=batch, steps=step, epochs=round(step * batch / scans, 2),
                 train_seconds=round(time.time() - start, 1),
                 train_cpu_seconds=round(time.process_time() - cpu0, 1), budget="cpu" if cpu_budget else "wall", data_seconds=round(data_s, 1), threads=threads,
                 load_average_mean=round(float(np.mean(loads)), 2) if loads else None,
                 load_average_max=round(float(np.max(loads)), 2) if loads else None,
                 parameters=sum(p.numel() for p in model.parameters()), curve=curve)
    return model.eval(), facts


def export(model: SmallCenterPoint, path: str) -> None:
    full = SmallCenterPoint(decode=True)
    full.load_state_dict(model.state_dict())
    full.eval()
    scan, _, _ = ls.synth_labelled_scan(TEST_SEED0 - 1)
    torch.onnx.export(full, (torch.from_numpy(scan),), path, input_names=["points"], output_names=OUTPUT_NAMES,
                      opset_version=13, custom_opsets={"pointrt": 1}, dynamic_axes={"points": {0: "P"}})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=25.0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--budget", choices=["cpu", "wall"], default="cpu",
                    help="cpu: --minutes of CPU time per thread (what an idle machine does in that wall time)")
    ap.add_argument("--scans", type=int, default=600)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--prepare-only", action="store_true", help="generate (and cache) the training data, then stop")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "demo_det"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    wall = time.time()
    if a.prepare_only:
        return train(0, False, a.threads, a.scans, a.batch, a.seed) and None
    model, facts = train(a.minutes, a.budget == "cpu", a.threads, a.scans, a.batch, a.seed)
    torch.save(model.state_dict(), os.path.join(a.out, "detector_demo.pt"))
    export(model, os.path.join(a.out, "detector_demo.onnx"))
    write_training_record(a.out, facts, wall, sys.argv)


if __name__ == "__main__":
    main()
