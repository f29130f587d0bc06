"""The 6D pose demo: one ONNX file from an RGB-D frame to object poses, run by pointrt.

1. `pointrt inspect` the trained file (CNN + PointNet++ + fusion + MeanShift + RigidFit);
2. render held-out frames (models/pose_synth.py, seeds never used in training), run the file with
   the runtime's Python bindings and print ADD-S per object, the fraction under 10% of the
   object's diameter and the ADD-S AUC (pointrt.metrics);
3. `pointrt run --eval --render` on one frame: the CLI's own evaluation and a picture.

    python models/demo_pose/run_demo.py [--frames 50]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "models" / "demo_pose"
CLI = ROOT / "build" / "pointrt"
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

from models.common import run_cli  # noqa: E402

from models import pose_synth as ps  # noqa: E402
from pointrt import metrics  # noqa: E402


HELD_OUT_SEED0 = ps.HELD_OUT_SEED0
NUM_POINTS = 3072


def sh(*args) -> str:
    return run_cli(ROOT, *args)


def frame_files(seed: int, workdir: Path, scene: dict) -> tuple:
    """The frame's inputs and ground truth as the CLI reads them (.npz); frames like the training
    frames (scene.npz's layout and colours)."""
    layout, colours = ps.scene_kind(scene)
    frame = ps.render_frame(seed, layout=layout, colours=colours)
    x = ps.network_inputs(frame, NUM_POINTS, seed)
    inputs = dict(rgb=x["rgb"][None], cloud=x["cloud"][None], choose=x["choose"][None])
    classes = len(ps.CLASSES)
    gt_poses = np.zeros((classes, 3, 4), np.float32)
    present = np.zeros(classes, bool)
    for cls, pose in zip(frame["classes"], frame["poses"]):
        gt_poses[cls], present[cls] = pose, True
    gt = dict(gt_poses=gt_poses, gt_present=present, model_points=scene["model_points"],
              diameters=scene["diameters"], camera=scene["camera"])
    np.savez(workdir / f"frame_{seed}.npz", **inputs)
    np.savez(workdir / f"gt_{seed}.npz", **gt)
    return inputs, gt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=50)
    a = ap.parse_args()
    model = DEMO / "pose_demo.onnx"
    scene = dict(np.load(DEMO / "scene.npz"))
    print("== 1. the model: one file from an RGB-D frame to poses\n")
    print(sh(CLI, "inspect", model))

    print(f"== 2. {a.frames} held-out frames (seeds {HELD_OUT_SEED0}..), {len(ps.OBJECTS)} objects each\n")
    from pointrt import _pointrt
    session = _pointrt.Session(str(model), threads=2)
    work = Path("/tmp") / "pointrt_pose_demo"
    work.mkdir(exist_ok=True)
    adds = {c: [] for c in range(1, len(ps.CLASSES))}
    times = []
    for i in range(a.frames):
        inputs, gt = frame_files(HELD_OUT_SEED0 + i, work, scene)
        t0 = time.perf_counter()
        out = session.run(inputs)
        times.append(time.perf_counter() - t0)
        for c in adds:
            if not gt["gt_present"][c]:
                continue
            found = out["pose_status"][0, c] == 0
            d = metrics.add_s(out["poses"][0, c], gt["gt_poses"][c], scene["model_points"][c]) if found else np.inf
            adds[c].append(d)
    print(f"{'object':10s} {'diameter':>9s} {'mean ADD-S':>11s} {'< 10% diam.':>12s} {'ADD-S AUC':>10s}")
    passed = total = 0
    for c, d in adds.items():
        d = np.array(d)
        diam = float(scene["diameters"][c])
        ok = d < 0.1 * diam
        passed, total = passed + ok.sum(), total + len(d)
        finite = d[np.isfinite(d)]
        print(f"{ps.CLASSES[c]:10s} {diam * 1000:7.1f}mm {finite.mean() * 1000 if len(finite) else np.inf:9.1f}mm "
              f"{ok.mean() * 100:11.1f}% {metrics.pose_auc(d):10.1f}")
    print(f"\nall objects: {passed}/{total} = {passed / total * 100:.1f}% with ADD-S under 10% of the diameter "
          f"(goal: 80%); median run {np.median(times) * 1000:.0f} ms per frame (2 threads)\n")

    print("== 3. the CLI on one frame: --eval and --render\n")
    seed = HELD_OUT_SEED0
    print(sh(CLI, "run", model, "--input", work / f"frame_{seed}.npz", "--eval", work / f"gt_{seed}.npz",
             "--labels", DEMO / "labels.txt", "--render", work / "frame.png"))
    print(f"picture: {work / 'frame.png'} (the committed example: {DEMO / 'frame.png'})")


if __name__ == "__main__":
    main()
