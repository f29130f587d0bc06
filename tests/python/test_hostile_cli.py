"""Every hostile input of issue 12 through the CLI: a one-line error and exit status 2 (or the
documented warning), no crash, no hang, no file read outside the model's folder, no output
written from a failed run, nothing silently wrong."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest

from hostile_models import hostile_files, hostile_models, relu
from test_cli_conventions import DEMO, assert_error, cli

MODEL_ERRORS = {  # file of hostile_models() -> fragments of its one-line error (run with -o)
    "expand_wrap_folded_then_slice.onnx": ["expand_big", "[4294967296, 4294967296, 4]", "more elements than int64"],
    "expand_huge_folded_then_slice.onnx": ["node 'expand_big' (Expand)", "output 0 'e'", "above the limit"],
    "expand_wrap_at_run_time.onnx": ["expand_wrap", "[4294967296, 4294967296, 4]"],
    "input_declared_2pow32_squared.onnx": ["random input 'x'", "[4294967296, 4294967296]", "more elements"],
    "initializer_1e12_with_4_bytes.onnx": ["tensor 'w'", "has 4 bytes of data, expected 4000000000000"],
    "initializer_negative_dim.onnx": ["tensor 'w'", "[-4]", "negative"],
    "external_data_symlink.onnx": ["tensor 'w'", "weights/secret.bin", "outside the model's folder"],
    "external_data_absolute.onnx": ["tensor 'w'", "'/etc/passwd' must be a relative path"],
    "external_data_dotdot.onnx": ["tensor 'w'", "outside the model's folder"],
    "external_data_offset_not_a_number.onnx": ["tensor 'w'", "external data offset: 'abc' is not a non-negative"],
    "external_data_offset_huge.onnx": ["tensor 'w'", "external data offset", "does not fit in 64 bits"],
    "external_data_length_negative.onnx": ["tensor 'w'", "external data length: '-16'"],
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """model/ holds every hostile model, w.bin, and weights -> ../outside (with secret.bin)."""
    root = tmp_path_factory.mktemp("hostile")
    (root / "model").mkdir()
    (root / "outside").mkdir()
    np.arange(4, dtype="<f4").tofile(root / "outside" / "secret.bin")
    np.arange(4, dtype="<f4").tofile(root / "model" / "w.bin")
    os.symlink(root / "outside", root / "model" / "weights")
    for name, model in hostile_models().items():
        onnx.save(model, str(root / "model" / name))
    return root


@pytest.mark.parametrize("name", sorted(MODEL_ERRORS))
def test_hostile_model_is_a_one_line_error_and_writes_nothing(name: str, folder: Path, tmp_path: Path) -> None:
    model = folder / "model" / name
    r = cli("run", model, "-o", tmp_path / "out")
    assert_error(r, str(model), *MODEL_ERRORS[name])
    assert "stoll" not in r.stderr and "basic_string" not in r.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_external_data_outside_is_read_once_its_folder_is_allowed(folder: Path) -> None:
    r = cli("run", folder / "model" / "external_data_symlink.onnx", "--external-data-dir", folder / "outside")
    assert r.returncode == 0, r.stderr
    assert "output y: float32 [4]" in r.stdout


def test_fifo_and_directory_never_hang(tmp_path: Path) -> None:
    from hostile_models import external_data

    os.mkfifo(tmp_path / "pipe.bin")
    (tmp_path / "dir.bin").mkdir()
    for location, kind in (("pipe.bin", "is a FIFO"), ("dir.bin", "is a directory")):
        onnx.save(external_data(location), str(tmp_path / "m.onnx"))
        assert_error(cli("run", tmp_path / "m.onnx", timeout=60), "tensor 'w'", location, kind)
    os.mkfifo(tmp_path / "fifo.onnx")
    assert_error(cli("inspect", tmp_path / "fifo.onnx", timeout=60), "fifo.onnx", "is a FIFO")
    assert_error(cli("inspect", tmp_path / "dir.bin", timeout=60), "dir.bin", "is a directory")


@pytest.mark.parametrize("name, fragments", [
    ("trailing_garbage_header.npy", ["trailing characters after the header dict"]),
    ("object_dtype.npy", ["unsupported npy dtype '|O'"]),
    ("shape_wraps.npy", ["more elements than int64"]),
    ("data_truncated.npy", ["8 bytes", "declares 4000"]),
    ("no_xyz.ply", ["no 'x' field"]),
    ("claims_4e12_points.ply", ["claims 4000000000000 points"]),
    ("bad_number.ply", ["'3x' is not a number"]),
    ("no_xyz.pcd", ["no 'x' field"]),
    ("width_disagrees_with_points.pcd", ["WIDTH 3 x HEIGHT 1 = 3 disagrees with POINTS 2"]),
    ("claims_4e12_points.pcd", ["claims 4000000000000 points"]),
    ("size_not_a_number.pcd", ["SIZE", "'four'"]),
    ("not_whole_points.bin", ["7 bytes is not a whole number"]),
])
def test_malformed_input_files_are_errors(name: str, fragments, tmp_path: Path) -> None:
    (tmp_path / name).write_bytes(hostile_files()[name])
    assert_error(cli("run", DEMO, "--input", f"points={tmp_path / name}"), name, *fragments)


def test_big_endian_npy_is_converted_not_misread(tmp_path: Path) -> None:
    cloud = np.load(DEMO.parent / "samples" / "1_box.npy")
    np.save(tmp_path / "le.npy", cloud.astype("<f4"))
    np.save(tmp_path / "be.npy", cloud.astype(">f4"))
    outs = []
    for f in ("le", "be"):
        r = cli("run", DEMO, "--input", f"points={tmp_path / f}.npy", "-o", tmp_path / f)
        assert r.returncode == 0, r.stderr
        outs.append(np.load(tmp_path / f / "logits.npy"))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert np.abs(outs[0]).max() < 1e3


def test_nan_point_cloud_warns_by_default_and_follows_nonfinite(tmp_path: Path) -> None:
    cloud = np.load(DEMO.parent / "samples" / "1_box.npy")
    cloud[...] = np.nan
    np.save(tmp_path / "nan.npy", cloud)
    arg = f"points={tmp_path / 'nan.npy'}"
    n = cloud.size
    r = cli("run", DEMO, "--input", arg)
    assert r.returncode == 0
    assert f"warning: input 'points' ({tmp_path / 'nan.npy'}): {n} of {n} values are NaN or infinite, " \
           f"the first at [0, 0, 0]" in r.stderr
    assert_error(cli("run", DEMO, "--input", arg, "--nonfinite", "error"), "input 'points'", f"{n} of {n}")
    quiet = cli("run", DEMO, "--input", arg, "--nonfinite", "allow")
    assert quiet.returncode == 0 and "NaN" not in quiet.stderr


def test_npz_lacking_an_input_is_an_error_and_extra_arrays_a_warning(tmp_path: Path) -> None:
    cloud = np.load(DEMO.parent / "samples" / "1_box.npy")
    np.savez(tmp_path / "wrong.npz", cloud=cloud)
    assert_error(cli("run", DEMO, "--input", tmp_path / "wrong.npz"), "wrong.npz",
                 "no array for the model input 'points'", "arrays: cloud")
    np.savez(tmp_path / "extra.npz", points=cloud, colours=cloud)
    r = cli("run", DEMO, "--input", tmp_path / "extra.npz")
    assert r.returncode == 0 and "array 'colours' is not a model input" in r.stderr


def test_huge_dim_is_refused_before_allocating() -> None:
    assert_error(cli("run", DEMO, "--dim", "num_points=1000000000000"), "random input 'points'",
                 "[1, 1000000000000, 3]", "above the limit")
    assert_error(cli("run", DEMO, "--dim", "num_points=1000", "--max-tensor-bytes", "4K"), "random input 'points'",
                 "above the limit of 4096 bytes")


def test_random_input_above_max_tensor_bytes_names_the_input(tmp_path: Path) -> None:
    onnx.save(relu([1000]), str(tmp_path / "r.onnx"))
    assert cli("run", tmp_path / "r.onnx", "--max-tensor-bytes", "4000").returncode == 0
    assert_error(cli("run", tmp_path / "r.onnx", "--max-tensor-bytes", "3999"), "random input 'x'", "above the limit")
