"""pointrt.compare: planted export bugs found at the node that made them (isolated mode),
references from ONNX Runtime and saved files, float16 emulation, the CLI."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from pointrt.runtime import load_runtime

pytestmark = pytest.mark.skipif(load_runtime() is None, reason="pointrt._pointrt not built")

from models import drift_demo  # noqa: E402
from pointrt.compare_engine import compare  # noqa: E402
from pointrt.compare_io import read_arrays, write_polygraphy_json  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    model, points = drift_demo.build(), drift_demo.sample_points()
    path = tmp_path_factory.mktemp("drift") / "drift.onnx"
    drift_demo.export(model, points, str(path))
    return model, points, path


def _over(report, mode):
    return [(r.op_type, r.node) for r in report.modes[mode] if r.over_tolerance]


def test_clean_export_is_within_tolerance_in_both_modes(demo) -> None:
    model, points, path = demo
    report = compare(path, (points,), model)
    assert report.ok, str(report)
    labels = {r.label for r in report.modes["isolated"]}
    # module hooks, the mark, and the graph output all found their values
    assert {"mark bev", "bev_conv.0", "bev_conv.2", "up", "head (output heatmap)"} <= labels, labels
    assert not report.unmatched, report.unmatched


@pytest.mark.parametrize("bug, op_type, node", [
    ("resize", "Resize", "/up/Resize"),
    ("batchnorm", "BatchNormalization", "/bev_conv/bev_conv.2/BatchNormalization"),
    ("scatter", "ScatterDense", "/ScatterDense"),
])
def test_each_planted_bug_is_charged_to_its_node_in_isolated_mode(demo, tmp_path, bug, op_type, node) -> None:
    model, points, path = demo
    planted = tmp_path / f"{bug}.onnx"
    drift_demo.plant(str(path), str(planted), [bug])
    report = compare(planted, (points,), model)
    assert _over(report, "isolated") == [(op_type, node)], str(report)
    first = report.first_over("cumulative")
    assert first is not None and first.node == node  # cumulative: the first too, then everything after


def test_three_planted_bugs_at_once_isolated_names_exactly_those(demo, tmp_path) -> None:
    model, points, path = demo
    planted = tmp_path / "all.onnx"
    drift_demo.plant(str(path), str(planted), drift_demo.PLANTS)
    report = compare(planted, (points,), model)
    assert sorted(_over(report, "isolated")) == sorted([
        ("ScatterDense", "/ScatterDense"), ("BatchNormalization", "/bev_conv/bev_conv.2/BatchNormalization"),
        ("Resize", "/up/Resize")]), str(report)
    # cumulative mode cannot tell: everything after the first bug is over tolerance
    assert len(_over(report, "cumulative")) > 3


def _standard_model(path: Path, eps: float = 1e-8, big: float = 1.0) -> Path:
    """x -> Conv -> Relu -> Resize x2 -> d; y = 1 / (d + eps) * big."""
    rng = np.random.default_rng(0)
    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], rng.standard_normal(108).astype(np.float32))
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 2])
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Resize", ["r", "", "scales"], ["d"], name="resize", mode="linear"),
             helper.make_node("Constant", [], ["eps"], name="eps_c", value_float=eps),
             helper.make_node("Add", ["d", "eps"], ["de"], name="add_eps"),
             helper.make_node("Reciprocal", ["de"], ["inv"], name="recip"),
             helper.make_node("Constant", [], ["big"], name="big_c", value_float=big),
             helper.make_node("Mul", ["inv", "big"], ["y"], name="scale")]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 16, 16])], [w, scales])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _x() -> dict:
    return {"x": np.random.default_rng(1).uniform(0.5, 1, (1, 3, 8, 8)).astype(np.float32)}


def test_onnxruntime_reference_and_saved_references_round_trip(tmp_path) -> None:
    path = _standard_model(tmp_path / "m.onnx", eps=1.0)
    report = compare(path, _x(), "onnxruntime")
    assert report.ok, str(report)
    assert {r.value for r in report.modes["cumulative"]} == {"c", "r", "d", "de", "inv", "y"}
    # Polygraphy JSON written here reads back, and pointrt's C++ `run --ref` reads it too
    values = report.reference_values
    write_polygraphy_json(str(tmp_path / "ref.json"), values)
    back = read_arrays(str(tmp_path / "ref.json"))
    assert set(back) == set(values) and all(np.array_equal(back[k], values[k]) for k in values)
    np.savez(tmp_path / "ref.npz", **values)
    assert compare(path, _x(), str(tmp_path / "ref.npz")).ok
    wrong = dict(values, d=values["d"] + 0.5)  # a saved reference that disagrees at one value
    r = compare(path, _x(), wrong, modes=["isolated"])
    # d disagrees; de is computed from that d, so it disagrees with the (right) saved de too; inv,
    # computed from the saved de, agrees again
    assert [x.value for x in r.modes["isolated"] if x.over_tolerance] == ["d", "de"]
    cli = os.environ.get("POINTRT_CLI", str(ROOT / "build" / "pointrt"))
    np.save(tmp_path / "x.npy", _x()["x"])
    out = subprocess.run([cli, "run", str(path), "-i", f"x={tmp_path / 'x.npy'}", "--ref", str(tmp_path / "ref.json")],
                         capture_output=True, text=True)
    assert out.returncode == 0 and "OK: 1/1" in out.stdout, out.stdout + out.stderr


def test_fp16_emulation_reports_hazards_and_overflow(tmp_path) -> None:
    path = _standard_model(tmp_path / "m.onnx", eps=1e-8, big=1e5)
    report = compare(path, _x(), "pointrt", precision="fp16")
    hazards = "\n".join(report.hazards)
    assert "add_eps" in hazards and "epsilon 1e-08 flushes to 0" in hazards and "recip" in hazards, hazards
    rows = {r.value: r for r in report.modes["cumulative"]}
    assert rows["y"].overflow > 0 and rows["y"].over_tolerance  # 1e5 / d overflows float16's 65504
    assert rows["c"].overflow == 0 and not rows["c"].over_tolerance  # float16 rounding alone is within 1e-3


def test_cli_compare_exit_status_json_and_plot(tmp_path) -> None:
    model = tmp_path / "m.onnx"
    _standard_model(model, eps=1.0)
    np.save(tmp_path / "x.npy", _x()["x"])
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    args = [sys.executable, "-m", "pointrt", "compare", str(model), "-i", f"x={tmp_path / 'x.npy'}"]
    ok = subprocess.run(args + ["--onnxruntime", "--json", str(tmp_path / "r.json"), "--plot", str(tmp_path / "r.png"),
                                "--save-ref", str(tmp_path / "saved.json")], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["ok"] and set(doc["modes"]) == {"cumulative", "isolated"}
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(read_arrays(str(tmp_path / "saved.json"))) == {"c", "r", "d", "de", "inv", "y"}
    bad = subprocess.run(args + ["--precision", "fp16", "--mode", "isolated"], capture_output=True, text=True, env=env)
    assert bad.returncode in (0, 1) and "isolated" in bad.stdout, bad.stdout + bad.stderr
    err = subprocess.run(args[:4] + [str(tmp_path / "missing.onnx")], capture_output=True, text=True, env=env)
    assert err.returncode == 2 and err.stderr.startswith("error:"), err.stderr


def test_cli_compare_against_a_torch_module(demo, tmp_path) -> None:
    model, points, path = demo
    planted = tmp_path / "all.onnx"
    drift_demo.plant(str(path), str(planted), drift_demo.PLANTS)
    np.save(tmp_path / "points.npy", points.numpy())
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    out = subprocess.run([sys.executable, "-m", "pointrt", "compare", str(planted), "--torch",
                          f"{ROOT / 'models' / 'drift_demo.py'}:build()", "-i", f"points={tmp_path / 'points.npy'}",
                          "--mode", "isolated"], capture_output=True, text=True, env=env)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "isolated: first over tolerance: mark bev (node '/ScatterDense', ScatterDense)" in out.stdout


def test_torch_references_are_spilled_not_kept_in_memory(demo, tmp_path) -> None:
    """The module outputs wait in the spill file (a full network's would otherwise stay resident
    through the pointrt runs); the report's reference values read them back, equal to PyTorch's."""
    import torch

    from pointrt.compare_torch import SpilledArray, run_torch_reference

    model, points, path = demo
    ref, _ = run_torch_reference(model, [points], onnx.load(str(path)).graph)
    held = list(ref.direct.values()) + [t for ts in ref.pool.values() for _, t in ts]
    assert held and all(isinstance(t, SpilledArray) for t in held)
    report = compare(path, (points,), model, modes=["cumulative"])
    values = dict(report.reference_values)
    assert all(isinstance(v, np.ndarray) for v in values.values())
    with torch.no_grad():
        heatmap = model(points)
    heatmap = heatmap[0] if isinstance(heatmap, (tuple, list)) else heatmap
    assert any(v.shape == tuple(heatmap.shape) and np.array_equal(v, heatmap.numpy()) for v in values.values())
