"""pointrt.metrics (ADD, ADD-S, AUC, box IoU, AP) on hand-checked cases, and `pointrt run --eval`
/ `--render` (the C++ metrics) agreeing with them on files whose outputs are constants."""
import json
import os
import re
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from pointrt import metrics

CLI = os.environ.get("POINTRT_CLI", os.path.join(os.path.dirname(__file__), "..", "..", "build", "pointrt"))


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_add_and_add_s():
    rng = np.random.default_rng(0)
    pts = rng.uniform(-0.05, 0.05, (300, 3))
    gt = np.concatenate([rot_z(0.3), [[0.1], [0], [1]]], 1)
    assert metrics.add(gt, gt, pts) == 0 and metrics.add_s(gt, gt, pts) == 0
    moved = gt.copy()
    moved[:, 3] += [0.003, 0, 0.004]
    assert metrics.add(moved, gt, pts) == pytest.approx(0.005)
    assert metrics.add_s(moved, gt, pts) <= metrics.add(moved, gt, pts)
    # a ring is symmetric about z: a rotation about z has a large ADD and an ADD-S of ~0
    th = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    ring = np.stack([0.05 * np.cos(th), 0.05 * np.sin(th), 0 * th], 1)
    turned = np.concatenate([gt[:, :3] @ rot_z(1.0), gt[:, 3:]], 1)
    assert metrics.add(turned, gt, ring) > 0.04
    assert metrics.add_s(turned, gt, ring) < 1e-3


def test_pose_auc_follows_vocap():
    assert metrics.pose_auc([0, 0, 0]) == pytest.approx(100)
    assert metrics.pose_auc([0.2, np.inf]) == 0
    # VOCap counts accuracy k/n on (d_{k-1}, d_k]: one distance of 0.05 gives 100, two of 0.02
    # and 0.2 give half of the range above 0 -> 50.
    assert metrics.pose_auc([0.05]) == pytest.approx(100)
    assert metrics.pose_auc([0.02, 0.2]) == pytest.approx(50)
    assert metrics.pose_auc([0.02, 0.06]) == pytest.approx((0.02 * 0.5 + 0.04 * 1 + 0.04 * 1) / 0.1 * 100)


def test_box_iou_and_ap():
    a = [0, 0, 0, 2, 2, 2, 0]
    assert metrics.box_iou_bev(a, a) == pytest.approx(1)
    assert metrics.box_iou_bev(a, [1, 0, 0, 2, 2, 2, 0]) == pytest.approx(1 / 3)
    assert metrics.box_iou_bev(a, [0, 0, 0, 2, 2, 2, np.pi / 2]) == pytest.approx(1)
    assert metrics.box_iou_3d(a, [0, 0, 1, 2, 2, 2, 0]) == pytest.approx(1 / 3)
    assert metrics.box_iou_3d(a, [0, 0, 5, 2, 2, 2, 0]) == 0
    assert metrics.average_precision(np.array([0.9, 0.8]), np.array([True, True]), 2) == pytest.approx(1)
    # a false positive ranked first: precision 1/2 at recall 1/2 and 2/3 at recall 1
    assert metrics.average_precision(np.array([0.9, 0.8, 0.7]), np.array([False, True, True]), 2) == \
        pytest.approx(0.5 * (2 / 3) + 0.5 * (2 / 3))
    gt = np.array([a, [10, 0, 0, 2, 2, 2, 0]], np.float32)
    scans = [(gt[:1], np.array([0.9]), np.array([0]), gt, np.array([0, 0]))]
    assert metrics.detection_ap(scans, [0])[0] == pytest.approx(0.5)


