"""Benchmarks of the pipelines' last stages (docs/benchmarks-pipelines.md).

    python bench/pipelines_bench.py pose [--threads 1 2]      # PVN3D's pose step, 22 classes, 12288 points
    python bench/pipelines_bench.py decode [--threads 1 2]    # detector run time with / without the decode

pose: a synthetic frame in PVN3D's format (12288 points, 8 keypoint + 1 centre offsets, 22-class
segmentation): the pose step alone as one pointrt file (MeanShift + RigidFit; `pointrt bench`), and
PVN3D's own algorithm in PyTorch eager (every vote shifted until all converge, as MeanShiftTorch,
then the SVD fit) on the same votes, for scale. Two layouts: 21 objects sharing all points (the
worst case for the O(n^2) density step), and a YCB-like frame (6 objects, 45% background).

decode: the SECOND/CenterPoint files of models/sparse_detectors.py exported with and without
CenterPointDecode + BoxNMS, timed by `pointrt bench` in one run; the overhead is the difference of
the medians.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "models"))
sys.path.insert(0, str(ROOT))
CLI = ROOT / "build" / "pointrt"

from pointrt.torch import pose as pose_ops  # noqa: E402


def bench_cli(model: Path, threads: int, iterations: int, inputs: Path = None, extra=()) -> float:
    args = [str(CLI), "bench", str(model), "--threads", str(threads), "-n", str(iterations), "--warmup", "2", *extra]
    if inputs is not None:
        args += ["--input", str(inputs)]
    out = subprocess.run(args, capture_output=True, text=True, env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    if out.returncode:
        sys.exit(out.stdout + out.stderr)
    return float(re.search(r"median ([\d.]+)", out.stdout).group(1))


# ----------------------------------------------------------------------------- pose step

def synthetic_frame(objects: int, background: float, n: int = 12288, classes: int = 22, seed: int = 0):
    """PVN3D-format network outputs for a frame with `objects` objects: votes 1 cm around the
    true keypoints with 10% outliers (the offsets are points - votes)."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n, np.int64)
    fg = rng.random(n) >= background
    labels[fg] = rng.integers(1, objects + 1, fg.sum())
    centres = rng.uniform([-0.3, -0.2, 0.6], [0.3, 0.2, 1.2], (classes, 3))
    kps = centres[:, None] + rng.uniform(-0.08, 0.08, (classes, 9, 3))
    kps[:, 8] = centres
    points = centres[labels] + rng.normal(0, 0.04, (n, 3))
    votes = kps[labels].transpose(1, 0, 2) + rng.normal(0, 0.01, (9, n, 3))
    outlier = rng.random((9, n)) < 0.1
    votes[outlier] += rng.normal(0, 0.2, (int(outlier.sum()), 3))
    offsets = points[None] - votes
    seg = np.full((classes, n), -4.0)
    seg[labels, np.arange(n)] = 4.0
    model_kps = (kps - centres[:, None]).astype(np.float32)
    return [torch.from_numpy(a[None].astype(np.float32)) for a in (points, offsets[:8], offsets[8:], seg)] + \
        [torch.from_numpy(model_kps)]


class PoseStep(torch.nn.Module):
    def __init__(self, model_kps):
        super().__init__()
        self.register_buffer("model_kps", model_kps)

    def forward(self, points, kp_of, ctr_of, seg):
        poses, status, _ = pose_ops.pose_from_votes(points, kp_of, ctr_of, seg, self.model_kps)
        return poses, status


