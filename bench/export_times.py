"""Export time and file size of the models in models/ with pointrt.export, per torch exporter.

    OMP_WAIT_POLICY=passive .venv/bin/python bench/export_times.py [--only "synthetic scan"] [--full]
    .venv-torch2/bin/python bench/export_times.py        # torch 2.x: both exporters

Prints one markdown row per (model, exporter): wall seconds of ``pointrt.export(verify=False)``,
file size, and the largest difference between the runtime and PyTorch on a second input (the
check the docs table reports). ``--full`` exports PVN3D-style full at 480x640 / 12288 points
(default: the CI size, 96x128 / 2048)."""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "python"), ROOT]

import pointrt  # noqa: E402
from pointrt import _pointrt  # noqa: E402
from pointrt._export_backends import dynamo_available  # noqa: E402


def _cloud(n, channels, seed):
    g = torch.Generator().manual_seed(seed)
    xyz = torch.rand(1, n, 3, generator=g) - 0.5
    return torch.cat([xyz, torch.rand(1, n, channels, generator=g)], -1) if channels else xyz


def cases(full: bool):
    from models import pvn3d_full
    from models.pointnet2_msg_seg import Pointnet2MSGSeg
    from models.pointnet2_ssg_cls import Pointnet2SSGCls
    from models.pvn3d_pointnet2 import Pointnet2MSG, example_input
    n, size = (pvn3d_full.NUM_POINTS, pvn3d_full.IMAGE_SIZE) if full else (2048, (96, 128))
    yield ("SSG classifier, 1024 points", lambda: Pointnet2SSGCls(num_classes=40),
           lambda s: (_cloud(1024, 0, s),), ["points"], ["logits"], {})
    yield ("MSG segmenter, 4096 points", lambda: Pointnet2MSGSeg(num_classes=13),
           lambda s: (_cloud(4096, 6, s),), ["points"], ["logits"], {})
    yield ("PVN3D point branch, 12288 points", lambda: Pointnet2MSG(6),
           lambda s: (example_input(12288, s),), ["pointcloud"], ["features"], {})
    yield (f"PVN3D-style full, {size[0]}x{size[1]}, {n} points", lambda: pvn3d_full.build(n),
           lambda s: pvn3d_full.example_inputs(n, size, s), pvn3d_full.INPUT_NAMES, pvn3d_full.OUTPUT_NAMES,
           {"dynamic_points": False})
    from models import sparse_detectors as sd
    from models.lidar_synth import synth_scan
    for label, ctor, preset in (("SECOND (KITTI)", sd.second_kitti, "kitti"),
                                ("CenterPoint (nuScenes)", sd.centerpoint_nuscenes, "nuscenes")):
        yield (f"{label}, full synthetic scan", lambda c=ctor: sd.randomize_batchnorm(c()),
               lambda s, p=preset: (torch.from_numpy(synth_scan(p, seed=s).copy()),), ["points"], sd.OUTPUT_NAMES,
               {"dynamic_axes": {"points": {0: "P"}}})


def measure(name, ctor, make_inputs, input_names, output_names, kw, exporter):
    torch.manual_seed(0)
    model = ctor().eval()
    path = os.path.join(tempfile.mkdtemp(), "m.onnx")
    t = time.perf_counter()
    try:
        report = pointrt.export(model, make_inputs(0), path, input_names=input_names, output_names=output_names,
                                exporter=exporter, verify=False, quiet=True, **kw)
    except Exception as e:  # noqa: BLE001 - reported in the table
        return f"| {name} | {exporter} | fails: {str(e).splitlines()[0][:120]} | | |"
    seconds = time.perf_counter() - t
    inputs = make_inputs(5)
    got = _pointrt.Session(path).run({k: v.numpy() for k, v in zip(input_names, inputs)})
    with torch.no_grad():
        refs = model(*inputs)
    refs = refs if isinstance(refs, (tuple, list)) else (refs,)
    rel = max(float(np.abs(got[k] - r.numpy()).max()) / max(1.0, float(r.abs().max()))
              for k, r in zip(output_names, refs))
    return f"| {name} | {exporter} | {seconds:.1f} | {report.size_bytes / 1e6:.1f} | {rel:.1e} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--only", default="", help="only the models whose name contains this text")
    a = ap.parse_args()
    torch.set_num_threads(2)
    exporters = ["torchscript"] + (["dynamo"] if dynamo_available() else [])
    print(f"torch {torch.__version__}, load average {os.getloadavg()[0]:.1f}")
    print("| model | exporter | export s | MB | max error / max(1, max abs) |\n|---|---|---|---|---|")
    for case in cases(a.full):
        if a.only not in case[0]:
            continue
        for ex in exporters:
            print(measure(*case, ex), flush=True)


if __name__ == "__main__":
    main()
