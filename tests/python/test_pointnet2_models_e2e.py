"""End to end: the three PointNet++ models of models/, exported with pointrt.export and run by
the pointrt runtime, against PyTorch (the pure-PyTorch forward of pointrt.torch).

Float outputs must match within 1e-4 absolute, at the exported point count and at another one
(the point count is a dynamic axis); index-valued outputs (FPS, BallQuery, ThreeNN of the first
level) must match exactly."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, Tuple

import numpy as np
import pytest
import torch
from torch import nn

import pointrt
from pointrt import _pointrt
from pointrt.torch import ops
from models.export_cases import cloud, pointnet2_input, pointnet2_model
from models.pvn3d_pointnet2 import NUM_POINTS


# name: (exported points, other points); the models and inputs are models/export_cases.py's
MODELS: Dict[str, Tuple[int, int]] = {"ssg_classifier": (1024, 2048), "msg_segmenter": (4096, 3000),
                                      "pvn3d_point_branch": (NUM_POINTS, 9000)}


@pytest.fixture(scope="module", params=sorted(MODELS))
def exported(request, tmp_path_factory):
    model = pointnet2_model(request.param)
    x = pointnet2_input(request.param, MODELS[request.param][0], 0)
    path = tmp_path_factory.mktemp(request.param) / "model.onnx"
    pointrt.export(model, (x,), str(path), input_names=["points"], output_names=["out"], verify=False, quiet=True)
    return request.param, model, path


@pytest.mark.parametrize("which", ["exported_count", "other_count"])
def test_model_matches_pytorch(exported, which: str) -> None:
    name, model, path = exported
    n_export, n_other = MODELS[name]
    x = pointnet2_input(name, n_export if which == "exported_count" else n_other, 7)
    with torch.no_grad():
        ref = model(x).numpy()
    got = _pointrt.Session(str(path)).run({"points": x.numpy()})["out"]
    assert got.shape == ref.shape
    err = float(np.abs(got - ref).max())
    print(f"{name} {x.shape[1]} points: output {list(got.shape)}, max |pointrt - torch| = {err:.2e}")
    assert err <= 1e-4


class FirstLevelIndices(nn.Module):
    """FPS, BallQuery and ThreeNN indices of PVN3D's first level, as graph outputs."""

    def forward(self, pointcloud: torch.Tensor):
        xyz = pointcloud[..., :3].contiguous()
        fps = ops.FurthestPointSample.apply(xyz, 2048, 1)
        centres = ops.GatherPoints.apply(xyz.transpose(1, 2).contiguous(), fps).transpose(1, 2).contiguous()
        ball = ops.BallQuery.apply(xyz, centres, 0.025, 32, 0.0)
        _, nn_idx = ops.ThreeNN.apply(xyz, centres)
        return fps, ball, nn_idx


def test_index_outputs_match_exactly(tmp_path: Path) -> None:
    x = cloud(NUM_POINTS, 6, 3)
    model = FirstLevelIndices()
    path = tmp_path / "indices.onnx"
    pointrt.export(model, (x,), str(path), input_names=["points"], output_names=["fps", "ball", "nn"], verify=False,
                   quiet=True)
    session = _pointrt.Session(str(path))
    for n in (NUM_POINTS, 7001):
        xs = cloud(n, 6, 11)
        with torch.no_grad():
            refs = model(xs)
        got = session.run({"points": xs.numpy()})
        for name, ref in zip(["fps", "ball", "nn"], refs):
            np.testing.assert_array_equal(got[name], ref.numpy().astype(got[name].dtype), err_msg=f"{name} at {n} points")
