"""The detection demo: one ONNX file from a LiDAR scan to boxes, run by pointrt.

1. `pointrt inspect` the trained file (Voxelize + encoder + ScatterDense + BEV CNN + CenterPoint
   head + CenterPointDecode + BoxNMS);
2. synthesise held-out scans (models/lidar_synth.py, seeds never used in training), run the file
   with the runtime's Python bindings and print AP per class and the mAP at 3D IoU 0.5 (and in
   the bird's-eye view), with pointrt.metrics;
3. `pointrt run --eval --render` on one scan: the CLI's evaluation and a bird's-eye picture.

    python models/demo_det/run_demo.py [--scans 50]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "models" / "demo_det"
CLI = ROOT / "build" / "pointrt"
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

from models.common import run_cli  # noqa: E402

from models import lidar_synth as ls  # noqa: E402
from pointrt import metrics  # noqa: E402

HELD_OUT_SEED0 = 100_000


def sh(*args) -> str:
    return run_cli(ROOT, *args)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scans", type=int, default=50)
    a = ap.parse_args()
    model = DEMO / "detector_demo.onnx"
    print("== 1. the model: one file from a LiDAR scan to boxes\n")
    print(sh(CLI, "inspect", model))

    print(f"== 2. {a.scans} held-out scans (seeds {HELD_OUT_SEED0}..)\n")
    from pointrt import _pointrt
    session = _pointrt.Session(str(model), threads=2)
    scans, times = [], []
    for i in range(a.scans):
        scan, gt_boxes, gt_labels = ls.synth_labelled_scan(HELD_OUT_SEED0 + i)
        t0 = time.perf_counter()
        out = session.run({"points": scan})
        times.append(time.perf_counter() - t0)
        n = int(out["num_detections"][0])
        scans.append((out["boxes"][0, :n], out["scores"][0, :n], out["labels"][0, :n], gt_boxes, gt_labels))
    classes = range(len(ls.DETECTION_CLASSES))
    ap3d = metrics.detection_ap(scans, classes, 0.5, metrics.box_iou_3d)
    apbev = metrics.detection_ap(scans, classes, 0.5, metrics.box_iou_bev)
    gt_count = {c: int(sum((s[4] == c).sum() for s in scans)) for c in classes}
    print(f"{'class':12s} {'objects':>8s} {'AP 3D@0.5':>10s} {'AP BEV@0.5':>11s}")
    for c in classes:
        print(f"{ls.DETECTION_CLASSES[c]:12s} {gt_count[c]:8d} {ap3d[c] * 100:9.1f}% {apbev[c] * 100:10.1f}%")
    print(f"\nmAP at 3D IoU 0.5: {np.mean(list(ap3d.values())) * 100:.1f}%  (BEV: "
          f"{np.mean(list(apbev.values())) * 100:.1f}%); median run {np.median(times) * 1000:.0f} ms per scan\n")

    print("== 3. the CLI on one scan: --eval and --render\n")
    scan, gt_boxes, gt_labels = ls.synth_labelled_scan(HELD_OUT_SEED0)
    work = Path("/tmp") / "pointrt_det_demo"
    work.mkdir(exist_ok=True)
    np.save(work / "scan.npy", scan)
    np.savez(work / "gt.npz", gt_boxes=gt_boxes, gt_labels=gt_labels)
    print(sh(CLI, "run", model, "--input", f"points={work / 'scan.npy'}", "--eval", work / "gt.npz",
             "--labels", DEMO / "labels.txt", "--render", work / "scan.png"))
    print(f"picture: {work / 'scan.png'} (the committed example: {DEMO / 'scan.png'})")


if __name__ == "__main__":
    main()
