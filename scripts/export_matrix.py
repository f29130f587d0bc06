#!/usr/bin/env python3
"""Issue 9's export matrix: every model of models/export_cases.py x every exporter of the
installed torch, exported with pointrt.export, run in pointrt and compared with PyTorch.

    .venv/bin/python scripts/export_matrix.py --size ci --json build/matrix-1.13.json
    .venv-torch2/bin/python scripts/export_matrix.py --size ci --json build/matrix-2.json
    .venv/bin/python scripts/export_matrix.py --merge build/matrix-*.json --markdown docs/export-matrix.md
    .venv/bin/python scripts/export_matrix.py --merge build/matrix-*.json --check docs/export-matrix.md

A cell passes when every float output is within 1e-4 of PyTorch's relative to the output's
magnitude (max |pointrt - torch| / max(max |torch|, 1)) and every integer output is equal. A cell
that cannot exist is "n/a" with why; a failing one is "FAILED" with the one-line reason.
``--check`` exits 1 if a cell FAILED or if the cells' verdicts differ from the file's table."""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT)]

TOLERANCE = 1e-4
EXPORTERS = ("torchscript", "dynamo")
EXPORTER_TITLES = {"torchscript": "TorchScript", "dynamo": "dynamo"}
Row = Dict[str, object]
NOT_RUN = "(not run)"
SIZE_NOTES = {"ci": "The reduced sizes of the tests (models/export_cases.py); checked by the ctest.",
              "full": "The published sizes, for the models whose CI size is smaller (the others are exported at their "
                      "published size above); not run in CI."}


def torch_label() -> str:
    import torch
    return "torch " + ".".join(torch.__version__.split(".")[:2])  # the column: major.minor


def output_error(got: np.ndarray, want: np.ndarray, name: str) -> Tuple[Optional[float], str]:
    """(relative error of a float output or None for an exact integer one, the reason it fails or "")."""
    if got.shape != want.shape:
        return None, f"{name}: shape {list(got.shape)}, PyTorch {list(want.shape)}"
    if not np.issubdtype(want.dtype, np.floating):
        wrong = int(np.count_nonzero(got.astype(np.int64) != want.astype(np.int64)))
        return None, f"{name}: {wrong} of {want.size} integer values differ" if wrong else ""
    err = float(np.abs(got.astype(np.float64) - want).max(initial=0.0)) / max(float(np.abs(want).max(initial=0)), 1.0)
    return err, f"{name}: error {err:.1e} > {TOLERANCE:g}" if not err <= TOLERANCE else ""


def compare(case, path: str) -> Tuple[float, List[str]]:
    """Run the file in pointrt on the case's second frame; (worst float error, failure reasons)."""
    import torch
    import pointrt
    with torch.no_grad():
        want = case.model(*case.check_inputs)
    want = [want] if isinstance(want, torch.Tensor) else list(want)
    feeds = {n: t.numpy() for n, t in zip(case.input_names, case.check_inputs)}
    got = pointrt.Session(path, plugins=case.plugins).run(feeds)
    worst, reasons = 0.0, []
    for name, w in zip(case.output_names, want):
        err, why = output_error(np.asarray(got[name]), w.numpy(), name)
        worst = max(worst, err or 0.0)
        reasons += [why] if why else []
    return worst, reasons


def one_line(e: BaseException) -> str:
    text = (str(e).strip().splitlines() or [""])[0]
    return f"{type(e).__name__}: {text}"[:200]


def check_disagreements(path: str, needs_plugins: bool) -> List[str]:
    """`pointrt check`'s verdicts against the real thing: pointrt must be deployable (the cell runs it)
    unless the file needs a plugin (check knows none), and the onnxruntime verdict must equal whether
    ONNX Runtime builds a session (issue 10's goal)."""
    import onnxruntime as ort
    from pointrt.check import check
    reasons = []
    if check(path, "pointrt").deployable == needs_plugins:
        reasons.append("check says pointrt " + ("runs the file without its plugin" if needs_plugins
                                                 else "cannot run the file"))
    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        ort_runs = True
    except Exception:  # noqa: BLE001 - any refusal (custom domain, missing kernel)
        ort_runs = False
    if check(path, "onnxruntime").deployable != ort_runs:
        reasons.append(f"check's onnxruntime verdict differs from ONNX Runtime (which {'builds' if ort_runs else 'refuses'} it)")
    return reasons


