"""pointrt.export with both torch exporters: `exporter="auto" | "dynamo" | "torchscript"`.

On torch 2.x (the .venv-torch2 stage of CI) the TorchScript and the dynamo exporter must write
the same pointrt nodes with the same attributes, and both files must run in the runtime like
PyTorch. On torch 1.13 (Debian's) only TorchScript exists: "auto" picks it and "dynamo" is a
clear error. A torch outside the supported range is refused with the range."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import List, Tuple

import numpy as np
import onnx
import pytest
import torch

import pointrt
from pointrt import ExportError, _pointrt
from pointrt._export_backends import dynamo_available
from pointrt.torch import _library, ops
from pointrt.torch import sparse as sp
from models import sparse_detectors as sd
from models.lidar_synth import synth_scan
from models.pointnet2_msg_seg import Pointnet2MSGSeg
from models.pointnet2_ssg_cls import Pointnet2SSGCls

needs_dynamo = pytest.mark.skipif(not dynamo_available(), reason=f"torch {torch.__version__}: no dynamo exporter "
                                  "(runs in the torch 2.x stage, tests/python via .venv-torch2)")


class AllOps(torch.nn.Module):
    """Every PointNet++ operator once, with non-default attributes, indices as outputs."""

    def forward(self, xyz: torch.Tensor):
        fps = ops.furthest_point_sample(xyz, 16, 1)
        centres = ops.gather_points(xyz.transpose(1, 2).contiguous(), fps).transpose(1, 2).contiguous()
        ball = ops.ball_query(xyz, centres, 0.4, 8, 0.05)
        grouped = ops.group_points(xyz.transpose(1, 2).contiguous(), ball)
        dist, idx = ops.three_nn(xyz, centres)
        w = 1.0 / (dist + 1e-8)
        interp = ops.three_interpolate(centres.transpose(1, 2).contiguous(), idx, w / w.sum(-1, keepdim=True))
        knn_idx, knn_d2 = ops.knn(xyz, centres, 5)
        return fps, ball, grouped, idx, interp, knn_idx, knn_d2


def _pointrt_nodes(path: Path) -> List[Tuple[str, Tuple]]:
    graph = onnx.load(str(path)).graph
    return sorted((n.op_type, tuple(sorted((a.name, str(onnx.helper.get_attribute_value(a))) for a in n.attribute)))
                  for n in graph.node if n.domain == "pointrt")


def _export(model, x, path: Path, exporter: str, outputs: List[str], **kw):
    return pointrt.export(model.eval(), (x,), str(path), input_names=["points"], output_names=outputs,
                          exporter=exporter, verify=False, quiet=True, **kw)


def _cloud(shape: Tuple[int, ...], seed: int) -> torch.Tensor:
    x = torch.rand(*shape, generator=torch.Generator().manual_seed(seed))
    x[..., :3] -= 0.5
    return x


def _scan(preset: str, seed: int) -> torch.Tensor:
    """A synthetic LiDAR scan, every 6th point (a few seconds per export in CI)."""
    return torch.from_numpy(synth_scan(preset, seed=seed)[::6].copy())


def _detector(ctor):
    torch.manual_seed(0)
    return sd.randomize_batchnorm(ctor())


CASES = {  # name: (model, input(seed), outputs, export arguments)
    "all_ops": (AllOps, lambda s: _cloud((1, 200 + 37 * s, 3), s),
                ["fps", "ball", "grouped", "idx", "interp", "knn_idx", "knn_d2"], {}),
    "ssg_classifier": (lambda: Pointnet2SSGCls(num_classes=10), lambda s: _cloud((1, 512 + 37 * s, 3), s), ["logits"],
                       {}),
    "msg_segmenter": (lambda: Pointnet2MSGSeg(num_classes=5), lambda s: _cloud((1, 1024 + 37 * s, 9), s), ["logits"],
                      {}),
    "second_kitti": (lambda: _detector(sd.second_kitti), lambda s: _scan("kitti", s), sd.OUTPUT_NAMES,
                     {"dynamic_axes": {"points": {0: "P"}}}),
    "centerpoint_nuscenes": (lambda: _detector(sd.centerpoint_nuscenes), lambda s: _scan("nuscenes", s),
                             sd.OUTPUT_NAMES, {"dynamic_axes": {"points": {0: "P"}}}),
}


@needs_dynamo
@pytest.mark.parametrize("case", sorted(CASES))
def test_both_exporters_write_the_same_pointrt_nodes_and_results(case: str, tmp_path: Path) -> None:
    ctor, make_input, outputs, kw = CASES[case]
    torch.manual_seed(0)
    model = ctor().eval()
    x = make_input(0)
    files = {ex: tmp_path / f"{ex}.onnx" for ex in ("torchscript", "dynamo")}
    reports = {ex: _export(model, x, f, ex, outputs, **kw) for ex, f in files.items()}
    assert reports["dynamo"].exporter == "dynamo" and reports["torchscript"].exporter == "torchscript"
    assert _pointrt_nodes(files["torchscript"]) == _pointrt_nodes(files["dynamo"])
    assert reports["torchscript"].dynamic_axes == reports["dynamo"].dynamic_axes
    other = make_input(1)  # another point count: the axis is dynamic
    assert other.shape != x.shape
    with torch.no_grad():
        refs = [r.numpy() for r in _flatten(model(other))]
    for ex, f in files.items():
        got = _pointrt.Session(str(f)).run({"points": other.numpy()})
        for name, ref in zip(outputs, refs):
            g = got[name]
            assert g.shape == ref.shape, (ex, name)
            if np.issubdtype(ref.dtype, np.integer):
                np.testing.assert_array_equal(g, ref, err_msg=f"{ex} {name}")
            else:
                assert float(np.abs(g - ref).max()) <= 1e-4 * max(1.0, float(np.abs(ref).max())), (ex, name)


def _flatten(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@needs_dynamo
def test_dynamo_translation_covers_every_declared_op() -> None:
    table = _library.translation_table()
    names = {d.qualname for d in _library.declarations().values()}
    assert {"pointrt::FurthestPointSample", "pointrt::BallQuery", "pointrt::KNN"} <= names
    assert len(table) == len(names)


@needs_dynamo
def test_fake_kernels_give_shapes_under_torch_export() -> None:
    program = torch.export.export(AllOps(), (torch.rand(1, 64, 3),))
    targets = Counter(str(n.target) for n in program.graph.nodes if n.op == "call_function")
    assert targets["pointrt.FurthestPointSample.default"] == 1 and targets["pointrt.KNN.default"] == 1


class Voxels(torch.nn.Module):
    """Voxelize, a submanifold and a regular sparse convolution: two data-dependent sizes."""

    def __init__(self) -> None:
        super().__init__()
        self.subm = sp.SubMConv3d(4, 8, 3, padding=1, indice_key="a")
        self.down = sp.SparseConv3d(8, 8, 3, 2, padding=1)

    def forward(self, points: torch.Tensor):
        feats, coords, _ = sp.voxelize(points, [0.4, 0.4, 0.4], [0, -40, -3, 70.4, 40, 1], 5, 4000)
        x = self.down(self.subm(sp.SparseConvTensor(feats, coords, [10, 200, 176], 1)))
        return x.features, x.indices


@needs_dynamo
def test_sparse_fake_kernels_give_unbacked_sizes_under_torch_export() -> None:
    program = torch.export.export(Voxels().eval(), (_scan("kitti", 0),))
    targets = Counter(str(n.target) for n in program.graph.nodes if n.op == "call_function")
    assert targets["pointrt.Voxelize.default"] == 1 and targets["pointrt.SparseConv.default"] == 2
    features, indices = [n.meta["val"] for n in program.graph.output_node().args[0]]
    # the voxel count and the regular convolution's sites are new symbols (u0, u1), not numbers
    assert not isinstance(features.shape[0], int) and str(features.shape[0]).startswith("u")
    assert str(features.shape[0]) == str(indices.shape[0]) and features.shape[1] == 8


def test_auto_picks_what_the_installed_torch_has() -> None:
    from pointrt.exporter import resolve_exporter
    assert resolve_exporter("auto") == "torchscript"  # every torch in the supported range has it
    assert resolve_exporter("torchscript") == "torchscript"
    with pytest.raises(ExportError, match="exporter must be"):
        resolve_exporter("onnx")


@pytest.mark.skipif(dynamo_available(), reason="torch has the dynamo exporter")
def test_dynamo_on_an_old_torch_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="exporter='dynamo' needs torch >= 2.6"):
        _export(AllOps(), torch.rand(1, 64, 3), tmp_path / "a.onnx", "dynamo", ["a"] * 7)


@pytest.mark.parametrize("version", ["1.12.1", "3.0.0", "0.4.1"])
def test_torch_outside_the_supported_range_is_refused(version: str, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(torch, "__version__", version)
    with pytest.raises(ExportError, match=r"supports torch 1\.13 to 2\.x .* installed torch is " + version):
        _export(AllOps(), torch.rand(1, 64, 3), tmp_path / "a.onnx", "auto", ["a"] * 7)


def test_opsets_stay_within_what_the_runtime_executes() -> None:
    from pointrt.exporter import RUNTIME_MAX_OPSET
    for ex in ["torchscript"] + (["dynamo"] if dynamo_available() else []):
        ops_range = pointrt.supported_opsets(ex)
        assert ops_range[-1] <= RUNTIME_MAX_OPSET and len(ops_range) > 0
