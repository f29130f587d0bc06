"""pointrt.torch.adopt on models/yanx27_pointnet2.py (yanx27/Pointnet_Pointnet2_pytorch's layout):
the adopted model computes what the original computes (FPS from index 0), exports with pointrt
operators in seconds, runs in pointrt like PyTorch, and helpers it does not know stay untouched."""
from __future__ import annotations

import sys
import time
import types

import numpy as np
import onnx
import pytest
import torch

import pointrt
from models import yanx27_pointnet2 as y
from pointrt._export_backends import dynamo_available
from pointrt.torch.adopt import adopt, adopt_report, adopted


def model_and_inputs(name: str, points: int, **kwargs):
    torch.manual_seed(0)
    return y.randomize_batchnorm(y.MODELS[name](**kwargs)), y.example_inputs(name, points)


def run(model, inputs):
    with torch.no_grad():
        return [t.clone() for t in model(*inputs)]


SMALL = {"cls_ssg": dict(npoints=(128, 64)), "cls_msg": dict(npoints=(128, 128)),
         "sem_seg": dict(npoints=(128, 64, 32, 8)), "part_seg_ssg": dict(npoints=(128, 64))}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_adopted_model_computes_what_the_original_computes(name: str):
    model, inputs = model_and_inputs(name, 256, **SMALL[name])
    want = run(model, inputs)
    with adopted(model, quiet=True) as report:
        got = run(model, inputs)
    for w, g in zip(want, got):
        scale = float(w.abs().max())
        assert float((w - g).abs().max()) <= 1e-5 * max(scale, 1.0), name
    assert {e.name.rsplit(".", 1)[-1] for e in report.replaced} >= {
        "farthest_point_sample", "query_ball_point", "index_points"}
    restored = run(model, inputs)  # the originals are back after the block
    assert all(torch.equal(w, r) for w, r in zip(want, restored))


def test_fps_indices_are_the_originals_from_index_0():
    xyz = torch.rand(2, 300, 3, generator=torch.Generator().manual_seed(3)) * 2 - 1
    want = y.farthest_point_sample(xyz, 64)
    model, _ = model_and_inputs("cls_ssg", 256, **SMALL["cls_ssg"])
    with adopted(model, quiet=True):
        got = y.farthest_point_sample(xyz, 64)
        balls = y.query_ball_point(0.3, 16, xyz, y.index_points(xyz, got))
    assert got.dtype == torch.int64 and torch.equal(want, got) and bool((got[:, 0] == 0).all())
    assert torch.equal(balls, y.query_ball_point(0.3, 16, xyz, y.index_points(xyz, want)))


def test_report_lists_replaced_kept_and_where():
    model, _ = model_and_inputs("sem_seg", 256, **SMALL["sem_seg"])
    with adopted(model, quiet=True) as report:
        status = {e.name: e for e in report.entries}
        assert adopt_report(model) is report
    prefix = "models.yanx27_pointnet2."
    assert status[prefix + "farthest_point_sample"].where == ["models.yanx27_pointnet2"]
    assert status[prefix + "square_distance"].status == "kept"
    assert status[prefix + "sample_and_group"].status == "kept"
    assert status[prefix + "PointNetFeaturePropagation.forward"].where == ["fp4", "fp3", "fp2", "fp1"]
    assert "4 replaced" in str(report)
    assert type(model.fp1) is y.PointNetFeaturePropagation  # undone


def star_copy_of_yanx27() -> types.ModuleType:
    """A model module written as `from pointnet2_utils import *` (the helpers copied by name)."""
    copy = types.ModuleType("yanx27_star_copy")
    for key in ("farthest_point_sample", "query_ball_point", "index_points", "square_distance"):
        setattr(copy, key, getattr(y, key))
    sys.modules[copy.__name__] = copy
    return copy


def test_every_module_holding_a_helper_is_patched_and_restored():
    copy = star_copy_of_yanx27()
    try:
        model, _ = model_and_inputs("cls_ssg", 256, **SMALL["cls_ssg"])
        original = y.farthest_point_sample
        adopt(model, quiet=True)
        assert copy.farthest_point_sample is y.farthest_point_sample is not original
        entry = next(e for e in adopt_report(model).entries if e.name.endswith("farthest_point_sample"))
        assert entry.where == ["models.yanx27_pointnet2", "yanx27_star_copy"]
        adopt(model, quiet=True)  # a second adopt changes nothing
        assert len(adopt_report(model).replaced) == 3
        adopt(model, undo=True)
        assert copy.farthest_point_sample is original and y.farthest_point_sample is original
    finally:
        del sys.modules["yanx27_star_copy"]


RANDOM_START_FPS = """
import torch
def farthest_point_sample(xyz, npoint):
    # as the published code: a random first point, then the farthest from the chosen set
    b, n, _ = xyz.shape
    chosen = torch.zeros(b, npoint, dtype=torch.long)
    nearest = torch.full((b, n), 1e10)
    current = torch.randint(0, n, (b,), dtype=torch.long)
    for i in range(npoint):
        chosen[:, i] = current
        d = torch.sum((xyz - xyz[torch.arange(b), current].view(b, 1, 3)) ** 2, -1)
        nearest = torch.minimum(nearest, d)
        current = torch.max(nearest, -1)[1]
    return chosen
"""


