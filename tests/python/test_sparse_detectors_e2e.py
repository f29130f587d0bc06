"""End to end: sparse-convolution detectors exported from PyTorch, run by pointrt from raw points.

CenterPoint-style (SpMiddleResNetFHD, nuScenes grid) and SECOND-style (VoxelBackBone8x, KITTI
grid) with Voxelize in the graph. pointrt's outputs must match PyTorch's within 1e-4 relative to
each output's magnitude, at the exported point count and at another one; the sparse backbone
output is compared as a set of sites."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Dict, Tuple

import numpy as np
import pytest
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "models"))
import sparse_detectors as sd  # noqa: E402
from lidar_synth import synth_scan  # noqa: E402

from pointrt import _pointrt  # noqa: E402
from pointrt.torch import sparse as sp  # noqa: E402

DETECTORS: Dict[str, Tuple[Callable[[], sd.SparseDetector], str]] = {
    "second_kitti": (sd.second_kitti, "kitti"),
    "centerpoint_nuscenes": (sd.centerpoint_nuscenes, "nuscenes"),
}


def export(model: nn.Module, points: torch.Tensor, path: Path, outputs) -> Path:
    torch.onnx.export(model, (points,), str(path), input_names=["points"], output_names=list(outputs), opset_version=13,
                      custom_opsets={"pointrt": 1}, dynamic_axes={"points": {0: "P"}})
    return path


@pytest.fixture(scope="module", params=sorted(DETECTORS))
def detector(request, tmp_path_factory):
    torch.manual_seed(0)
    ctor, preset = DETECTORS[request.param]
    model = sd.randomize_batchnorm(ctor()).eval()
    scan = torch.from_numpy(synth_scan(preset, seed=0))
    path = export(model, scan, tmp_path_factory.mktemp(request.param) / "model.onnx", sd.OUTPUT_NAMES)
    return request.param, preset, model, path


def relative_error(got: np.ndarray, ref: np.ndarray) -> float:
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-12))


@pytest.mark.parametrize("seed", [0, 3])
def test_detector_matches_pytorch(detector, seed: int) -> None:
    name, preset, model, path = detector
    scan = synth_scan(preset, seed=seed, boxes=40 if seed == 0 else 25)
    with torch.no_grad():
        ref = model(torch.from_numpy(scan))
    got = _pointrt.Session(str(path)).run({"points": scan})
    for out_name, r in zip(sd.OUTPUT_NAMES, ref):
        err = relative_error(got[out_name], r.numpy())
        print(f"{name} seed {seed} ({scan.shape[0]} points) {out_name}: max|err|/max|ref| = {err:.2e}")
        assert got[out_name].shape == tuple(r.shape)
        assert err <= 1e-4, f"{out_name}: relative error {err}"


class BackboneOnly(nn.Module):
    def __init__(self, det: sd.SparseDetector):
        super().__init__()
        self.det = det

    def forward(self, points: torch.Tensor):
        x = self.det.backbone(self.det.voxelize(points))
        return x.features, x.indices


def test_backbone_sites_match_as_sets(detector, tmp_path: Path) -> None:
    name, preset, model, _ = detector
    scan = synth_scan(preset, seed=5)
    wrapped = BackboneOnly(model).eval()
    path = export(wrapped, torch.from_numpy(scan), tmp_path / "backbone.onnx", ["features", "indices"])
    with torch.no_grad():
        ref_f, ref_i = wrapped(torch.from_numpy(scan))
    got = _pointrt.Session(str(path)).run({"points": scan})
    ref_sites = {tuple(r): i for i, r in enumerate(ref_i.numpy().tolist())}
    got_sites = {tuple(r): i for i, r in enumerate(got["indices"].tolist())}
    assert got_sites.keys() == ref_sites.keys(), f"{len(got_sites)} vs {len(ref_sites)} sites"
    order = [ref_sites[k] for k in got_sites]
    err = relative_error(got["features"], ref_f.numpy()[order])
    print(f"{name} backbone: {len(got_sites)} sites, max|err|/max|ref| = {err:.2e}")
    assert err <= 1e-4


def test_cli_runs_kitti_bin(detector, tmp_path: Path) -> None:
    name, preset, _, path = detector
    scan = synth_scan(preset, seed=7)
    scan.tofile(tmp_path / "scan.bin")  # KITTI: 4 floats a point; nuScenes: 5
    cli = os.environ.get("POINTRT_CLI", str(ROOT / "build" / "pointrt"))
    out = subprocess.run([cli, "run", str(path), "--input", f"points={tmp_path / 'scan.bin'}"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "output heatmap: float32 [1, 3," in out.stdout
