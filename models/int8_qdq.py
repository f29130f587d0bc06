"""Int8 versions of bench/compare_onnxruntime.py's networks, written by ONNX Runtime's quantizer.

`quantize(float_path, out_path, ...)` calibrates `onnxruntime.quantization.quantize_static` on a
few generated inputs (seeded normal noise of the model's input shape) and writes a QDQ file
(QuantizeLinear/DequantizeLinear around every quantized operator) or a QOperator file
(QLinearConv, QLinearMatMul, ...). `export_float(name, out_dir)` writes the float32 network first
(ResNet-18 1x3x224x224 or the PointNet MLP 1x3x16384, opset 13) with its input.

  python models/int8_qdq.py --model resnet18 --out-dir /tmp/int8   # resnet18{,_qdq,_qop}.onnx
"""
from __future__ import annotations

import argparse
import importlib.util
import os
from typing import Dict, List, Tuple

import numpy as np

_BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "compare_onnxruntime.py")


def _bench_module():
    spec = importlib.util.spec_from_file_location("compare_onnxruntime", _BENCH)
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def export_float(name: str, out_dir: str, shape: Tuple[int, ...] | None = None) -> Tuple[str, str]:
    """The float32 network `name` (resnet18, pointnet) as ONNX in out_dir; returns (model, input .npy).
    `shape` overrides the input shape (e.g. fewer points for quick tests)."""
    bench = _bench_module()
    net, default_shape = bench.build_models()[name]
    return bench.export(name, net, tuple(shape or default_shape), out_dir)


class _Reader:
    """Calibration data: `count` seeded normal inputs of one shape."""

    def __init__(self, input_name: str, shape: Tuple[int, ...], count: int, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self._items: List[Dict[str, np.ndarray]] = [
            {input_name: rng.standard_normal(shape).astype(np.float32)} for _ in range(count)]

    def get_next(self):
        return self._items.pop(0) if self._items else None


def quantize(float_path: str, out_path: str, fmt: str = "qdq", per_channel: bool = False, calibration: int = 4,
             seed: int = 0, activation: str = "int8") -> str:
    """Writes `out_path`: float_path quantized by ONNX Runtime (QDQ or QOperator format), int8
    weights, int8 or uint8 activations, calibrated (MinMax) on `calibration` generated inputs."""
    import onnx
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    model = onnx.load(float_path)
    inp = model.graph.input[0]
    shape = tuple(d.dim_value for d in inp.type.tensor_type.shape.dim)
    quantize_static(float_path, out_path, _Reader(inp.name, shape, calibration, seed),
                    quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
                    per_channel=per_channel,
                    activation_type=QuantType.QInt8 if activation == "int8" else QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    return out_path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet18", choices=["resnet18", "pointnet"])
    ap.add_argument("--out-dir", default="/tmp/pointrt_int8")
    ap.add_argument("--per-channel", action="store_true")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    path, npy = export_float(args.model, args.out_dir)
    for fmt in ("qdq", "qop"):
        out = quantize(path, os.path.join(args.out_dir, f"{args.model}_{fmt}.onnx"), fmt, args.per_channel)
        print(out)
    print(npy)


if __name__ == "__main__":
    main()
