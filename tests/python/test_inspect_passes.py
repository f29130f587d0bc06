"""`pointrt inspect --passes` lists prepare's passes in order and what each did to the model
(issue 13, stage 1): text and --json agree, a folded constant shows as a change."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
CLI = os.environ.get("POINTRT_CLI", str(ROOT / "build" / "pointrt"))
PASSES = [
    "check-supported",
    "float16-via-float32",
    "prepare-subgraphs",
    "fold-constants",
    "eliminate-common-subexpressions",
    "fold-if",
    "tensor-fold-expand-into-gather",
    "quant-qdq",
    "nn-fuse-conv",
    "fold-constants",
    "eliminate-dead-nodes",
]


def constant_chain_model() -> onnx.ModelProto:
    """y = x + (a * b): the Mul has constant inputs only, so fold-constants removes it."""
    a = numpy_helper.from_array(np.full([3], 2, np.float32), "a")
    b = numpy_helper.from_array(np.full([3], 5, np.float32), "b")
    nodes = [helper.make_node("Mul", ["a", "b"], ["ab"], name="mul"),
             helper.make_node("Add", ["x", "ab"], ["y"], name="add")]
    graph = helper.make_graph(
        nodes,
        "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], initializer=[a, b])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_inspect_passes_lists_each_pass_and_its_effect(tmp_path: Path) -> None:
    path = tmp_path / "chain.onnx"
    onnx.save(constant_chain_model(), str(path))
    r = subprocess.run([CLI, "inspect", "--passes", str(path), "--json", str(tmp_path / "out.json")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout[r.stdout.index("prepare passes (2 nodes before)"):].splitlines()[1:1 + len(PASSES)]
    assert [line.split()[1] for line in lines] == PASSES, lines
    folded = PASSES.index("fold-constants")
    assert "changed, 1 nodes" in lines[folded], lines  # the Mul folded into a constant
    assert all("no change" in line for i, line in enumerate(lines) if i != folded), lines
    rows = json.loads((tmp_path / "out.json").read_text())["passes"]
    assert [row["name"] for row in rows] == PASSES
    assert [row["nodes_after"] for row in rows] == [2, 2, 2] + [1] * (len(PASSES) - 3)
    assert [row["changed"] for row in rows] == [i == folded for i in range(len(PASSES))]


def test_inspect_passes_reports_a_failing_pass(tmp_path: Path) -> None:
    graph = helper.make_graph([helper.make_node("NoSuchOp", ["x"], ["y"], name="odd")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    path = tmp_path / "odd.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    r = subprocess.run([CLI, "inspect", "--passes", str(path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stderr  # unsupported node: the documented exit status
    assert "check-supported" in r.stdout and "FAILED (below)" in r.stdout
    assert "not run" in r.stdout and "NoSuchOp is not supported" in r.stdout