def run_cell(name: str, exporter: str, size: str, out_dir: str) -> Row:
    import onnx
    import pointrt
    from models.export_cases import CASES
    row: Row = dict(model=name, torch=torch_label(), exporter=exporter, size=size)
    case = None
    try:
        case = CASES[name](size)
        row["shape"] = case.size
        path = os.path.join(out_dir, f"{name}_{exporter}.onnx")
        start, cpu_start = time.perf_counter(), time.process_time()
        report = pointrt.export(case.model, case.inputs, path, input_names=case.input_names,
                                output_names=case.output_names, exporter=exporter, verify=False, quiet=True,
                                **case.export_kwargs)
        row["export_s"] = round(time.perf_counter() - start, 2)
        row["export_cpu_s"] = round(time.process_time() - cpu_start, 2)
        row["nodes"] = len(onnx.load(path, load_external_data=False).graph.node)
        row["error"], reasons = compare(case, path)
        reasons += [f"{n} pointrt {op} nodes, expected {want}" for op, want in case.pointrt_nodes.items()
                    if (n := report.pointrt_nodes.get(op, 0)) != want]
        reasons += check_disagreements(path, needs_plugins=bool(case.plugins))
        row["status"], row["reason"] = ("FAILED", "; ".join(reasons)) if reasons else ("ok", "")
    except Exception as e:  # noqa: BLE001 - every failure becomes the cell's reason
        traceback.print_exc()
        row.update(status="FAILED", reason=one_line(e))
    finally:
        if case is not None and case.cleanup:
            case.cleanup()
    return row


def exporter_missing(exporter: str) -> str:
    """Why the installed torch has no such exporter, or ""."""
    from pointrt._export_backends import dynamo_available, torchscript_available
    if exporter == "dynamo" and not dynamo_available():
        return f"{torch_label()} has no dynamo exporter (needs torch >= 2.6 with onnxscript)"
    if exporter == "torchscript" and not torchscript_available():
        return f"{torch_label()} has no TorchScript exporter"
    return ""


