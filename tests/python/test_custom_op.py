"""Users' own operators: pointrt.torch.custom_op on the export side, runtime plugins on the run side,
and examples/custom_op end to end (a C++ torch extension, exported, run by a plugin)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Dict, List

import numpy as np
import onnx
import pytest
import torch

import pointrt
from pointrt.torch import _library
from pointrt.torch.custom_op import custom_op
from models.export_cases import custom_op_example, example_plugin, extension_build_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_PLUGIN = example_plugin()
CLI = os.environ.get("POINTRT_CLI", str(ROOT / "build" / "pointrt"))
EXPORTERS = ["torchscript", "dynamo"] if _library.available() else ["torchscript"]


@pytest.mark.parametrize("exporter", EXPORTERS)
def test_example_end_to_end(exporter: str, tmp_path: Path) -> None:
    """The C++ torch extension exports as one example::PointNorm node; the plugin runs it."""
    code = custom_op_example().main(["--plugin", str(EXAMPLE_PLUGIN), "--build-dir", str(extension_build_dir()),
                                     "--out", str(tmp_path), "--exporter", exporter])
    assert code == 0
    model = onnx.load(str(tmp_path / "feature_norms.onnx"))
    nodes = [n for n in model.graph.node if n.domain == "example"]
    assert [n.op_type for n in nodes] == ["PointNorm"]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in nodes[0].attribute}
    assert attrs == {"p": pytest.approx(3.0), "keepdims": 1}
    assert {o.domain: o.version for o in model.opset_import}.get("example") == 1


_KINDS = custom_op(
    "pointrt_test::Kinds", inputs=["x", "y"], outputs=["sum", "rows"],
    attrs={"scale": 0.5, "offset": 2, "mode": "add", "axes": [1], "weights": [0.25, 4.0]},
    shape=lambda x, y, **a: [(tuple(x.shape), x.dtype), ((x.shape[0],), torch.int64)],
    kernel=lambda x, y, scale, offset, mode, axes, weights: (
        x * scale + y + offset, torch.full((x.shape[0],), len(mode) + len(axes) + len(weights), dtype=torch.int64)))


class _TwoInputs(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor):
        s, r = _KINDS(x, y, scale=1.5, mode="mul")
        return s.relu(), r


def _export(path: Path, exporter: str) -> onnx.ModelProto:
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    pointrt.export(_TwoInputs(), (x, y), path, input_names=["x", "y"], output_names=["s", "r"], verify=False,
                   dynamic_points=False, exporter=exporter, quiet=True)
    return onnx.load(str(path))


def _custom_nodes(model: onnx.ModelProto) -> List[Dict]:
    return [{"op": n.op_type, "domain": n.domain, "inputs": len(n.input), "outputs": len(n.output),
             "attrs": {a.name: (a.type, onnx.helper.get_attribute_value(a)) for a in n.attribute}}
            for n in model.graph.node if n.domain == "pointrt_test"]


def test_every_attribute_kind_is_written(tmp_path: Path) -> None:
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    s, r = _TwoInputs()(x, y)
    assert torch.allclose(s, (x * 1.5 + y + 2).relu()) and r.tolist() == [6, 6, 6]
    nodes = _custom_nodes(_export(tmp_path / "kinds.onnx", "torchscript"))
    assert len(nodes) == 1 and nodes[0]["inputs"] == 2 and nodes[0]["outputs"] == 2
    A = onnx.AttributeProto
    assert nodes[0]["attrs"] == {"scale": (A.FLOAT, 1.5), "offset": (A.INT, 2), "mode": (A.STRING, b"mul"),
                                 "axes": (A.INTS, [1]), "weights": (A.FLOATS, [0.25, 4.0])}


@pytest.mark.skipif(not _library.available(), reason="torch < 2.4: only the TorchScript exporter exists")
def test_both_exporters_write_the_same_node(tmp_path: Path) -> None:
    ts = _custom_nodes(_export(tmp_path / "ts.onnx", "torchscript"))
    dy = _custom_nodes(_export(tmp_path / "dy.onnx", "dynamo"))
    assert ts == dy


def test_declaration_errors() -> None:
    def shape(x):
        return tuple(x.shape), x.dtype

    with pytest.raises(ValueError, match="'domain::Name'"):
        custom_op("NoDomain", inputs=["x"], outputs=["y"], shape=shape, kernel=lambda x: x)
    with pytest.raises(ValueError, match="the domain 'pointrt' is taken"):
        custom_op("pointrt::Mine", inputs=["x"], outputs=["y"], shape=shape, kernel=lambda x: x)
    with pytest.raises(TypeError, match="attribute 'bad'"):
        custom_op("pointrt_test::BadAttr", inputs=["x"], outputs=["y"], attrs={"bad": object()}, shape=shape,
                  kernel=lambda x: x)
    with pytest.raises(ValueError, match="declared before"):
        custom_op("pointrt_test::Kinds", inputs=["x"], outputs=["y"], shape=shape, kernel=lambda x: x)
    x = torch.zeros(2, 4)
    with pytest.raises(TypeError, match="takes 2 tensor inputs"):
        _KINDS(x)
    with pytest.raises(TypeError, match=r"unknown attribute\(s\) \['scal'\]"):
        _KINDS(x, x, scal=1.0)


def test_redeclaring_the_same_signature_updates_the_kernel() -> None:
    def shape(x, k):
        return tuple(x.shape), x.dtype

    first = custom_op("pointrt_test::Again", inputs=["x"], outputs=["y"], attrs={"k": 1}, shape=shape,
                      kernel=lambda x, k: x + k)
    second = custom_op("pointrt_test::Again", inputs=["x"], outputs=["y"], attrs={"k": 1}, shape=shape,
                       kernel=lambda x, k: x * 10 + k)
    assert first is second
    assert second(torch.ones(2), k=2).tolist() == [12.0, 12.0]


@pytest.fixture(scope="module")
def example_file(tmp_path_factory) -> Path:
    """A file with one example::PointNorm node, written without the extension (pure-PyTorch kernel)."""
    op = custom_op("example::PointNorm", inputs=["points"], outputs=["norms"], attrs={"p": 2.0, "keepdims": 0},
                   shape=lambda points, p, keepdims: (tuple(points.shape[:-1]) + ((1,) if keepdims else ()),
                                                      points.dtype),
                   kernel=lambda points, p, keepdims: torch.linalg.vector_norm(points.double(), ord=p, dim=-1,
                                                                               keepdim=bool(keepdims)).float())

    class M(torch.nn.Module):
        def forward(self, points):
            return op(points * 2.0)

    path = tmp_path_factory.mktemp("custom") / "norm.onnx"
    pointrt.export(M(), (torch.randn(1, 50, 3),), path, input_names=["points"], output_names=["n"],
                   plugins=[str(EXAMPLE_PLUGIN)], strict=True, quiet=True)
    return path


def test_python_session_with_plugins(example_file: Path) -> None:
    x = np.random.default_rng(0).standard_normal((1, 77, 3)).astype(np.float32)
    got = pointrt.Session(str(example_file), plugins=[str(EXAMPLE_PLUGIN)]).run({"points": x})["n"]
    want = np.sqrt(((2 * x.astype(np.float64)) ** 2).sum(-1)).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    with pytest.raises(pointrt.SessionError, match="load the plugin that provides it"):
        pointrt.Session(str(example_file))
    with pytest.raises(pointrt.SessionError, match="not one string"):
        pointrt.Session(str(example_file), plugins=str(EXAMPLE_PLUGIN))
    with pytest.raises(pointrt.SessionError, match=r"plugin '/nonexistent/libx.so': cannot load the library"):
        pointrt.Session(str(example_file), plugins=["/nonexistent/libx.so"])


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)


def test_cli_plugin_flag(example_file: Path, tmp_path: Path) -> None:
    ok = _cli("run", str(example_file), "--plugin", str(EXAMPLE_PLUGIN), "--output-dir", str(tmp_path))
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "n.npy").exists()
    assert _cli("inspect", str(example_file), "--plugin", str(EXAMPLE_PLUGIN)).returncode == 0
    bench = _cli("bench", str(example_file), "--plugin", str(EXAMPLE_PLUGIN), "-n", "3")
    assert bench.returncode == 0, bench.stderr
    missing = _cli("run", str(example_file))
    assert missing.returncode == 2 and "load the plugin that provides it" in missing.stderr
    inspected = _cli("inspect", str(example_file))
    assert inspected.returncode == 1 and "example::PointNorm" in inspected.stdout
    bad = _cli("run", str(example_file), "--plugin", "/nonexistent/libx.so")
    lines = [line for line in bad.stderr.splitlines() if line.strip()]
    assert bad.returncode == 2 and len(lines) == 1 and "cannot load the library" in lines[0], bad.stderr