def constant_model(path, outputs, input_info=("rgb", [1, 3, 24, 32])):
    nodes, infos = [], []
    for name, value in outputs.items():
        nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(value, name)))
        infos.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
    inp = helper.make_tensor_value_info(input_info[0], TensorProto.FLOAT, input_info[1])
    graph = helper.make_graph(nodes, "constants", [inp], infos)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def run_cli(*args):
    out = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_cli_pose_eval_and_render_match_python(tmp_path):
    rng = np.random.default_rng(1)
    pts = rng.uniform(-0.05, 0.05, (3, 200, 3)).astype(np.float32)
    gt = np.stack([np.concatenate([rot_z(0.2 * c), [[0.02 * c], [0], [0.5]]], 1) for c in range(3)]).astype(np.float32)
    pred = gt.copy()
    pred[1, :, 3] += [0.004, 0, 0]
    pred[2, :, :3] = (gt[2, :, :3] @ rot_z(0.5)).astype(np.float32)
    constant_model(tmp_path / "m.onnx", {"poses": pred[None], "pose_status": np.array([[0, 0, 0]], np.int32)})
    np.savez(tmp_path / "gt.npz", gt_poses=gt, gt_present=np.array([False, True, True]), model_points=pts,
             camera=np.array([40, 40, 16, 12], np.float32))
    out = run_cli("run", tmp_path / "m.onnx", "--eval", tmp_path / "gt.npz", "--render", tmp_path / "p.png")
    rows = re.findall(r"eval class (\d+): ADD ([\d.]+) mm, ADD-S ([\d.]+) mm, diameter ([\d.]+) mm", out)
    assert [int(r[0]) for r in rows] == [1, 2]
    for c, add, adds, diam in rows:
        c = int(c)
        assert float(add) == pytest.approx(metrics.add(pred[c], gt[c], pts[c]) * 1000, abs=2e-4)
        assert float(adds) == pytest.approx(metrics.add_s(pred[c], gt[c], pts[c]) * 1000, abs=2e-4)
        d = np.sqrt(((pts[c][:, None] - pts[c][None]) ** 2).sum(-1)).max()
        assert float(diam) == pytest.approx(d * 1000, abs=2e-4)
    passed = sum(float(r[2]) < 0.1 * float(r[3]) for r in rows)
    assert f"{passed}/2 objects with ADD-S under 10% of their diameter" in out
    png = (tmp_path / "p.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 200


def test_cli_detection_eval_and_render(tmp_path):
    gt_boxes = np.array([[5, 0, 0, 4, 2, 1.5, 0.3], [10, 3, 0, 0.6, 0.6, 1.7, 0], [20, -2, 0, 4, 2, 1.5, 1]], np.float32)
    gt_labels = np.array([0, 1, 0])
    boxes = np.zeros((1, 4, 7), np.float32)
    boxes[0, :3] = gt_boxes + [[0.3, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0], [4, 0, 0, 0, 0, 0, 0]]
    constant_model(tmp_path / "d.onnx", {"num_detections": np.array([3], np.int32), "boxes": boxes,
                                         "scores": np.array([[0.9, 0.8, 0.7, 0]], np.float32),
                                         "labels": np.array([[0, 1, 0, -1]], np.int32)},
                   ("points", [500, 4]))
    np.savez(tmp_path / "gt.npz", gt_boxes=gt_boxes, gt_labels=gt_labels)
    np.save(tmp_path / "pts.npy", np.random.default_rng(0).uniform(-20, 20, (500, 4)).astype(np.float32))
    out = run_cli("run", tmp_path / "d.onnx", "--input", f"points={tmp_path / 'pts.npy'}", "--eval",
                  tmp_path / "gt.npz", "--render", tmp_path / "bev.png")
    assert (tmp_path / "bev.png").read_bytes()[:4] == b"\x89PNG"
    car = re.search(r"eval class 0: (\d+) matched, (\d+) false, (\d+) missed .* AP \(this scan\) ([\d.]+)", out)
    ped = re.search(r"eval class 1: (\d+) matched, (\d+) false, (\d+) missed .* AP \(this scan\) ([\d.]+)", out)
    assert car.groups()[:3] == ("1", "1", "1") and ped.groups()[:3] == ("1", "0", "0")
    scans = [(boxes[0, :3], np.array([0.9, 0.8, 0.7]), np.array([0, 1, 0]), gt_boxes, gt_labels)]
    want = metrics.detection_ap(scans, [0, 1])
    assert float(car.group(4)) == pytest.approx(want[0], abs=1e-4)
    assert float(ped.group(4)) == pytest.approx(want[1], abs=1e-4)
    # --json - (cli_common.h): the same numbers as JSON on stdout, the text on stderr.
    js = json.loads(run_cli("run", tmp_path / "d.onnx", "--input", f"points={tmp_path / 'pts.npy'}", "--eval",
                            tmp_path / "gt.npz", "--json", "-"))
    rows = {r["class"]: r for r in js["eval"]["classes"]}
    assert js["eval"]["kind"] == "detector" and (rows[0]["matched"], rows[0]["false"], rows[0]["missed"]) == (1, 1, 1)
    assert rows[1]["ap"] == pytest.approx(want[1], abs=1e-4)


def test_cli_eval_of_a_model_that_is_no_pipeline_is_one_error_line(tmp_path):
    constant_model(tmp_path / "c.onnx", {"logits": np.zeros((1, 3), np.float32)})
    np.savez(tmp_path / "gt.npz", gt_boxes=np.zeros((0, 7), np.float32), gt_labels=np.zeros(0, np.int64))
    out = subprocess.run([CLI, "run", str(tmp_path / "c.onnx"), "--eval", str(tmp_path / "gt.npz")],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.startswith("error: --eval: the model's outputs are neither")