def test_a_random_start_fps_is_replaced_by_the_start_at_index_0():
    random_start = types.ModuleType("yanx27_random_start")
    exec(RANDOM_START_FPS, random_start.__dict__)
    sys.modules[random_start.__name__] = random_start

    class Net(torch.nn.Module):
        pass

    Net.__module__ = random_start.__name__
    xyz = torch.rand(2, 200, 3, generator=torch.Generator().manual_seed(11))
    try:
        with adopted(Net(), quiet=True) as report:
            assert [e.status for e in report.entries] == ["replaced"]
            assert torch.equal(random_start.farthest_point_sample(xyz, 32), y.farthest_point_sample(xyz, 32))
    finally:
        del sys.modules[random_start.__name__]


def test_helpers_with_another_signature_or_other_results_are_left_alone(capsys):
    other = types.ModuleType("not_yanx27")
    exec("def farthest_point_sample(xyz, npoint, start):\n    return None\n"      # another signature
         "def index_points(points, idx):\n    return points[:, :1]\n", other.__dict__)  # other results
    sys.modules[other.__name__] = other

    class Uses(torch.nn.Module):
        pass

    Uses.__module__ = other.__name__
    net = Uses()
    try:
        adopt(net)
        printed = capsys.readouterr().out
        assert adopt_report(net).replaced == [] and len(adopt_report(net).not_replaced) == 2
        assert "not replaced" in printed and "signature (xyz, npoint, start) is not yanx27's (xyz, npoint)" in printed
        assert "index_points" in printed and "other results" in printed
        assert other.farthest_point_sample.__code__.co_argcount == 3 and other.index_points.__module__ == "not_yanx27"
    finally:
        adopt(net, undo=True)
        del sys.modules["not_yanx27"]


def test_unknown_fp_layers_are_reported_not_replaced():
    class PointNetFeaturePropagation(torch.nn.Module):  # same name, no mlp_convs/mlp_bns
        def forward(self, xyz1, xyz2, points1, points2):
            return points2

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fp = PointNetFeaturePropagation()

    net = Net()
    with adopted(net, quiet=True) as report:
        entry = next(e for e in report.entries if e.name.endswith("PointNetFeaturePropagation.forward"))
        assert entry.status == "not replaced" and "Conv1d" in entry.why
        assert type(net.fp) is PointNetFeaturePropagation


def export_adopted(tmp_path, name: str, points: int, exporter: str = "auto", **kwargs):
    model, inputs = model_and_inputs(name, points, **kwargs)
    adopt(model, quiet=True)
    path = tmp_path / f"{name}_{exporter}.onnx"
    start = time.perf_counter()
    report = pointrt.export(model, inputs, str(path), input_names=["points", "cls_label"][:len(inputs)],
                            output_names=["log_probs", "features"], verify=False, quiet=True, exporter=exporter)
    seconds = time.perf_counter() - start
    return model, report, onnx.load(str(path)), seconds


@pytest.mark.parametrize("name,nodes", [("cls_ssg", {"FurthestPointSample": 2, "BallQuery": 2}),
                                        ("cls_msg", {"FurthestPointSample": 2, "BallQuery": 6}),
                                        ("sem_seg", {"KNN": 4, "ThreeInterpolate": 4})])
def test_full_size_model_exports_in_seconds_and_runs_in_pointrt_at_another_size(tmp_path, name, nodes):
    rt = pytest.importorskip("pointrt._pointrt")
    model, report, graph, seconds = export_adopted(tmp_path, name, 1024)
    try:
        assert all(report.pointrt_nodes.get(k) == v for k, v in nodes.items()), report.pointrt_nodes
        assert len(graph.graph.node) < 400 and seconds < 60  # the unrolled plain export: ~48k nodes, minutes
        assert report.dynamic_axes["points"] == {2: "num_points"}
        cloud = torch.rand(1, y.INPUT_CHANNELS[name], 1500, generator=torch.Generator().manual_seed(9)) * 2 - 1
        want = run(model, (cloud,))
        got = rt.Session(report.path, threads=1).run({"points": cloud.numpy()})
        for out, w in zip(["log_probs", "features"], want):
            w = w.numpy()
            assert got[out].shape == w.shape
            assert np.abs(got[out] - w).max() <= 1e-4 * max(1.0, np.abs(w).max()), out
    finally:
        adopt(model, undo=True)


@pytest.mark.skipif(not dynamo_available(), reason="the dynamo exporter needs torch >= 2.6 with onnxscript")
def test_both_exporters_write_the_same_pointrt_nodes(tmp_path):
    reports = []
    for exporter in ("torchscript", "dynamo"):
        model, report, _, _ = export_adopted(tmp_path, "sem_seg", 256, exporter, **SMALL["sem_seg"])
        adopt(model, undo=True)
        reports.append(report)
    assert reports[0].pointrt_nodes == reports[1].pointrt_nodes
    assert reports[0].dynamic_axes == reports[1].dynamic_axes
