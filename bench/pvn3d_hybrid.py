"""PVN3D-style full network (models/pvn3d_full.py) as one pointrt file, against the seed-style
hybrid and PyTorch eager, on the same machine in one run (docs/benchmarks-pipelines.md).

    python bench/pvn3d_hybrid.py [--threads 1 2] [--runs 5] [--height 480 --width 640 --points 12288]

- pointrt: the whole network in one file (pointrt.export), `_pointrt.Session`.
- hybrid (how the field deploys PVN3D today): `rgb_backbone.onnx` (ResNet34-PSPNet: RGB -> per-pixel
  embedding) and `fusion_head.onnx` (choose gather, DenseFusion, the three heads) in ONNX Runtime,
  the point branch (Pointnet2MSG) in PyTorch on the CPU (its pure-PyTorch PointNet++ operators).
- eager: the whole model in PyTorch.
Each is timed over --runs runs after a warm-up (median), at each thread count; outputs are compared
with the hybrid's. Peak memory: each engine in a fresh process (`pointrt bench`'s peak RSS; the
two ORT sessions alone), so one engine's allocations do not hide another's.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT))

from models import pvn3d_full as P  # noqa: E402


class RGBBackbone(nn.Module):
    def __init__(self, model: P.PVN3D):
        super().__init__()
        self.cnn = model.cnn

    def forward(self, rgb):
        return self.cnn(rgb)[0]


class FusionHead(nn.Module):
    """choose gather + DenseFusion + heads: PVN3D.forward after the two branches."""

    def __init__(self, model: P.PVN3D):
        super().__init__()
        self.m = model

    def forward(self, out_rgb, cld_emb, choose):
        m = self.m
        bs, di = out_rgb.size(0), out_rgb.size(1)
        rgb_emb = torch.gather(out_rgb.view(bs, di, -1), 2, choose.repeat(1, di, 1)).contiguous()
        n = cld_emb.size(2)
        rgbd = m.rgbd_feat(rgb_emb, cld_emb)
        seg = m.SEG_layer(rgbd).transpose(1, 2).contiguous()
        kp_of = m.KpOF_layer(rgbd).view(bs, m.num_kps, 3, n).permute(0, 1, 3, 2).contiguous()
        ctr_of = m.CtrOf_layer(rgbd).view(bs, 1, 3, n).permute(0, 1, 3, 2).contiguous()
        return kp_of, seg, ctr_of


def median_ms(fn, runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1000)
    return float(np.median(times))


def export_all(model, inputs, tmp: Path):
    import pointrt
    cloud, rgb, choose = inputs
    pointrt.export(model, inputs, str(tmp / "pvn3d_full.onnx"), input_names=P.INPUT_NAMES,
                   output_names=P.OUTPUT_NAMES, dynamic_points=False, verify=False, quiet=True)
    # The wrappers in eval mode: the exporter restores a module's own training flag after the export,
    # and a new wrapper's (True) would be applied to the whole PVN3D inside it (batch statistics in
    # the point branch of the hybrid, running statistics overwritten).
    pointrt.export(RGBBackbone(model).eval(), (rgb,), str(tmp / "rgb_backbone.onnx"), input_names=["rgb"],
                   output_names=["out_rgb"], dynamic_points=False, verify=False, quiet=True)
    with torch.no_grad():
        out_rgb, cld_emb = RGBBackbone(model).eval()(rgb), model.pointnet2(cloud)
    pointrt.export(FusionHead(model).eval(), (out_rgb, cld_emb, choose), str(tmp / "fusion_head.onnx"),
                   input_names=["out_rgb", "cld_emb", "choose"], output_names=P.OUTPUT_NAMES,
                   dynamic_points=False, verify=False, quiet=True)
    assert not any(m.training for m in model.modules())


def peak_rss_mib(code: str) -> float:
    """Peak RSS of a fresh Python process running `code` (which must print nothing else): VmHWM, the
    high-water mark of the process's own memory. Not getrusage's ru_maxrss: Linux carries the parent's
    peak across fork + exec, so every child of this (large) process would report at least its size."""
    hwm = "print(int([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]) / 1024)"
    out = subprocess.run([sys.executable, "-c", code + "\n" + hwm],
                         capture_output=True, text=True, env=dict(os.environ, OMP_WAIT_POLICY="passive"))
    if out.returncode:
        raise RuntimeError(out.stderr)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--eager-runs", type=int, default=2)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--points", type=int, default=12288)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    import onnxruntime as ort
    from pointrt import _pointrt

    model = P.build(a.points)
    inputs = P.example_inputs(a.points, (a.height, a.width))
    cloud, rgb, choose = inputs
    record = dict(config=vars(a), load_before=os.getloadavg(), results={})
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        t0 = time.time()
        export_all(model, inputs, tmp)
        record["export_seconds"] = round(time.time() - t0, 1)
        feeds = {"pointcloud": cloud.numpy(), "rgb": rgb.numpy(), "choose": choose.numpy()}
        np.savez(tmp / "feeds.npz", **feeds)
        for threads in a.threads:
            torch.set_num_threads(threads)
            so = ort.SessionOptions()
            so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
            backbone = ort.InferenceSession(str(tmp / "rgb_backbone.onnx"), so, providers=["CPUExecutionProvider"])
            head = ort.InferenceSession(str(tmp / "fusion_head.onnx"), so, providers=["CPUExecutionProvider"])
            session = _pointrt.Session(str(tmp / "pvn3d_full.onnx"), threads=threads)

            def hybrid():
                out_rgb = backbone.run(None, {"rgb": feeds["rgb"]})[0]
                with torch.no_grad():
                    cld = model.pointnet2(cloud).numpy()
                return head.run(None, {"out_rgb": out_rgb, "cld_emb": cld, "choose": feeds["choose"]})

            def eager():
                with torch.no_grad():
                    return model(*inputs)

            row = dict(pointrt_ms=median_ms(lambda: session.run(feeds), a.runs),
                       hybrid_ms=median_ms(hybrid, a.runs), eager_ms=median_ms(eager, a.eager_runs))
            got, ref = session.run(feeds), hybrid()
            row["max_abs_diff_vs_hybrid"] = {n: float(np.abs(got[n] - r).max()) for n, r in zip(P.OUTPUT_NAMES, ref)}
            row["max_abs_hybrid"] = {n: float(np.abs(r).max()) for n, r in zip(P.OUTPUT_NAMES, ref)}
            row["hybrid_over_pointrt"] = round(row["hybrid_ms"] / row["pointrt_ms"], 2)
            row["eager_over_pointrt"] = round(row["eager_ms"] / row["pointrt_ms"], 2)
            record["results"][f"{threads}t"] = row
            print(threads, json.dumps(row), flush=True)
        # peak memory, each engine alone in a fresh process, 1 thread
        record["peak_rss_mib"] = dict(
            pointrt=peak_rss_mib(f"from pointrt import _pointrt; import numpy as np; s = _pointrt.Session('{tmp}/pvn3d_full.onnx', threads=1); "
                                 f"f = dict(np.load('{tmp}/feeds.npz')); s.run(f); s.run(f)"),
            ort_dense_parts=peak_rss_mib(
                "import onnxruntime as ort, numpy as np; so = ort.SessionOptions(); so.intra_op_num_threads = 1; "
                f"f = dict(np.load('{tmp}/feeds.npz')); b = ort.InferenceSession('{tmp}/rgb_backbone.onnx', so); "
                f"h = ort.InferenceSession('{tmp}/fusion_head.onnx', so); o = b.run(None, {{'rgb': f['rgb']}})[0]; "
                f"c = np.zeros((1, 128, {a.points}), np.float32); h.run(None, {{'out_rgb': o, 'cld_emb': c, 'choose': f['choose']}}); "
                "o = b.run(None, {'rgb': f['rgb']})[0]; h.run(None, {'out_rgb': o, 'cld_emb': c, 'choose': f['choose']})"),
            python_numpy_baseline=peak_rss_mib("import numpy as np, onnxruntime"))
    record["load_after"] = os.getloadavg()
    print(json.dumps(record, indent=1))
    if a.json:
        Path(a.json).write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