def pvn3d_pose_step_torch(points, kp_of, ctr_of, seg, model_kps, bandwidth=0.08):
    """PVN3D's eval_one_frame_pose algorithm in eager PyTorch (our implementation of it): per
    class, MeanShiftTorch over the centre votes, the centre inliers' keypoint votes shifted the
    same way, then the SVD fit."""
    def mean_shift(a):
        c = a.clone()
        for _ in range(300):
            d2 = ((c[:, None] - a[None]) ** 2).sum(-1)
            w = torch.exp(-0.5 * d2 / bandwidth ** 2)
            new = (w @ a) / w.sum(1, keepdim=True)
            shift = (new - c).norm(dim=1).max()
            c = new
            if shift < bandwidth * 1e-3:
                break
        near = ((a[:, None] - a[None]) ** 2).sum(-1) < bandwidth ** 2
        best = int(near.sum(1).argmax())
        return c[best], near[best]

    labels = seg[0].argmax(0)
    votes = points[0][None] - torch.cat([kp_of[0], ctr_of[0]])
    poses = {}
    for cls in torch.unique(labels).tolist():
        if cls == 0:
            continue
        mask = labels == cls
        ctr, inl = mean_shift(votes[8][mask])
        kps = torch.stack([mean_shift(votes[k][mask][inl])[0] for k in range(8)] + [ctr])
        a, b = model_kps[cls].double(), kps.double()
        u, s, vt = torch.linalg.svd((a - a.mean(0)).T @ (b - b.mean(0)))
        r = vt.T @ u.T
        if torch.det(r) < 0:
            vt[2] *= -1
            r = vt.T @ u.T
        poses[cls] = (r, b.mean(0) - r @ a.mean(0))
    return poses


def bench_pose(threads, iterations: int, torch_runs: int = 3) -> dict:
    results = {}
    for name, objects, background in (("21 objects, no background", 21, 0.0), ("YCB-like: 6 objects, 45% background", 6, 0.45)):
        args = synthetic_frame(objects, background)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "pose_step.onnx"
            import pointrt
            pointrt.export(PoseStep(args[4]), tuple(args[:4]), str(path), input_names=["points", "kp_of", "ctr_of", "seg"],
                           output_names=["poses", "pose_status"], dynamic_points=False, verify=False, quiet=True)
            feeds = Path(tmp) / "feeds.npz"
            np.savez(feeds, points=args[0].numpy(), kp_of=args[1].numpy(), ctr_of=args[2].numpy(), seg=args[3].numpy())
            row = {f"pointrt_{t}t_ms": bench_cli(path, t, iterations, feeds) for t in threads}
        torch.set_num_threads(1)
        times = []
        for _ in range(torch_runs):  # about a minute each: every vote shifted until all converge
            t0 = time.perf_counter()
            pvn3d_pose_step_torch(*args)
            times.append((time.perf_counter() - t0) * 1000)
        if times:
            row["pytorch_pvn3d_1t_ms"] = float(np.median(times))
        results[name] = row
        print(name, json.dumps(row), flush=True)
    return results


# ----------------------------------------------------------------------------- decode overhead

def bench_decode(threads, iterations: int) -> dict:
    import sparse_detectors as sd
    from lidar_synth import synth_scan
    results = {}
    for name, ctor, preset in (("SECOND (KITTI)", sd.second_kitti, "kitti"),
                               ("CenterPoint (nuScenes)", sd.centerpoint_nuscenes, "nuscenes")):
        scan = synth_scan(preset, seed=0)
        with tempfile.TemporaryDirectory() as tmp:
            feeds = Path(tmp) / "scan.npz"
            np.savez(feeds, points=scan)
            paths = {}
            for decode in (False, True):
                torch.manual_seed(0)
                model = sd.randomize_batchnorm(ctor(decode=decode)).eval()
                paths[decode] = Path(tmp) / f"d{int(decode)}.onnx"
                names = sd.DETECTION_NAMES if decode else sd.OUTPUT_NAMES
                torch.onnx.export(model, (torch.from_numpy(scan),), str(paths[decode]), input_names=["points"],
                                  output_names=names, opset_version=13, custom_opsets={"pointrt": 1},
                                  dynamic_axes={"points": {0: "P"}})
            row = {}
            for t in threads:
                heads = bench_cli(paths[False], t, iterations, feeds)
                boxes = bench_cli(paths[True], t, iterations, feeds)
                row[f"{t}t"] = dict(heads_ms=heads, with_decode_ms=boxes, overhead_pct=round((boxes / heads - 1) * 100, 2))
        results[name] = row
        print(name, json.dumps(row), flush=True)
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["pose", "decode"])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--torch-runs", type=int, default=3,
                    help="pose: runs of the PyTorch PVN3D reference (about a minute each; 0 skips it)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    load = os.getloadavg()
    results = bench_pose(a.threads, a.iterations, a.torch_runs) if a.what == "pose" else bench_decode(a.threads, a.iterations)
    record = dict(what=a.what, results=results, load_average_before=load, load_average_after=os.getloadavg())
    print(json.dumps(record, indent=1))
    if a.json:
        Path(a.json).write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
