"""float16 files as users make them: onnxconverter-common's convert_float_to_float16 on bench's
PointNet MLP and ResNet-18 (bench/compare_onnxruntime.py) and on a torch-exported PointNet++
classifier with pointrt operators. pointrt runs each float16 file on float16 feeds and must match
its float32 original within float16 precision, and ONNX Runtime on the same file where ONNX
Runtime can run it (it has no pointrt operators)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

float16 = pytest.importorskip("onnxconverter_common.float16")
import onnxruntime as ort  # noqa: E402
import torch  # noqa: E402

import pointrt  # noqa: E402
from models import int8_qdq  # noqa: E402
from models.pointnet2_ssg_cls import Pointnet2SSGCls  # noqa: E402
from pointrt import _pointrt  # noqa: E402

SHAPES = {"pointnet": (1, 3, 256), "resnet18": (1, 3, 32, 32)}


def to_float16_file(path: str) -> str:
    """The float16 version of `path` (float16 inputs, outputs and weights), next to it."""
    model = float16.convert_float_to_float16(onnx.load(path), keep_io_types=False)
    out = str(Path(path).with_name(Path(path).stem + "_fp16.onnx"))
    onnx.save(model, out)
    return out


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| over max |want|: the error in units of the output's magnitude."""
    want = want.astype(np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - want)) / max(np.max(np.abs(want)), 1e-30))


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_converted_bench_network(tmp_path, name):
    path, npy = int8_qdq.export_float(name, str(tmp_path), SHAPES[name])
    # The float32 original on the float16-rounded input: what float16 precision is measured against.
    x16 = np.load(npy).astype(np.float16)
    want = _pointrt.Session(path).run({"x": x16.astype(np.float32)})["y"]
    path16 = to_float16_file(path)
    got = _pointrt.Session(path16).run({"x": x16})["y"]
    assert got.dtype == np.float16 and got.shape == want.shape
    # float16 keeps 11 significant bits (2^-11 = 4.9e-4 relative); a few roundings along the
    # network (the operators with float16 kernels round each result) stay well inside 3e-3 (measured: 4-6e-4).
    assert relative_error(got, want) < 3e-3, name
    ort_got = ort.InferenceSession(path16, providers=["CPUExecutionProvider"]).run(None, {"x": x16})[0]
    assert relative_error(got, ort_got) < 3e-3, name
    # The float16 file is refused a float32 feed with one line naming the input.
    with pytest.raises(pointrt.Error, match="input 'x' expects element type float16, got float32"):
        _pointrt.Session(path16).run({"x": x16.astype(np.float32)})


def test_converted_pointnet2_classifier(tmp_path):
    torch.manual_seed(0)
    model = Pointnet2SSGCls(num_classes=10, width=0.25, npoints=(64, 16), nsamples=(16, 16)).eval()
    cloud = (torch.rand(1, 256, 3) * 2 - 1).half().float()  # float16-representable coordinates
    path = str(tmp_path / "ssg.onnx")
    pointrt.export(model, (cloud,), path, input_names=["points"], output_names=["logits"], verify=False, quiet=True)
    want = _pointrt.Session(path).run({"points": cloud.numpy()})["logits"]
    path16 = to_float16_file(path)
    assert any(n.domain == "pointrt" for n in onnx.load(path16).graph.node)
    got = _pointrt.Session(path16).run({"points": cloud.numpy().astype(np.float16)})["logits"]
    assert got.dtype == np.float16 and got.shape == want.shape
    # The sampling and grouping see the same coordinates in both files (FurthestPointSample and
    # BallQuery compute in float32 on float16-representable values), so only feature rounding differs.
    assert relative_error(got, want) < 3e-3
