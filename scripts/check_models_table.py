#!/usr/bin/env python3
"""Markdown table of `pointrt check` verdicts: each given ONNX file against every target.

    .venv/bin/python scripts/check_models_table.py NAME=FILE.onnx ...   (docs/check.md)
"""
import sys
from collections import Counter

sys.path.insert(0, __file__.rsplit("/scripts/", 1)[0] + "/python")
from pointrt.check import check  # noqa: E402

TARGETS = ["pointrt", "onnxruntime", "tensorrt=8.6", "tensorrt=10.1", "opset=13"]


def cell(path: str, target: str) -> str:
    r = check(path, target)
    if r.deployable:
        return "yes"
    why = Counter(n.op.replace("ai.onnx::", "") for n in r.nodes if not n.runs)
    parts = [f"{op} x{c}" if c > 1 else op for op, c in sorted(why.items())]
    return "no: " + ", ".join(r.file_problems and ["file opset"] or []) + (
        (", " if r.file_problems and parts else "") + ", ".join(parts))


def main() -> None:
    print("| model | " + " | ".join(TARGETS) + " |")
    print("|---" * (len(TARGETS) + 1) + "|")
    for spec in sys.argv[1:]:
        name, _, path = spec.partition("=")
        print(f"| {name} | " + " | ".join(cell(path, t) for t in TARGETS) + " |")


if __name__ == "__main__":
    main()
