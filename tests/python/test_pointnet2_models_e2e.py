"""End to end: the three PointNet++ models of models/, exported with pointrt.export and run by
the pointrt runtime, against PyTorch (the pure-PyTorch forward of pointrt.torch).

Float outputs must match within 1e-4 absolute, at the exported point count and at another one
(the point count is a dynamic axis); index-valued outputs (FPS, BallQuery, ThreeNN of the first
level) must match exactly."""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Dict, Tuple

import numpy as np
import pytest
import torch
from torch import nn

import pointrt
from pointrt import _pointrt
from pointrt.torch import ops
from models.pointnet2_msg_seg import Pointnet2MSGSeg
from models.pointnet2_ssg_cls import Pointnet2SSGCls
from models.pvn3d_pointnet2 import NUM_POINTS, Pointnet2MSG


def cloud(n: int, channels: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    xyz = torch.rand(1, n, 3, generator=g) * 0.3 - 0.15  # PVN3D-scale scene (metres)
    return torch.cat([xyz, torch.rand(1, n, channels, generator=g)], -1) if channels else xyz


def randomize_bn(model: nn.Module) -> nn.Module:
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return model.eval()


MODELS: Dict[str, Tuple[Callable[[], nn.Module], int, int, int, float]] = {
    # name: (constructor, exported points, other points, extra channels, xyz scale)
    "ssg_classifier": (lambda: Pointnet2SSGCls(num_classes=40), 1024, 2048, 0, 1.0 / 0.15),
    "msg_segmenter": (lambda: Pointnet2MSGSeg(num_classes=13), 4096, 3000, 6, 1.0 / 0.15),
    "pvn3d_point_branch": (lambda: Pointnet2MSG(input_channels=6), NUM_POINTS, 9000, 6, 1.0),
}


@pytest.fixture(scope="module", params=sorted(MODELS))
def exported(request, tmp_path_factory):
    ctor, n, _, channels, scale = MODELS[request.param]
    torch.manual_seed(0)
    model = randomize_bn(ctor())
    x = cloud(n, channels, 0)
    x[..., :3] *= scale
    path = tmp_path_factory.mktemp(request.param) / "model.onnx"
    pointrt.export(model, (x,), str(path), input_names=["points"], output_names=["out"], verify=False, quiet=True)
    return request.param, model, path


@pytest.mark.parametrize("which", ["exported_count", "other_count"])
def test_model_matches_pytorch(exported, which: str) -> None:
    name, model, path = exported
    _, n_export, n_other, channels, scale = MODELS[name]
    x = cloud(n_export if which == "exported_count" else n_other, channels, 7)
    x[..., :3] *= scale
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
