"""float8 and int4 tensors through the bindings: numpy has no such dtypes, ml_dtypes' arrays are
fed and returned (pointrt keeps int4 sign-extended, ml_dtypes in the low nibble), and without
ml_dtypes a float8 output is a one-line error."""
from __future__ import annotations

import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper
import pytest

from pointrt import _pointrt


def _cast_model(path: Path) -> Path:
    cast = lambda src, dst, to: helper.make_node("Cast", [src], [dst], to=to)  # noqa: E731
    graph = helper.make_graph(
        [
            cast("f8", "f8_float", TensorProto.FLOAT),
            cast("i4", "i4_float", TensorProto.FLOAT),
            cast("x", "x_int4", TensorProto.INT4),
            cast("x", "x_f8", TensorProto.FLOAT8E5M2),
        ],
        "g",
        [
            helper.make_tensor_value_info("f8", TensorProto.FLOAT8E4M3FN, [3]),
            helper.make_tensor_value_info("i4", TensorProto.INT4, [3]),
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
        ],
        [
            helper.make_tensor_value_info("f8_float", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("i4_float", TensorProto.FLOAT, [3]),
            helper.make_tensor_value_info("x_int4", TensorProto.INT4, [3]),
            helper.make_tensor_value_info("x_f8", TensorProto.FLOAT8E5M2, [3]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    onnx.save(model, str(path))
    return path


def _feeds() -> dict:
    return {
        "f8": np.array([1.5, -448, 0.01], dtype=ml_dtypes.float8_e4m3fn),
        "i4": np.array([-8, -1, 7], dtype=ml_dtypes.int4),
        "x": np.array([-3.4, 2.5, 100.0], dtype=np.float32),
    }


def test_ml_dtypes_arrays_in_and_out(tmp_path: Path) -> None:
    s = _pointrt.Session(str(_cast_model(tmp_path / "m.onnx")))
    feeds = _feeds()
    out = s.run(feeds)
    np.testing.assert_array_equal(out["f8_float"], feeds["f8"].astype(np.float32))
    np.testing.assert_array_equal(out["i4_float"], [-8, -1, 7])
    assert out["x_int4"].dtype == np.dtype(ml_dtypes.int4)
    np.testing.assert_array_equal(out["x_int4"].astype(np.int8), [-3, 2, 7])  # clamped, ties to even
    assert out["x_f8"].dtype == np.dtype(ml_dtypes.float8_e5m2)
    np.testing.assert_array_equal(out["x_f8"], np.array([-3.4, 2.5, 100.0]).astype(ml_dtypes.float8_e5m2))
    assert [str(i.dtype) for i in s.inputs] == ["float8_e4m3fn", "int4", "float32"]


def test_without_ml_dtypes_the_error_names_the_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = _pointrt.Session(str(_cast_model(tmp_path / "m.onnx")))
    feeds = {k: v for k, v in _feeds().items()}
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import ml_dtypes now fails
    assert [i.dtype for i in s.inputs][:2] == ["float8e4m3fn", "int4"]
    with pytest.raises(_pointrt.Error, match="cannot return element type int4 to numpy: numpy has no such dtype"):
        s.run(feeds)
