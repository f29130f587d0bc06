"""Sequence and optional values through the bindings (a list of arrays in and out; None for an
empty optional) and the CLI `run` (.npz arrays NAME.0, NAME.1, ... for a sequence input, output
files and --ref arrays of the same names)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper
import pytest

from pointrt import _pointrt
from test_cli_conventions import assert_error, cli


def _seq_type(elem: int = TensorProto.FLOAT) -> onnx.TypeProto:
    return helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, None))


def _model(path: Path) -> Path:
    """seq (seq(float)), opt (optional(float)) -> rev = seq reversed via SequenceInsert at 0,
    n = SequenceLength(seq), has = OptionalHasElement(opt), same = opt passed through."""
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    nodes = [
        helper.make_node("SplitToSequence", ["x"], ["parts"], axis=0, name="split"),
        helper.make_node("ConcatFromSequence", ["seq"], ["joined"], axis=0, name="concat"),
        helper.make_node("SequenceLength", ["seq"], ["n"], name="length"),
        helper.make_node("OptionalHasElement", ["opt"], ["has"], name="has"),
        helper.make_node("Identity", ["opt"], ["same"], name="same"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_value_info("seq", _seq_type()),
            helper.make_value_info("opt", opt_type),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
        ],
        [
            helper.make_value_info("parts", _seq_type()),
            helper.make_tensor_value_info("joined", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("n", TensorProto.INT64, []),
            helper.make_tensor_value_info("has", TensorProto.BOOL, []),
            helper.make_value_info("same", opt_type),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.save(model, str(path))
    return path


def test_lists_and_none_in_and_out(tmp_path: Path) -> None:
    s = _pointrt.Session(str(_model(tmp_path / "m.onnx")))
    kinds = {v.name: (v.kind, v.type) for v in s.inputs}
    assert kinds["seq"] == ("sequence", "seq(float32)") and kinds["opt"] == ("optional", "optional(float32)")
    a, b = np.arange(3, dtype=np.float32), np.ones((2,), np.float32)
    x = np.array([7, 8, 9], np.float32)
    out = s.run({"seq": [a, b], "opt": None, "x": x})
    assert isinstance(out["parts"], list) and len(out["parts"]) == 3
    np.testing.assert_array_equal(out["parts"][1], [8])
    np.testing.assert_array_equal(out["joined"], np.concatenate([a, b]))
    assert out["n"] == 2 and not out["has"] and out["same"] is None
    out = s.run({"seq": (a,), "opt": b, "x": x})  # a tuple is a sequence too
    assert out["has"] and out["n"] == 1
    np.testing.assert_array_equal(out["same"], b)


def test_wrong_kinds_are_one_clear_error(tmp_path: Path) -> None:
    s = _pointrt.Session(str(_model(tmp_path / "m.onnx")))
    x = np.zeros(3, np.float32)
    with pytest.raises(_pointrt.Error, match="input 'seq' is declared seq\\(float32\\): feed a list of arrays"):
        s.run({"seq": x, "opt": None, "x": x})
    with pytest.raises(_pointrt.Error, match="input 'x' is None, but it is declared float32"):
        s.run({"seq": [], "opt": None, "x": None})
    with pytest.raises(_pointrt.Error, match="input 'seq' expects a sequence of float32, got one of int64"):
        s.run({"seq": [np.zeros(2, np.int64)], "opt": None, "x": x})


def test_cli_run_reads_and_writes_sequences(tmp_path: Path) -> None:
    model = _model(tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", **{"seq.0": np.ones(2, np.float32), "seq.1": np.zeros(1, np.float32),
                                    "x": np.arange(3, dtype=np.float32)})
    r = cli("run", model, "--input", tmp_path / "in.npz", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "output parts: a sequence of 3 float32 tensors" in r.stdout and "output same: an empty optional" in r.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "parts.2.npy"), [2])
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "joined.npy"), [1, 1, 0])
    assert not (tmp_path / "out" / "same.npy").exists()
    ref = {"parts.0": [0], "parts.1": [1], "parts.2": [2], "joined": [1, 1, 0], "n": 2, "has": False}
    np.savez(tmp_path / "ref.npz", **{k: np.array(v, np.float32 if k.startswith(("parts", "joined")) else None)
                                      for k, v in ref.items()})
    r = cli("run", model, "--input", tmp_path / "in.npz", "--ref", tmp_path / "ref.npz")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK: 6/6 outputs match the reference" in r.stdout
    np.savez(tmp_path / "bad.npz", **{k: np.array(v, np.float32 if k.startswith(("parts", "joined")) else None)
                                      for k, v in {**ref, "parts.3": [3], "same": [1]}.items()})
    r = cli("run", model, "--input", tmp_path / "in.npz", "--ref", tmp_path / "bad.npz")
    assert r.returncode == 1 and "has 'parts.3'" in r.stdout and "has 'same'" in r.stdout, r.stdout
    assert_error(cli("run", model, "--input", tmp_path / "in.npz", "--labels", tmp_path / "in.npz"),
                 "not supported for models with sequence or optional values")
