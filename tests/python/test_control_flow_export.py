"""Control flow in files exported by torch 1.13: a PointNet++-style classifier (models/squeeze_if.py)
whose squeeze of a dynamic axis becomes an ONNX If, and torch.jit.script loops that become ONNX
Loop, each loaded and run by pointrt and compared with PyTorch."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import torch
import torch.nn as nn

from models import squeeze_if
from pointrt import _pointrt

CLOUD = 64  # points per cloud: the group-all pooling window is traced with this size


def _op_types(graph: onnx.GraphProto) -> list[str]:
    types = []
    for n in graph.node:
        types.append(n.op_type)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                types += _op_types(a.g)
    return types


def _assert_close(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.abs(want).max() + 1))


def test_dynamic_squeeze_exports_an_if_that_pointrt_runs(tmp_path: Path) -> None:
    model = squeeze_if.make(CLOUD)
    path = tmp_path / "cls_if.onnx"
    squeeze_if.export(model, path)
    assert "If" in _op_types(onnx.load(str(path)).graph)
    session = _pointrt.Session(str(path))
    for batch in (2, 1, 3):
        x = torch.rand(batch, CLOUD, 3, generator=torch.Generator().manual_seed(batch)) * 2 - 1
        with torch.no_grad():
            want = model(x).numpy()
        _assert_close(session.run({"points": x.numpy()})["logits"], want)


class Refine(nn.Module):
    """for-loop with a trip count from the input's shape, and a while-loop with a data-dependent exit."""

    def __init__(self) -> None:
        super().__init__()
        self.step = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(x.size(0)):
            x = x + torch.tanh(self.step(x))
        while bool(x.abs().sum() < 100.0):
            x = x * 2.0
        return x


def test_scripted_loops_export_a_loop_that_pointrt_runs(tmp_path: Path) -> None:
    torch.manual_seed(2)
    model = torch.jit.script(Refine().eval())
    x0 = torch.rand(3, 8) * 0.1
    path = tmp_path / "refine_loop.onnx"
    torch.onnx.export(model, (x0,), str(path), input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "rows"}}, opset_version=13)
    assert _op_types(onnx.load(str(path)).graph).count("Loop") == 2
    session = _pointrt.Session(str(path))
    for rows in (3, 1, 5):
        x = torch.rand(rows, 8, generator=torch.Generator().manual_seed(rows)) * 0.1
        with torch.no_grad():
            want = model(x).numpy()
        _assert_close(session.run({"x": x.numpy()})["y"], want)
