"""Hostile input through the Python bindings (issue 12, items 3, 4, 7): every error is a
pointrt.Error naming the input, file or node; arrays of any layout and byte order are converted,
never misread; NaN/Inf inputs follow the nonfinite policy; Session exposes typed inputs/outputs."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest

import pointrt
from hostile_models import TWO_32, expand_at_run_time, expand_then_slice, external_data, relu

ROOT = Path(__file__).resolve().parents[2]


def _save(model: onnx.ModelProto, path: Path) -> str:
    onnx.save(model, str(path))
    return str(path)


@pytest.fixture()
def relu_session(tmp_path: Path) -> pointrt.Session:
    return pointrt.Session(_save(relu(["N", 3]), tmp_path / "relu.onnx"))


def _one_line_error(excinfo: pytest.ExceptionInfo, *fragments: str) -> None:
    msg = str(excinfo.value)
    assert "\n" not in msg, msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"


def test_errors_are_pointrt_errors(tmp_path: Path) -> None:
    from pointrt import _pointrt

    assert _pointrt.Error is pointrt.SessionError
    assert issubclass(pointrt.SessionError, pointrt.Error) and issubclass(pointrt.SessionError, RuntimeError)
    assert issubclass(pointrt.ExportError, pointrt.Error)
    with pytest.raises(pointrt.Error) as e:
        pointrt.Session(str(tmp_path / "missing.onnx"))
    _one_line_error(e, "missing.onnx", "cannot open")


@pytest.mark.parametrize("args, fragment", [
    ((123,), "path must be a str or os.PathLike, got int"),
    ((b"m.onnx",), "must be a str, not bytes"),
])
def test_bad_constructor_arguments_name_the_argument(args, fragment) -> None:
    with pytest.raises(pointrt.Error) as e:
        pointrt.Session(*args)
    _one_line_error(e, fragment)


def test_bad_options_name_the_option(tmp_path: Path) -> None:
    path = _save(relu(["N", 3]), tmp_path / "relu.onnx")
    for kwargs, fragment in [({"threads": -3}, "threads must be in [0"), ({"threads": "2"}, "threads must be an int"),
                             ({"max_tensor_bytes": 0}, "max_tensor_bytes must be in [1"),
                             ({"external_data_dirs": [3]}, "external_data_dirs must be a str")]:
        with pytest.raises(pointrt.Error) as e:
            pointrt.Session(path, **kwargs)
        _one_line_error(e, fragment)
    assert pointrt.Session(Path(path)).input_names == ["x"]  # os.PathLike


def test_session_exposes_names_dtypes_and_shapes(tmp_path: Path) -> None:
    s = pointrt.Session(_save(relu(["N", 3]), tmp_path / "relu.onnx"))
    (x,), (y,) = s.inputs, s.outputs
    assert (x.name, x.dtype, x.shape) == ("x", np.dtype("float32"), ["N", 3])
    assert (y.name, y.dtype, y.shape) == ("y", np.dtype("float32"), ["N", 3])  # from ONNX shape inference
    assert "ValueInfo(name='x'" in repr(x)


@pytest.mark.parametrize("make", [
    lambda a: a.astype(">f4"),                      # big-endian
    lambda a: np.asfortranarray(a),                 # Fortran order
    lambda a: np.repeat(a, 2, axis=0)[::2],         # strided rows
    lambda a: a.T.copy().T,                         # transposed view
    lambda a: np.frombuffer(b"\0" + a.tobytes(), "<f4", offset=1).reshape(a.shape),  # unaligned
])
def test_any_layout_and_byte_order_gives_the_same_result(relu_session, make) -> None:
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)
    fed = make(x)
    np.testing.assert_array_equal(fed, x)
    np.testing.assert_array_equal(relu_session.run({"x": fed})["y"], np.maximum(x, 0))


@pytest.mark.parametrize("value, fragment", [
    (None, "input 'x' is None"),
    ("points.npy", "input 'x' is a str"),
    (b"\0\0\0\0", "input 'x' is a bytes"),
    (np.array([[object()] * 3]), "input 'x' has numpy dtype object"),
    (np.array([["a", "b", "c"]]), "input 'x' has numpy dtype <U1"),
    (np.zeros((1, 3), np.complex64), "input 'x' has numpy dtype complex64"),
    ([[1.0, 2.0, 3.0]], "input 'x' expects element type float32, got float64"),
    (np.zeros((1, 3), np.float64), "input 'x' expects element type float32, got float64"),
])
def test_feeds_that_are_no_matching_array_name_the_input(relu_session, value, fragment) -> None:
    with pytest.raises(pointrt.Error) as e:
        relu_session.run({"x": value})
    _one_line_error(e, fragment)


def test_feeds_must_be_a_dict_of_names(relu_session) -> None:
    with pytest.raises(pointrt.Error) as e:
        relu_session.run([np.zeros((1, 3), np.float32)])
    _one_line_error(e, "feeds must be a dict")
    with pytest.raises(pointrt.Error) as e:
        relu_session.run({0: np.zeros((1, 3), np.float32)})
    _one_line_error(e, "keys must be input names")


def test_nonfinite_points_warn_by_default_and_follow_the_policy(relu_session) -> None:
    x = np.full((5, 3), np.nan, np.float32)
    x[0, 0] = 1.0
    with pytest.warns(RuntimeWarning, match=r"input 'x': 14 of 15 values are NaN or infinite, the first at \[0, 1\]"):
        relu_session.run({"x": x})
    with pytest.raises(pointrt.Error) as e:
        relu_session.run({"x": x}, nonfinite="error")
    _one_line_error(e, "input 'x'", "14 of 15", "[0, 1]")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        relu_session.run({"x": x}, nonfinite="allow")
        relu_session.run({"x": np.ones((2, 3), np.float32)})
    with pytest.raises(pointrt.Error):
        relu_session.run({"x": x}, nonfinite="maybe")


def test_huge_shapes_are_errors_naming_node_and_shape(tmp_path: Path) -> None:
    folded = pointrt.Session(_save(expand_then_slice([TWO_32, TWO_32, 4]), tmp_path / "e.onnx"))
    with pytest.raises(pointrt.Error) as e:
        folded.run({})
    _one_line_error(e, "e.onnx", "expand_big", "[4294967296, 4294967296, 4]")
    at_run = pointrt.Session(_save(expand_at_run_time([1 << 20, 1 << 20, 1 << 20]), tmp_path / "r.onnx"))
    with pytest.raises(pointrt.Error) as e:
        at_run.run({"x": np.ones(1, np.float32)})
    _one_line_error(e, "r.onnx", "node 'expand_wrap' (Expand)", "output 0 'y'", "above the limit")
    small = pointrt.Session(_save(relu(["N"]), tmp_path / "s.onnx"), max_tensor_bytes=1000)
    with pytest.raises(pointrt.Error) as e:
        small.run({"x": np.ones(1000, np.float32)})
    _one_line_error(e, "node 'relu1' (Relu)", "float32 [1000]", "above the limit of 1000 bytes")


def test_external_data_symlink_out_of_the_folder(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "model").mkdir()
    np.arange(4, dtype="<f4").tofile(tmp_path / "outside" / "secret.bin")
    os.symlink(tmp_path / "outside", tmp_path / "model" / "weights")
    path = _save(external_data("weights/secret.bin"), tmp_path / "model" / "m.onnx")
    with pytest.raises(pointrt.Error) as e:
        pointrt.Session(path)
    _one_line_error(e, "m.onnx", "tensor 'w'", "outside the model's folder")
    s = pointrt.Session(path, external_data_dirs=[str(tmp_path / "outside")])
    np.testing.assert_array_equal(s.run({})["y"], np.arange(4, dtype=np.float32))
    bad = _save(external_data("w.bin", offset="abc"), tmp_path / "model" / "o.onnx")
    with pytest.raises(pointrt.Error) as e:
        pointrt.Session(bad)
    _one_line_error(e, "o.onnx", "tensor 'w'", "external data offset", "'abc'")


def _python(code: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    # -S: no site-packages, so no installed pointrt can stand in for the copy under test.
    return subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, cwd=cwd)


def test_module_from_POINTRT_EXT_DIR_is_found_without_any_call(tmp_path: Path) -> None:
    # A package without the compiled module, and the module in another folder.
    shutil.copytree(ROOT / "python" / "pointrt", tmp_path / "pkg" / "pointrt",
                    ignore=shutil.ignore_patterns("_pointrt*.so", "__pycache__"))
    (tmp_path / "ext").mkdir()
    for so in (ROOT / "python" / "pointrt").glob("_pointrt*.so"):
        shutil.copy(so, tmp_path / "ext")
    numpy_dir = str(Path(np.__file__).parent.parent)
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join([str(tmp_path / "pkg"), numpy_dir])}
    absent = _python("import pointrt; pointrt.Session", env, tmp_path)
    assert absent.returncode != 0 and "ImportError: pointrt.Session needs the compiled runtime" in absent.stderr
    assert "pip install ./python" in absent.stderr
    found = _python("from pointrt import _pointrt; import pointrt; print(pointrt.Session.__name__)",
                    {**env, "POINTRT_EXT_DIR": str(tmp_path / "ext")}, tmp_path)
    assert found.returncode == 0 and found.stdout.strip() == "Session", found.stderr
