"""Int8 files written by ONNX Runtime's quantizer (models/int8_qdq.py: quantize_static on the
PointNet MLP and ResNet-18 of bench/compare_onnxruntime.py, small inputs), run by pointrt with and
without the QDQ pass, against ONNX Runtime on the same file, in steps of the output's scale."""
from __future__ import annotations

from pathlib import Path
from typing import Tuple

import numpy as np
import onnx
import onnx.numpy_helper
import pytest

pytest.importorskip("onnxruntime.quantization")
import onnxruntime as ort  # noqa: E402

from models import int8_qdq  # noqa: E402
from pointrt import _pointrt  # noqa: E402

SHAPES = {"pointnet": (1, 3, 256), "resnet18": (1, 3, 32, 32)}
# Steps of the output scale pointrt may differ from ONNX Runtime with the QDQ pass: it folds ResNet's
# residual Add into the convolution (oneDNN's sum post-op) but keeps the convolution's own rounding
# (round/clip post-ops before the sum), so it rounds twice as ONNX Runtime does; float arithmetic
# order may still move a value across a rounding boundary by one step.
FUSED_STEPS = {"pointnet": 1, "resnet18": 1}


def output_step(path: str) -> float:
    """The scale of the DequantizeLinear that writes the graph's output (through a final ReduceMax)."""
    model = onnx.load(path)
    init = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    value = model.graph.output[0].name
    while True:
        node = next(n for n in model.graph.node if value in n.output)
        if node.op_type != "ReduceMax":
            break
        value = node.input[0]
    assert node.op_type == "DequantizeLinear", node.op_type
    return float(init[node.input[1]].reshape(-1)[0])


@pytest.fixture(scope="module")
def float_models(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("int8")
    return {name: int8_qdq.export_float(name, str(d), shape) for name, shape in SHAPES.items()}


def quantized(float_models: dict, name: str, fmt: str, per_channel: bool, act: str) -> Tuple[str, np.ndarray]:
    path, npy = float_models[name]
    out = str(Path(path).with_name(f"{name}_{fmt}_{int(per_channel)}_{act}.onnx"))
    return int8_qdq.quantize(path, out, fmt, per_channel, activation=act), np.load(npy)


@pytest.mark.parametrize("name", sorted(SHAPES))
@pytest.mark.parametrize("fmt,per_channel,act", [("qdq", False, "int8"), ("qdq", True, "uint8"), ("qop", True, "int8")])
def test_int8_file_matches_onnxruntime(float_models, name, fmt, per_channel, act):
    path, x = quantized(float_models, name, fmt, per_channel, act)
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    step = output_step(path)
    for optimize, allowed in ((False, 1), (True, FUSED_STEPS[name])):
        got = _pointrt.Session(path, optimize=optimize).run({"x": x})["y"]
        assert got.shape == want.shape and got.dtype == want.dtype
        steps = float(np.abs(got.astype(np.float64) - want.astype(np.float64)).max()) / step
        assert steps <= allowed + 1e-3, f"{name} {fmt} optimize={optimize}: {steps:.2f} steps of {step}"
