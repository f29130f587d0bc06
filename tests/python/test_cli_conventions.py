"""The `pointrt` CLI behaves like the tools users know (issue 12, item 6): --version, exit status
0 / 1 / 2 for every subcommand, a clear message for an unknown subcommand, --help listing every
flag with its default, --json on run, inspect and bench, and strict parsing of every argument."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import List

import numpy as np
import onnx
import pytest

from hostile_models import relu, unsupported_operator

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("POINTRT_CLI", str(ROOT / "build" / "pointrt"))
DEMO = ROOT / "models" / "demo" / "shape_classifier.onnx"
SUBCOMMANDS = ["inspect", "run", "bench", "list-ops"]


def cli(*args: object, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def assert_error(r: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit status 2 and one line 'error: ...' on stderr holding every fragment."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, r.stderr
    for f in fragments:
        assert f in errors[0], (f, errors[0])


@pytest.fixture(scope="module")
def relu_model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "relu.onnx"
    onnx.save(relu(["N", 3]), str(path))
    return path


def test_version_names_pointrt_onnx_onednn_and_the_build() -> None:
    r = cli("--version")
    assert r.returncode == 0
    for word in ("pointrt 0.", "ONNX 1.", "oneDNN ", "protobuf ", "compiler ", "build "):
        assert word in r.stdout, r.stdout


def test_unknown_and_missing_subcommands_exit_2() -> None:
    assert_error(cli("frobnicate", "m.onnx"), "unknown subcommand 'frobnicate'", "inspect, run, bench, list-ops")
    assert_error(cli(), "a subcommand is required")
    assert_error(cli("--no-such-flag"))


@pytest.mark.parametrize("sub", SUBCOMMANDS)
def test_help_lists_every_flag_with_its_default(sub: str) -> None:
    r = cli(sub, "--help")
    assert r.returncode == 0
    assert "Exit status:" in r.stdout
    options = [line for line in r.stdout.splitlines() if re.match(r"^  -", line)]
    assert options
    for line in options:
        spec = line.strip().split("  ")[0]  # "--threads INT:INT>=0=0", the description follows
        if spec.split()[0] in ("-h,--help", "--profile", "--markdown", "--passes"):
            continue  # flags: present or not
        assert "=" in spec, line


def test_inspect_documents_and_uses_its_exit_status(tmp_path: Path, relu_model: Path) -> None:
    assert cli("inspect", relu_model).returncode == 0
    onnx.save(unsupported_operator(), str(tmp_path / "u.onnx"))
    r = cli("inspect", tmp_path / "u.onnx")
    assert r.returncode == 1 and "unsupported: 1 node(s)" in r.stdout
    assert "1 some node is unsupported" in cli("inspect", "--help").stdout
    assert_error(cli("inspect", tmp_path / "missing.onnx"), "missing.onnx", "cannot open")


@pytest.mark.parametrize("sub", ["run", "inspect", "bench", "list-ops"])
def test_json_to_stdout_and_to_a_file(sub: str, tmp_path: Path, relu_model: Path) -> None:
    args: List[object] = [sub] if sub == "list-ops" else [sub, relu_model]
    if sub == "bench":
        args += ["--warmup", "0", "-n", "2"]
    r = cli(*args, "--json", "-")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)  # nothing but the JSON on stdout
    if sub == "run":
        assert summary["outputs"][0]["name"] == "y" and summary["outputs"][0]["shape"] == [1, 3]
    if sub == "inspect":
        assert summary["inputs"] == [{"name": "x", "dtype": "float32", "shape": ["N", 3]}]
        assert summary["unsupported"] == []
    if sub == "bench":
        assert summary["iterations"] == 2 and summary["median_ms"] >= 0
    r = cli(*args, "--json", tmp_path / "s.json")
    assert r.returncode == 0 and json.loads((tmp_path / "s.json").read_text())
    assert_error(cli(*args, "--json", tmp_path / "no" / "dir" / "s.json"), "s.json", "cannot write")


def test_run_with_a_failing_reference_exits_1_and_reports_it_in_json(tmp_path: Path, relu_model: Path) -> None:
    np.save(tmp_path / "x.npy", np.ones((2, 3), np.float32))
    np.savez(tmp_path / "ref.npz", y=np.zeros((2, 3), np.float32))
    r = cli("run", relu_model, "--input", f"x={tmp_path / 'x.npy'}", "--ref", tmp_path / "ref.npz", "--json",
            tmp_path / "r.json")
    assert r.returncode == 1 and "FAILED" in r.stdout
    assert json.loads((tmp_path / "r.json").read_text())["ref_ok"] is False


@pytest.mark.parametrize("args, fragment", [
    (["--threads", "-3"], "--threads: must be an integer >= 0, got '-3'"),
    (["--threads", "two"], "--threads"),
    (["--bin-fields", "0"], "--bin-fields"),
    (["--top", "0"], "--top: must be an integer >= 1"),
    (["--atol", "-1"], "--atol"),
    (["--rtol", "nan"], "--rtol"),
    (["--seed", "-1"], "--seed"),
    (["--max-tensor-bytes", "0"], "--max-tensor-bytes"),
    (["--max-tensor-bytes", "lots"], "--max-tensor-bytes"),
    (["--nonfinite", "sometimes"], "--nonfinite"),
    (["--dim", "N"], "--dim 'N': use SYMBOL=VALUE"),
    (["--dim", "N=1e12"], "'1e12' is not a non-negative integer"),
    (["--dim", "N=-4"], "'-4' is not a non-negative integer"),
    (["--dim", "N=3", "--dim", "N=4"], "'N' is given twice"),
    (["--input", "z=x.npy"], "the model has no input 'z' (inputs: x)"),
    (["--input", "x="], "no file after '='"),
    (["--input", "x=a.txt"], "unknown input file type"),
])
def test_run_arguments_are_parsed_strictly(args: List[str], fragment: str, relu_model: Path) -> None:
    assert_error(cli("run", relu_model, *args), fragment)


@pytest.mark.parametrize("args, fragment", [
    (["--iterations", "0"], "--iterations"),
    (["--warmup", "-1"], "--warmup"),
    (["--profile-nodes", "-2"], "--profile-nodes"),
])
def test_bench_arguments_are_parsed_strictly(args: List[str], fragment: str, relu_model: Path) -> None:
    assert_error(cli("bench", relu_model, *args), fragment)


def test_unknown_dim_symbol_lists_the_models_symbols() -> None:
    r = cli("run", DEMO, "--dim", "N=16384")
    assert_error(r, "--dim 'N=16384'", "no symbolic dimension 'N'", "(its symbols: num_points)")


def test_readme_dim_example_runs_on_the_demo() -> None:
    readme = (ROOT / "README.md").read_text()
    dims = re.findall(r"--dim (\w+=\d+)", readme)
    assert dims and all(d.startswith("num_points=") for d in dims), dims
    r = cli("bench", DEMO, "--threads", "1", "--warmup", "0", "-n", "1", "--dim", "num_points=256")
    assert r.returncode == 0, r.stderr
