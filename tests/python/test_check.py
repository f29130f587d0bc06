"""pointrt check: target tables, verdicts that agree with ONNX Runtime actually running the file,
lints, the CLI."""
import glob
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from pointrt.check import check, load_target
from pointrt.runtime import load_runtime

ROOT = Path(__file__).resolve().parents[2]
NODE_TESTS = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")

# Where ONNX Runtime's verdict depends on more than its kernel table:
KNOWN_DISAGREEMENTS = {
    # StringNormalizer needs the en_US locale, which this machine may lack (ORT fails at creation)
    "test_strnormalizer_export_monday_casesensintive_lower", "test_strnormalizer_export_monday_casesensintive_upper",
    "test_strnormalizer_export_monday_empty_output", "test_strnormalizer_export_monday_insensintive_upper_twodim",
    # QLinearMatMul-21 with float16 scales: ORT's kernel table lists no float16 scale type, yet the session builds
    "test_qlinearmatmul_2D_int8_float16", "test_qlinearmatmul_2D_uint8_float16",
    "test_qlinearmatmul_3D_int8_float16", "test_qlinearmatmul_3D_uint8_float16",
}


def _ort_runs(path: str) -> bool:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 4
    try:
        ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        return True
    except Exception:  # noqa: BLE001 - any refusal is "does not run"
        return False


@pytest.mark.skipif(load_runtime() is None, reason="pointrt._pointrt not built")
def test_pointrt_table_equals_the_runtime_operator_table() -> None:
    _, table = load_target("pointrt")
    runtime = sorted([d or "ai.onnx", op, lo, hi] for d, op, lo, hi in load_runtime().supported_ops())
    assert table["ops"] == runtime, "regenerate: .venv/bin/python scripts/gen_check_targets.py --only pointrt"


def test_onnxruntime_table_is_the_installed_version() -> None:
    import onnxruntime as ort
    kind, table = load_target("onnxruntime")
    assert table["target"] == f"onnxruntime {ort.__version__}", "regenerate: scripts/gen_check_targets.py"


@pytest.mark.skipif(not os.path.isdir(NODE_TESTS), reason="onnx wheel node tests absent")
def test_onnxruntime_verdict_agrees_with_running_it_on_every_node_test() -> None:
    disagree = []
    dirs = sorted(glob.glob(os.path.join(NODE_TESTS, "*")))
    for d in dirs:
        path = os.path.join(d, "model.onnx")
        if check(path, "onnxruntime").deployable != _ort_runs(path):
            disagree.append(os.path.basename(d))
    assert len(dirs) > 1000
    assert set(disagree) <= KNOWN_DISAGREEMENTS, sorted(set(disagree) - KNOWN_DISAGREEMENTS)


def test_onnxruntime_verdict_agrees_on_committed_models(tmp_path) -> None:
    from models import drift_demo
    drift = tmp_path / "drift.onnx"
    drift_demo.export(drift_demo.build(), drift_demo.sample_points(), str(drift))
    files = [str(drift), str(ROOT / "models/demo/shape_classifier.onnx"), str(_lint_model(tmp_path / "l.onnx"))]
    for f in files:
        assert check(f, "onnxruntime").deployable == _ort_runs(f), f
    r = check(str(drift), "onnxruntime")
    assert not r.deployable and any("custom domain 'pointrt'" in n.reason for n in r.nodes if not n.runs)
    assert check(str(drift), "pointrt").deployable


