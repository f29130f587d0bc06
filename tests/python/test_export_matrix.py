"""scripts/export_matrix.py's verdicts: the comparison rule of a cell and the check of a run against
the committed table (docs/export-matrix.md); the matrix itself runs as the ctest export_matrix."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("export_matrix", ROOT / "scripts" / "export_matrix.py")
matrix = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(matrix)


def row(model: str, exporter: str, status: str, **extra) -> dict:
    base = dict(model=model, torch="torch 2.15", exporter=exporter, size="ci", shape="8 points", status=status,
                reason="", export_s=1.25, nodes=10, error=1e-7)
    return {**base, **extra}


def test_float_outputs_are_relative_to_their_magnitude_and_integers_exact() -> None:
    want = np.array([1000.0, -2.0], dtype=np.float32)
    err, why = matrix.output_error(want + np.float32(0.05), want, "y")
    assert err == pytest.approx(5e-5, rel=1e-3) and why == ""
    err, why = matrix.output_error(want + np.float32(0.5), want, "y")
    assert err == pytest.approx(5e-4, rel=1e-3) and why == "y: error 5.0e-04 > 0.0001"
    small = np.array([1e-3], dtype=np.float32)  # below 1: the absolute error counts
    assert matrix.output_error(small + np.float32(5e-5), small, "y")[1] == ""
    idx = np.array([3, 1, 2], dtype=np.int64)
    assert matrix.output_error(idx.astype(np.int32), idx, "i") == (None, "")
    assert matrix.output_error(np.array([3, 2, 2]), idx, "i") == (None, "i: 1 of 3 integer values differ")
    assert "shape [2]" in matrix.output_error(idx[:2], idx, "i")[1]
    assert matrix.output_error(np.array([np.nan], np.float32), np.array([1.0], np.float32), "y")[1]


def test_check_flags_failed_cells_and_changed_verdicts_not_times(tmp_path: Path) -> None:
    committed = [row("a", "torchscript", "ok"), row("a", "dynamo", "ok"), row("b", "torchscript", "ok"),
                 row("b", "dynamo", "FAILED", reason="ExportError: x | y")]
    doc = tmp_path / "matrix.md"
    doc.write_text(matrix.markdown(committed, "cmd"))
    assert "FAILED: ExportError: x / y" in doc.read_text()
    rerun = [dict(r, export_s=9.0, error=3e-5) for r in committed[:3]]  # other times and errors: no problem
    assert matrix.check(rerun + committed[3:], str(doc)) == ["b / torch 2.15 dynamo: FAILED: ExportError: x / y"]
    assert matrix.check(rerun + [row("b", "dynamo", "ok")], str(doc)) == [
        f"b / torch 2.15 dynamo (ci): FAILED in {doc}, ok now"]
    problems = matrix.check(rerun[:1] + [row("a", "dynamo", "n/a", reason="no dynamo")] + committed[2:], str(doc))
    assert problems == ["b / torch 2.15 dynamo: FAILED: ExportError: x / y",
                        f"a / torch 2.15 dynamo (ci): ok in {doc}, n/a now"]
    dropped = matrix.check(rerun[1:] + committed[3:], str(doc))  # a cell that is not run is a problem too
    assert f"a / torch 2.15 TorchScript (ci): ok in {doc}, absent now" in dropped
    assert f"c / torch 2.15 TorchScript (ci): absent in {doc}, ok now" in matrix.check(
        committed[:3] + [row("c", "torchscript", "ok")], str(doc))
    # a column that did not run (torch 2.x tests off) is not compared
    assert matrix.check([row("a", "torchscript", "ok", torch="torch 1.13")], str(doc)) != []
    doc.write_text(matrix.markdown(committed + [row("a", "torchscript", "ok", torch="torch 1.13")], "cmd"))
    assert matrix.check([row("a", "torchscript", "ok", torch="torch 1.13")], str(doc)) == []
