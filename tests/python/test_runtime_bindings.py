"""The pybind11 runtime bindings: pointrt._pointrt.Session."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper
import pytest

from pointrt import _pointrt


def _relu_model(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu1")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path))
    return path


def test_session_runs_and_names_io(tmp_path: Path) -> None:
    s = _pointrt.Session(str(_relu_model(tmp_path / "m.onnx")))
    assert s.input_names == ["x"] and s.output_names == ["y"]
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    y = s.run({"x": x})["y"]
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_non_contiguous_input_is_accepted(tmp_path: Path) -> None:
    s = _pointrt.Session(str(_relu_model(tmp_path / "m.onnx")))
    x = np.arange(-12, 12, dtype=np.float32).reshape(3, 8)[:, ::2].T.copy().T  # Fortran-ish view
    np.testing.assert_array_equal(s.run({"x": x.T})["y"], np.maximum(x.T, 0))


def test_errors_are_pointrt_errors_with_names(tmp_path: Path) -> None:
    s = _pointrt.Session(str(_relu_model(tmp_path / "m.onnx")))
    with pytest.raises(_pointrt.Error, match="input 'x' expects element type float32, got int64"):
        s.run({"x": np.zeros((2, 3), np.int64)})
    with pytest.raises(_pointrt.Error, match="not fed"):
        s.run({})
    with pytest.raises(_pointrt.Error, match="cannot open"):
        _pointrt.Session(str(tmp_path / "missing.onnx"))


def test_cli_run_writes_outputs_and_checks_reference(tmp_path: Path) -> None:
    cli = os.environ.get("POINTRT_CLI", "build/pointrt")
    model = _relu_model(tmp_path / "m.onnx")
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "ref.npz", y=np.maximum(x, 0))
    out = subprocess.run([cli, "run", str(model), "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path / "out"),
                          "--ref", str(tmp_path / "ref.npz")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "y.npy"), np.maximum(x, 0))
    np.savez(tmp_path / "bad.npz", y=np.maximum(x, 0) + 1)
    bad = subprocess.run([cli, "run", str(model), "--input", f"x={tmp_path / 'x.npy'}", "--ref", str(tmp_path / "bad.npz")],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and "FAILED" in bad.stdout
