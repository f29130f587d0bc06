#!/usr/bin/env python3
"""Regenerate the target tables of `pointrt check` (python/pointrt/check_targets/*.json).

  onnxruntime-<version>.json  ONNX Runtime's CPU kernel registrations, read from the installed
                              wheel (onnxruntime.capi: get_all_opkernel_def): per (domain, op) the
                              opset ranges and type constraints of each registered kernel.
  tensorrt-<version>.json     the TensorRT ONNX parser's operator support matrix
                              (onnx/onnx-tensorrt, docs/operators.md of the release branch), reduced
                              to facts: supported or not, element types, inputs that must be
                              initializers, opset range.
  pointrt.json                this runtime's own operator table (pointrt._pointrt.supported_ops);
                              tests/python/test_check.py checks it equals the runtime's.

    .venv/bin/python scripts/gen_check_targets.py [--tensorrt 8.6=path/operators.md@commit ...]
"""
import argparse
import json
import os
import re
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "pointrt", "check_targets")
TRT_TYPES = {"FP32": "float", "FLOAT32": "float", "FP16": "float16", "FLOAT16": "float16", "BF16": "bfloat16",
             "BFLOAT16": "bfloat16", "INT32": "int32", "INT64": "int64", "INT8": "int8", "UINT8": "uint8",
             "BOOL": "bool", "DOUBLE": "double", "FP64": "double", "FP8": "float8e4m3fn", "INT4": "int4"}


# Attribute values ONNX allows that ORT's CPU kernels refuse at session creation.
ORT_ATTRIBUTE_LIMITS = {"ai.onnx::RNN": {"layout": [0]}, "ai.onnx::GRU": {"layout": [0]},
                        "ai.onnx::LSTM": {"layout": [0]}}


def _write(name: str, doc: dict) -> None:
    with open(os.path.join(OUT, name), "w") as f:
        json.dump(doc, f, indent=0, sort_keys=True)
        f.write("\n")
    print(f"wrote {name}")


def onnxruntime_table() -> None:
    import onnxruntime as ort
    from onnxruntime.capi import onnxruntime_pybind11_state as C
    kernels: dict = {}
    for k in C.get_all_opkernel_def():
        if k.provider != "CPUExecutionProvider":
            continue
        key = f"{k.domain or 'ai.onnx'}::{k.op_name}"
        lo, hi = k.version_range
        types = {c: sorted(t.replace("tensor(", "").rstrip(")") for t in ts) for c, ts in k.type_constraints.items()}
        kernels.setdefault(key, []).append([lo, min(hi, 10**6), types])
    for v in kernels.values():
        v.sort(key=lambda r: (r[0], json.dumps(r[2], sort_keys=True)))
    _write(f"onnxruntime-{ort.__version__}.json", {
        "target": f"onnxruntime {ort.__version__}", "source": f"onnxruntime {ort.__version__} wheel, "
        "CPUExecutionProvider kernel registrations (onnxruntime.capi get_all_opkernel_def); attribute_limits: "
        "the values the CPU kernels accept (their constructors reject others: rnn.h, deep_cpu_gru.h, lstm_base.h)",
        "kernels": kernels, "attribute_limits": ORT_ATTRIBUTE_LIMITS})


def tensorrt_table(version: str, path: str, commit: str) -> None:
    text = open(path).read()
    m = re.search(r"range of opset (\d+) to opset (\d+)", text) or re.search(r"up to Opset (\d+)", text)
    lo, hi = (int(m.group(1)), int(m.group(2))) if m and m.lastindex == 2 else (1, int(m.group(1)))
    ops = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not re.fullmatch(r"[A-Z][A-Za-z0-9]+", cells[0]) or cells[1][:1] not in "YN":
            continue
        types = [TRT_TYPES[t.strip().upper()] for t in (cells[2] if len(cells) > 2 else "").split(",")
                 if t.strip().upper() in TRT_TYPES]
        notes = cells[3] if len(cells) > 3 else ""
        const = re.findall(r"`(\w+)`[^`.]*?must be (?:an )?(?:initiali[sz]er|constant)", notes)
        const += [w for group in re.findall(r"Inputs? ((?:`\w+`(?:, | and |, and )?)+) must be initializers", notes)
                  for w in re.findall(r"`(\w+)`", group)]
        ops[cells[0]] = {"supported": cells[1].startswith("Y"), "types": types,
                         "const_inputs": sorted(set(const)),
                         "static_shapes": bool(re.search(r"[Dd]ynamic input shapes are (?:not )?unsupported", notes))}
    _write(f"tensorrt-{version}.json", {"target": f"tensorrt {version}", "opset_min": lo, "opset_max": hi,
                                        "int64_as_int32": version.startswith("8."),
                                        "source": f"onnx/onnx-tensorrt docs/operators.md at {commit}", "ops": ops})


def pointrt_table() -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(OUT)))
    from pointrt.runtime import load_runtime
    rows = sorted([d or "ai.onnx", op, lo, hi] for d, op, lo, hi in load_runtime().supported_ops())
    _write("pointrt.json", {"target": "pointrt", "source": "pointrt._pointrt.supported_ops() (the operator table)",
                            "ops": rows})


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--tensorrt", action="append", default=[], metavar="VERSION=PATH@COMMIT")
    ap.add_argument("--only", choices=["onnxruntime", "tensorrt", "pointrt"])
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    if a.only in (None, "onnxruntime"):
        onnxruntime_table()
    if a.only in (None, "pointrt"):
        pointrt_table()
    for spec in a.tensorrt:
        version, rest = spec.split("=", 1)
        path, _, commit = rest.partition("@")
        tensorrt_table(version, path, commit)
