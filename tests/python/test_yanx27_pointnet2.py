"""models/yanx27_pointnet2.py: the sampling and grouping functions against brute-force versions,
and small instances of the models exported with plain torch.onnx.export and run by pointrt
against PyTorch (the full-size files take minutes to export; bench/ uses those)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from models import yanx27_pointnet2 as y


def cloud(b: int, n: int, seed: int) -> torch.Tensor:
    return torch.rand(b, n, 3, generator=torch.Generator().manual_seed(seed)) * 2 - 1


def test_square_distance_matches_pairwise_differences():
    src, dst = cloud(2, 7, 0), cloud(2, 5, 1)
    expected = ((src[:, :, None, :] - dst[:, None, :, :]) ** 2).sum(-1)
    assert torch.allclose(y.square_distance(src, dst), expected, atol=1e-5)


def naive_fps(xyz: np.ndarray, npoint: int) -> list:
    chosen, dist = [0], np.full(len(xyz), 1e10)
    for _ in range(npoint - 1):
        dist = np.minimum(dist, ((xyz - xyz[chosen[-1]]) ** 2).sum(-1))
        chosen.append(int(np.argmax(dist)))
    return chosen


def test_farthest_point_sample_starts_at_zero_and_takes_the_farthest():
    xyz = cloud(2, 50, 2)
    idx = y.farthest_point_sample(xyz, 12)
    assert idx.shape == (2, 12)
    for b in range(2):
        assert idx[b].tolist() == naive_fps(xyz[b].double().numpy(), 12)


def test_query_ball_point_takes_the_first_hits_and_pads_with_the_first():
    xyz, centres = cloud(1, 40, 3), cloud(1, 6, 4)
    radius, nsample = 0.7, 5
    idx = y.query_ball_point(radius, nsample, xyz, centres)
    d = y.square_distance(centres, xyz)[0]
    for s in range(6):
        hits = [j for j in range(40) if d[s, j] <= radius**2][:nsample]
        pad = hits[0] if hits else 40  # no hit at all: the original leaves N in every slot
        assert idx[0, s].tolist() == hits + [pad] * (nsample - len(hits))


def test_index_points_picks_rows_per_batch():
    points = torch.arange(2 * 4 * 3, dtype=torch.float32).view(2, 4, 3)
    idx = torch.tensor([[[3, 0]], [[1, 1]]])
    out = y.index_points(points, idx)
    assert out.shape == (2, 1, 2, 3)
    assert torch.equal(out[1, 0, 0], points[1, 1]) and torch.equal(out[0, 0, 0], points[0, 3])


@pytest.mark.parametrize("name,points,shapes", [
    ("cls_ssg", 1024, [(1, 40), (1, 1024, 1)]),
    ("cls_msg", 1024, [(1, 40), (1, 1024, 1)]),
    ("sem_seg", 1024, [(1, 1024, 13), (1, 512, 16)]),
    ("part_seg_ssg", 1024, [(1, 1024, 50), (1, 1024, 1)]),
])
def test_full_size_models_give_the_original_output_shapes(name: str, points: int, shapes: list):
    torch.manual_seed(0)
    model = y.randomize_batchnorm(y.MODELS[name]())
    with torch.no_grad():
        outs = model(*y.example_inputs(name, points))
    assert [tuple(o.shape) for o in outs] == shapes
    assert torch.isfinite(outs[0]).all()


class MsgThenFp(torch.nn.Module):
    """A tiny multi-scale SA level and the FP level back to the input points (the parts the
    small classifier below does not cover)."""

    def __init__(self):
        super().__init__()
        self.sa = y.PointNetSetAbstractionMsg(12, [0.4, 0.8], [4, 8], 0, [[8, 16], [8, 8]])
        self.fp = y.PointNetFeaturePropagation(24, [16])

    def forward(self, xyz):
        new_xyz, feats = self.sa(xyz, None)
        return self.fp(xyz, new_xyz, None, feats), feats


def run_both(model: torch.nn.Module, inputs: tuple, path: Path, names: list) -> None:
    rt = pytest.importorskip("pointrt._pointrt")
    with torch.no_grad():
        expected = [t.numpy() for t in model(*inputs)]
    session = rt.Session(str(path), threads=1)
    got = session.run({n: t.numpy() for n, t in zip(session.input_names, inputs)})
    for out_name, want in zip(names, expected):
        assert got[out_name].shape == want.shape
        np.testing.assert_allclose(got[out_name], want, atol=1e-4, rtol=1e-4, err_msg=out_name)


@pytest.fixture(scope="module")
def small_cls_ssg(tmp_path_factory):
    # sa2's ball query takes 64 points, so sa1 keeps 64 (the original's slicing assumes it);
    # the export unrolls FPS, so small sample counts keep it to seconds.
    path = tmp_path_factory.mktemp("yanx27") / "cls_ssg.onnx"
    model, inputs = y.export("cls_ssg", str(path), points=96, npoints=(64, 8))
    return path, model, inputs


def test_small_cls_ssg_export_runs_in_pointrt_like_pytorch(small_cls_ssg):
    path, model, inputs = small_cls_ssg
    run_both(model, inputs, path, ["log_probs", "features"])


def test_msg_and_fp_levels_export_and_run_in_pointrt_like_pytorch(tmp_path: Path):
    torch.manual_seed(0)
    model = y.randomize_batchnorm(MsgThenFp())
    xyz = torch.rand(1, 3, 48, generator=torch.Generator().manual_seed(5)) * 2 - 1
    path = tmp_path / "msg_fp.onnx"
    with torch.no_grad():
        torch.onnx.export(model, (xyz,), str(path), opset_version=14, input_names=["xyz"],
                          output_names=["up", "feats"])
    run_both(model, (xyz,), path, ["up", "feats"])


def test_export_is_plain_onnx_without_custom_domains(small_cls_ssg):
    import onnx

    m = onnx.load(str(small_cls_ssg[0]))
    assert {op.domain for op in m.opset_import} <= {"", "ai.onnx"}
    ops = {n.op_type for n in m.graph.node}
    assert {"TopK", "ScatterND", "GatherND", "ReduceMax", "MatMul"} <= ops, sorted(ops)