def run_matrix(size: str, models: Sequence[str], exporters: Sequence[str]) -> List[Row]:
    import torch
    torch.set_num_threads(1)
    rows: List[Row] = []
    with tempfile.TemporaryDirectory(prefix="pointrt_matrix_") as out_dir:
        for exporter in exporters:
            for name in models:
                why = exporter_missing(exporter)
                row = (dict(model=name, torch=torch_label(), exporter=exporter, size=size, status="n/a", reason=why)
                       if why else run_cell(name, exporter, size, out_dir))
                row.update(load=round(os.getloadavg()[0], 1), when=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
                print(json.dumps(row), flush=True)
                rows.append(row)
    return rows


def column(row: Row) -> str:
    return f"{row['torch']} {EXPORTER_TITLES[str(row['exporter'])]}"


def seconds(value: object) -> str:
    s = float(value)  # type: ignore[arg-type]
    return f"{s:.1f} s" if s >= 0.1 else f"{s:.2f} s"


def cell_text(row: Row) -> str:
    if row["status"] == "ok":
        cpu = f" ({seconds(row['export_cpu_s'])} CPU)" if "export_cpu_s" in row else ""
        return f"ok, {seconds(row['export_s'])}{cpu}, {row['nodes']} nodes, err {row['error']:.0e}"
    return f"{row['status']}: {str(row['reason']).replace('|', '/')}"


def table(rows: List[Row]) -> List[str]:
    columns = sorted({column(r) for r in rows}, key=lambda c: [int(x) for x in re.findall(r"\d+", c)] + [c])
    models = list(dict.fromkeys(str(r["model"]) for r in rows))
    cells = {(r["model"], column(r)): r for r in rows}
    lines = ["| model | exported at | " + " | ".join(columns) + " |", "|---" * (len(columns) + 2) + "|"]
    for m in models:
        shape = next((str(r["shape"]) for r in rows if r["model"] == m and r.get("shape")), "")
        lines.append(f"| {m} | {shape} | " + " | ".join(cell_text(cells[(m, c)]) if (m, c) in cells else NOT_RUN
                                                         for c in columns) + " |")
    return lines


def section_title(size: str) -> str:
    return f"## `--size {size}`"


def markdown(rows: List[Row], command: str) -> str:
    loads: Dict[str, List[float]] = {}
    for r in rows:
        if "load" in r:
            loads.setdefault(str(r["torch"]), []).append(float(r["load"]))  # type: ignore[arg-type]
    load = ", ".join(f"{t}: {min(v):.1f} to {max(v):.1f}" for t, v in loads.items()) or "not recorded"
    when = max(str(r.get("when", "")) for r in rows)
    out = ["# Export matrix: models x torch x exporter", "",
           "Generated by `scripts/export_matrix.py` (issue 9's goals table; the ctest `export_matrix` re-runs the",
           "`--size ci` section and fails if a cell FAILED or if a cell's ok / FAILED / n/a differs from this file).",
           "Each cell: `pointrt.export` of the model, the file run by pointrt on another frame than the traced one,",
           "compared with PyTorch: float outputs within 1e-4 of max(max |torch|, 1), integer outputs equal (and",
           "the pointrt node counts a case names, e.g. PVN3D's 4 FurthestPointSample and 8 BallQuery).",
           "\"err\" is the worst float output's max |pointrt - torch| / max(max |torch|, 1); the time is the wall",
           "time of `pointrt.export` (trace, ONNX writing, pointrt's passes; no verification) with one torch",
           "thread, and its CPU time (the wall time grows with the machine's load, the CPU time much less).", "",
           f"Command: `{command}`", "",
           f"Run {when} on {platform.machine()}, {os.cpu_count()} cores, shared: the 1-minute load average "
           f"(`uptime`) after each cell was {load}, so the times are upper bounds.", ""]
    for size in dict.fromkeys(str(r["size"]) for r in rows):
        out += [section_title(size), "", SIZE_NOTES[size], ""] + table([r for r in rows if r["size"] == size]) + [""]
    return "\n".join(out)


def verdicts(lines: Sequence[str]) -> Dict[Tuple[str, str], str]:
    """{(model, column): "ok" | "FAILED" | "n/a" | ...} of a markdown table's lines."""
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    grid = {}
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for col, text in zip(header[2:], cells[2:]):
            if text != NOT_RUN:
                grid[(cells[0], col)] = re.split(r"[,:]", text)[0]
    return grid


def documented_section(doc: str, size: str) -> List[str]:
    lines = doc.splitlines()
    title = lines.index(section_title(size))
    start = next((i for i in range(title, len(lines)) if lines[i].startswith("|")), len(lines))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def check(rows: List[Row], doc_path: str) -> List[str]:
    """The problems: FAILED cells, and verdicts that differ from the file's (the columns that ran)."""
    problems = [f"{r['model']} / {column(r)}: {cell_text(r)}" for r in rows if r["status"] == "FAILED"]
    doc = Path(doc_path).read_text()
    for size in dict.fromkeys(str(r["size"]) for r in rows):
        if section_title(size) not in doc:
            problems.append(f"{doc_path} has no section '{section_title(size)}'")
            continue
        want = verdicts(documented_section(doc, size))
        got = verdicts(table([r for r in rows if r["size"] == size]))
        for key in sorted(set(want) | set(got)):
            ran = any(col == key[1] for _, col in got)
            if ran and want.get(key) != got.get(key):
                problems.append(f"{key[0]} / {key[1]} ({size}): {want.get(key, 'absent')} in {doc_path}, "
                                f"{got.get(key, 'absent')} now")
    return problems


def main(argv: Optional[Sequence[str]] = None) -> int:
    from models.export_cases import names
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", choices=["ci", "full"], default="ci")
    ap.add_argument("--models", nargs="+", choices=names(), default=names())
    ap.add_argument("--exporters", nargs="+", choices=EXPORTERS, default=list(EXPORTERS))
    ap.add_argument("--json", help="write this run's rows here")
    ap.add_argument("--merge", nargs="+", metavar="JSON", help="rows of earlier runs to tabulate instead of running")
    ap.add_argument("--markdown", help="write the table here")
    ap.add_argument("--check", metavar="MARKDOWN", help="exit 1 on a FAILED cell or a verdict unlike this file's")
    ap.add_argument("--command", help="the command named in the markdown (default: this one)")
    a = ap.parse_args(argv)
    if a.merge:
        missing = [p for p in a.merge if not Path(p).is_file()]
        if missing:
            print(f"export_matrix: no rows in {', '.join(missing)} (that run did not finish: see its log)")
            return 1
        rows = [r for p in a.merge for r in json.loads(Path(p).read_text())]
    else:
        rows = run_matrix(a.size, a.models, a.exporters)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    if a.markdown:
        Path(a.markdown).write_text(markdown(rows, a.command or " ".join(["scripts/export_matrix.py", *sys.argv[1:]])))
    if a.check:
        problems = check(rows, a.check)
        for p in problems:
            print(f"export_matrix: {p}")
        counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "n/a", "FAILED")}
        print(f"export_matrix: {len(rows)} cells ({', '.join(f'{v} {k}' for k, v in counts.items())}); "
              + (f"{len(problems)} problem(s)" if problems else f"verdicts as in {a.check}"))
        return 1 if problems else 0
    return 0 if all(r["status"] != "FAILED" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
