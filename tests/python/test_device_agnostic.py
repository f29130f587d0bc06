"""The pure-PyTorch kernels create every tensor on their input's device (so they run on CUDA
tensors as on CPU ones). There is no GPU here: a TorchFunctionMode fails any tensor factory
(torch.tensor, arange, zeros, ...) called without ``device=``, which on a CUDA input would make a
CPU tensor and fail or copy; ``new_*`` and ``*_like`` inherit the device and are allowed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch.overrides import TorchFunctionMode

from pointrt.torch import _sparse_compute as sc
from pointrt.torch import _sparse_library as sl
from pointrt.torch import ops

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "models"))
from lidar_synth import synth_scan  # noqa: E402

GRID = [10, 200, 176]  # (z, y, x) of the 0.4 m voxels below
FACTORIES = {torch.tensor, torch.arange, torch.zeros, torch.ones, torch.full, torch.empty, torch.eye,
             torch.linspace, torch.rand, torch.randn, torch.randint}


class DeviceLint(TorchFunctionMode):
    def __init__(self) -> None:
        super().__init__()
        self.bad: list = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FACTORIES and "device" not in kwargs:
            self.bad.append(func.__name__)
        return func(*args, **kwargs)


def _run(fn, *args):
    lint = DeviceLint()
    with lint:
        out = fn(*args)
    assert not lint.bad, f"factories called without device=: {lint.bad}"
    return out


def _voxels():
    points = torch.from_numpy(synth_scan("kitti", seed=0)[::8].copy())
    return _run(sc.voxelize, points, [0.4, 0.4, 0.4], [0, -40, -3, 70.4, 40, 1], 5, 4000)


def test_voxelize_creates_its_tensors_on_the_input_device() -> None:
    feats, coords, num = _voxels()
    assert feats.shape[0] == coords.shape[0] == num.shape[0] > 0


@pytest.mark.parametrize("kind", ["subm", "regular", "transposed", "inverse"])
def test_sparse_conv_kernel_creates_its_tensors_on_the_input_device(kind: str) -> None:
    feats, coords, _ = _voxels()
    shape = GRID
    weight = torch.randn(8, 3, 3, 3, feats.shape[1])
    base = dict(kernel_size=[3, 3, 3], stride=[1, 1, 1], padding=[1, 1, 1], dilation=[1, 1, 1],
                output_padding=[0, 0, 0], input_spatial_shape=shape, output_spatial_shape=shape, subm=0, transposed=0,
                inverse=0, rulebook="k", activation="ReLU", alpha=0.01, source_stride=[1, 1, 1],
                source_padding=[0, 0, 0], source_dilation=[1, 1, 1])
    source = None
    if kind == "subm":
        base["subm"] = 1
    elif kind in ("regular", "inverse"):
        base["stride"] = [2, 2, 2]
        base["output_spatial_shape"] = sc.conv_output_shape(shape, [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1],
                                                            False, [0, 0, 0])
    else:
        base.update(transposed=1, output_spatial_shape=sc.conv_output_shape(shape, [3, 3, 3], [1, 1, 1], [1, 1, 1],
                                                                             [1, 1, 1], True, [0, 0, 0]))
    if kind == "inverse":  # reverse the regular convolution above
        _, down = sl._sparse_conv_kernel(feats, coords, weight, None, None, *base.values())
        source = coords
        small = base["output_spatial_shape"]
        base.update(stride=[1, 1, 1], padding=[0, 0, 0], input_spatial_shape=small, output_spatial_shape=shape,
                    inverse=1, source_stride=[2, 2, 2], source_padding=[1, 1, 1])
        feats, coords = torch.randn(down.shape[0], feats.shape[1]), down
    out, idx = _run(sl._sparse_conv_kernel, feats, coords, weight, torch.zeros(8), source, *base.values())
    assert out.shape == (idx.shape[0], 8) and idx.dtype == torch.int32
    if kind == "inverse":
        assert torch.equal(idx, source)


def test_scatter_dense_creates_its_tensors_on_the_input_device() -> None:
    feats, coords, _ = _voxels()
    dense = _run(sc.scatter_dense, feats, coords, GRID, 1)
    assert dense.shape == (1, feats.shape[1], *GRID)


def test_pointnet2_forwards_create_their_tensors_on_the_input_device() -> None:
    xyz = torch.rand(1, 300, 3) - 0.5
    idx = _run(ops.furthest_point_sample, xyz, 16, 1)
    centres = _run(ops.gather_points, xyz.transpose(1, 2).contiguous(), idx).transpose(1, 2).contiguous()
    ball = _run(ops.ball_query, xyz, centres, 0.3, 8)
    _run(ops.group_points, xyz.transpose(1, 2).contiguous(), ball)
    dist, nn_idx = _run(ops.three_nn, xyz, centres)
    _run(ops.three_interpolate, centres.transpose(1, 2).contiguous(), nn_idx, torch.full_like(dist, 1 / 3))
    _run(ops.knn, xyz, centres, 4)
