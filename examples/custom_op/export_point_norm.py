"""The custom-operator workflow end to end (examples/custom_op/README.md):

1. build the PyTorch side, a C++ torch extension (point_norm_ext.cpp), with torch.utils.cpp_extension;
2. declare the operator once with ``pointrt.torch.custom_op`` (domain, name, attributes, shape rule);
3. export a model that calls it with ``pointrt.export`` (one ``example::PointNorm`` node);
4. run the file in pointrt with the runtime plugin (point_norm_plugin.c, built by CMake into
   build/plugins/libpoint_norm_plugin.so) and compare with PyTorch.

    .venv/bin/python examples/custom_op/export_point_norm.py [--plugin build/plugins/libpoint_norm_plugin.so]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from typing import Any, Dict

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))

import pointrt  # noqa: E402
import pointrt.torch  # noqa: E402
from pointrt.torch.custom_op import custom_op  # noqa: E402


def build_extension(build_dir: str) -> Any:
    """Compile point_norm_ext.cpp (about a minute the first time; cached in build_dir after)."""
    from torch.utils import cpp_extension
    os.makedirs(build_dir, exist_ok=True)
    return cpp_extension.load(name="point_norm_ext", sources=[os.path.join(HERE, "point_norm_ext.cpp")],
                              build_directory=build_dir, extra_cflags=["-O2"], verbose=False)


def declare(ext: Any):
    """One declaration: the torch op, the TorchScript symbolic and the dynamo translation."""
    def shape(points: torch.Tensor, p: float, keepdims: int):
        return tuple(points.shape[:-1]) + ((1,) if keepdims else ()), points.dtype

    return custom_op("example::PointNorm", inputs=["points"], outputs=["norms"], attrs={"p": 2.0, "keepdims": 0},
                     shape=shape, kernel=lambda points, p, keepdims: ext.point_norm(points, p, keepdims))


class FeatureNorms(torch.nn.Module):
    """A per-point MLP whose features are reduced by the custom operator."""

    def __init__(self, point_norm) -> None:
        super().__init__()
        self.point_norm = point_norm
        self.mlp = torch.nn.Sequential(torch.nn.Linear(3, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        features = self.mlp(points)
        return torch.sigmoid(self.point_norm(features, p=3.0, keepdims=1)) * 2.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plugin", default=os.path.join(ROOT, "build", "plugins", "libpoint_norm_plugin.so"))
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "torch_extensions"))
    ap.add_argument("--out", default=None, help="where to write the .onnx (default: a temporary folder)")
    ap.add_argument("--exporter", default="auto", choices=["auto", "torchscript", "dynamo"])
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    ext = build_extension(args.build_dir)
    print(f"extension built in {time.perf_counter() - t0:.1f} s")
    point_norm = declare(ext)
    torch.manual_seed(0)
    model = FeatureNorms(point_norm).eval()
    points = torch.randn(2, 1024, 3)

    out_dir = args.out or tempfile.mkdtemp(prefix="pointrt_custom_op_")
    path = os.path.join(out_dir, "feature_norms.onnx") if not args.out or os.path.isdir(args.out) else args.out
    t0 = time.perf_counter()
    report = pointrt.export(model, (points,), path, input_names=["points"], output_names=["y"],
                            exporter=args.exporter, quiet=True, plugins=[args.plugin], strict=True)
    print(f"exported {path} in {time.perf_counter() - t0:.1f} s ({report.exporter})")

    session = pointrt.Session(path, plugins=[args.plugin])
    results: Dict[str, float] = {}
    for n in (1024, 300):  # the point axis is dynamic
        x = torch.randn(2, n, 3)
        with torch.no_grad():
            want = model(x).numpy()
        got = session.run({"points": x.numpy()})["y"]
        assert got.shape == want.shape, (got.shape, want.shape)
        results[f"N={n}"] = float(np.max(np.abs(got - want)) / max(1e-30, float(np.max(np.abs(want)))))
    worst = max(results.values())
    print("pointrt vs PyTorch, max |error| / max |reference|: " +
          ", ".join(f"{k}: {v:.2e}" for k, v in results.items()))
    ok = worst <= 1e-4
    print("match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
