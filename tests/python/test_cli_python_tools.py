"""`pointrt compare` and `pointrt check` in the C++ CLI hand over to the Python package."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("POINTRT_CLI", str(ROOT / "build" / "pointrt"))
MODEL = ROOT / "models" / "demo" / "shape_classifier.onnx"


def _run(cmd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)


def test_help_comes_from_the_python_tools() -> None:
    for tool in ("compare", "check"):
        r = _run([CLI, tool, "--help"])
        assert r.returncode == 0, r.stderr
        assert f"usage: pointrt {tool}" in r.stdout


def test_check_gives_the_python_tools_verdict() -> None:
    via_cli = _run([CLI, "check", str(MODEL), "--target", "tensorrt"])
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    direct = _run([sys.executable, "-m", "pointrt", "check", str(MODEL), "--target", "tensorrt"], env=env)
    assert via_cli.returncode == direct.returncode == 1  # pointrt's own operators need a TensorRT plugin
    assert via_cli.stdout == direct.stdout


def test_without_the_package_it_is_one_clear_line(tmp_path: Path) -> None:
    cli = tmp_path / "pointrt"
    shutil.copy(CLI, cli)  # outside the build folder: no checkout python/ on the path
    fake = tmp_path / "isolated_python"
    # the system interpreter, isolated (-I: no PYTHONPATH, no user site): it has no pointrt package
    fake.write_text("#!/bin/sh\nexec /usr/bin/python3 -I \"$@\"\n")
    fake.chmod(0o755)
    env = dict(os.environ, POINTRT_PYTHON=str(fake))
    env.pop("PYTHONPATH", None)
    r = _run([str(cli), "compare", str(MODEL)], env=env)
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    assert "pointrt compare needs the pointrt Python package" in lines[0]
