"""pointrt.export's dynamic axes from the data flow (pointrt._dynamic_axes): point axes found
wherever they sit, and the layer that fixes a point count named."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from torch import nn

import pointrt
from pointrt import ExportError, _pointrt
from pointrt._export_backends import dynamo_available
from pointrt.torch import ops

EXPORTERS = ["torchscript"] + (["dynamo"] if dynamo_available() else [])


class ChooseFusion(nn.Module):
    """PVN3D's data flow in small: image features gathered at the pixels ``choose`` [B, 1, N]
    picks, concatenated with per-point features of the cloud [B, N, 3] along N."""

    def __init__(self, fixed_pool: bool = False, n_points: int = 0) -> None:
        super().__init__()
        self.img = nn.Conv2d(3, 4, 1)
        self.pts = nn.Conv1d(3, 4, 1)
        self.head = nn.Conv1d(8, 2, 1)
        self.pool = nn.AvgPool1d(n_points) if fixed_pool else None

    def forward(self, cloud: torch.Tensor, rgb: torch.Tensor, choose: torch.Tensor):
        f_img = self.img(rgb).flatten(2)  # [B, 4, H*W]
        f_img = torch.gather(f_img, 2, choose.repeat(1, f_img.shape[1], 1))  # [B, 4, N]
        idx = ops.furthest_point_sample(cloud, 4, 1)
        centres = ops.gather_points(cloud.transpose(1, 2).contiguous(), idx)  # [B, 3, 4]
        f_pts = self.pts(cloud.transpose(1, 2))  # [B, 4, N]
        out = self.head(torch.cat([f_img, f_pts], dim=1))  # [B, 2, N]
        if self.pool is not None:
            out = self.pool(out)
        return out, centres


def _inputs(n: int, seed: int):
    g = torch.Generator().manual_seed(seed)
    cloud = torch.rand(1, n, 3, generator=g) - 0.5
    rgb = torch.rand(1, 3, 6, 8, generator=g)
    choose = torch.randperm(48, generator=g)[:n].sort().values.view(1, 1, n)
    return cloud, rgb, choose


def _export(model, args, path: Path, **kw):
    return pointrt.export(model.eval(), args, str(path), input_names=["cloud", "rgb", "choose"],
                          output_names=["out", "centres"], verify=False, quiet=True, **kw)


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_choose_gets_its_point_axis_from_the_data_flow(tmp_path: Path, exporter: str) -> None:
    torch.manual_seed(0)
    model = ChooseFusion().eval()
    rep = _export(model, _inputs(20, 0), tmp_path / "c.onnx", exporter=exporter)
    # choose's axis 2 (not axis 1 by position) and the cloud's axis 1 are one point count; the image
    # and the sampled centres stay static
    assert rep.dynamic_axes == {"cloud": {1: "num_points"}, "choose": {2: "num_points"}, "out": {2: "num_points"}}
    assert rep.fixed_sizes == []
    graph = onnx.load(str(tmp_path / "c.onnx")).graph
    dims = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in graph.input}
    assert dims["choose"] == [1, 1, "num_points"] and dims["rgb"] == [1, 3, 6, 8]
    # another point count runs and matches PyTorch
    other = _inputs(31, 1)
    with torch.no_grad():
        ref = [t.numpy() for t in model(*other)]
    got = _pointrt.Session(str(tmp_path / "c.onnx")).run(dict(zip(["cloud", "rgb", "choose"],
                                                                  [t.numpy() for t in other])))
    for name, r in zip(["out", "centres"], ref):
        np.testing.assert_allclose(got[name], r, rtol=1e-4, atol=1e-4 * float(np.abs(r).max()))


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_a_pool_as_long_as_the_points_is_named(tmp_path: Path, exporter: str) -> None:
    model = ChooseFusion(fixed_pool=True, n_points=20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = _export(model, _inputs(20, 0), tmp_path / "p.onnx", exporter=exporter)
    text = " ".join(str(w.message) for w in caught)
    assert "module 'pool' (AvgPool1d(" in text and "length 20" in text
    assert len(rep.fixed_sizes) == 1 and "module 'pool'" in rep.fixed_sizes[0]
    assert "point count fixed (exported static) by module 'pool'" in str(rep)
    assert rep.dynamic_axes == {}  # that point count stays static everywhere


def test_asking_for_a_fixed_axis_is_an_error_naming_the_layer(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match=r"fixed by module 'pool' \(AvgPool1d\(.*cannot be dynamic as asked"):
        _export(ChooseFusion(fixed_pool=True, n_points=20), _inputs(20, 0), tmp_path / "e.onnx",
                point_axes={"cloud": 1})


class FixedView(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.mlp = nn.Conv1d(3, 4, 1)

    def forward(self, xyz: torch.Tensor):
        d, _ = ops.knn(xyz, xyz, 2)  # [B, N, 2]
        f = self.mlp(xyz.transpose(1, 2))  # [B, 4, N]
        return f.view(1, 4, 16) + d.sum(-1).unsqueeze(1)


def test_a_literal_size_in_view_is_named(tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rep = pointrt.export(FixedView().eval(), (torch.rand(1, 16, 3),), str(tmp_path / "v.onnx"),
                             input_names=["xyz"], output_names=["y"], verify=False, quiet=True)
    assert len(rep.fixed_sizes) == 1
    assert "the model's own forward" in rep.fixed_sizes[0] and "view with the literal size 16 at axis 2" \
        in rep.fixed_sizes[0]
    assert any("view with the literal size 16" in str(w.message) for w in caught)