def _lint_model(path: Path) -> Path:
    w = helper.make_tensor("w", TensorProto.FLOAT, [32], np.ones(32, np.float32))
    w2 = helper.make_tensor("w_copy", TensorProto.FLOAT, [32], np.ones(32, np.float32))
    unused = helper.make_tensor("unused", TensorProto.FLOAT, [1], [0.0])
    shape = helper.make_tensor("shape", TensorProto.INT64, [2], [1, 12288])
    nodes = [helper.make_node("Add", ["x", "w"], ["a"], name="add_w"),
             helper.make_node("Add", ["a", "w_copy"], ["b"], name="add_w_copy"),
             helper.make_node("Reshape", ["b", "shape"], ["c"], name="reshape_baked"),
             helper.make_node("Constant", [], ["eps"], name="eps", value_float=1e-8),
             helper.make_node("Add", ["c", "eps"], ["d"], name="add_eps"),
             helper.make_node("Reciprocal", ["d"], ["y"], name="recip")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["num_points", 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w, w2, unused, shape])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_lints_name_the_node_and_a_fix(tmp_path) -> None:
    from models import drift_demo
    drift = tmp_path / "drift.onnx"
    drift_demo.export(drift_demo.build(), drift_demo.sample_points(), str(drift))
    drift_demo.plant(str(drift), str(tmp_path / "planted.onnx"), drift_demo.PLANTS)
    lints = "\n".join(check(str(tmp_path / "planted.onnx"), "pointrt").lints)
    assert "'/bev_conv/bev_conv.2/BatchNormalization' (BatchNormalization) is in training mode" in lints
    assert "'/up/Resize' (Resize) is linear with coordinate_transformation_mode=asymmetric" in lints
    assert "'/ScatterDense' (ScatterDense) reads indices reordered by '/planted/Gather'" in lints
    assert not check(str(drift), "pointrt").lints  # the clean export has none
    r = check(str(_lint_model(tmp_path / "l.onnx")), "opset=13", {"num_points": 12288})
    lints = "\n".join(r.lints)
    assert "initializer 'unused' is not used" in lints
    assert "initializers 'w', 'w_copy' hold the same values" in lints
    assert "'reshape_baked' (Reshape) has the size 12288 baked in" in lints
    assert "'add_eps' (Add): epsilon 1e-08 flushes to 0 in float16" in lints
    assert "opset 17 is newer than opset=13" in lints
    assert not r.deployable and any(n.node == "reshape_baked" and "Reshape-14" in n.reason for n in r.nodes)


def test_tensorrt_tables_and_rules(tmp_path) -> None:
    for version, hi in (("8.6", 17), ("10.1", 20)):
        _, table = load_target(f"tensorrt={version}")
        assert table["opset_max"] == hi and table["ops"]["Conv"]["supported"]
        assert table["ops"]["Hardmax"]["supported"] == (version == "10.1")
        assert table["ops"]["CumSum"]["const_inputs"] == ["axis"]
    nodes = [helper.make_node("Hardmax", ["x"], ["h"], name="hardmax"),
             helper.make_node("CumSum", ["h", "axis"], ["y"], name="cumsum")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                                       helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "t.onnx")
    r8 = check(str(tmp_path / "t.onnx"), "tensorrt=8.6")
    assert [(n.node, n.runs) for n in r8.nodes] == [("hardmax", False), ("cumsum", False)]
    assert "must be an initializer" in r8.nodes[1].reason
    r10 = check(str(tmp_path / "t.onnx"), "tensorrt=10.1")
    assert [n.runs for n in r10.nodes] == [True, False]  # 10.x has Hardmax; CumSum still needs a constant axis


def test_cli_exit_status_and_json(tmp_path) -> None:
    model = _lint_model(tmp_path / "l.onnx")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "pointrt", "check", *a], capture_output=True,  # noqa: E731
                                    text=True, env=env)
    ok = run(str(model), "--target", "onnxruntime", "--json", str(tmp_path / "r.json"))
    assert ok.returncode == 0 and "deployable" in ok.stdout, ok.stdout + ok.stderr
    assert json.loads((tmp_path / "r.json").read_text())[0]["deployable"] is True
    assert run(str(model), "--target", "opset=13").returncode == 1
    bad = run(str(tmp_path / "missing.onnx"))
    assert bad.returncode == 2 and bad.stderr.startswith("error:")
    assert run(str(model), "--target", "nonsense").returncode == 2
