"""Small hostile inputs of issue 12, written by code: models whose shapes overflow or exceed any
memory, external data that escapes its folder, malformed array and point-cloud files. Used by
tests/python/test_hostile_*.py and by tests/fuzz/make_corpus.py (the fuzz corpus holds them)."""
from __future__ import annotations

import struct
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TWO_32 = 1 << 32


def _model(nodes: List[onnx.NodeProto], inputs: List[onnx.ValueInfoProto], outputs: Sequence[str],
           initializers: Sequence[onnx.TensorProto] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "hostile", inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                              list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _i64(name: str, values: Sequence[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def expand_then_slice(shape: Sequence[int]) -> onnx.ModelProto:
    """A constant [1] expanded to `shape` by 'expand_big' (folded at prepare), then sliced."""
    return _model([helper.make_node("Expand", ["c", "shape"], ["e"], name="expand_big"),
                   helper.make_node("Slice", ["e", "starts", "ends"], ["y"], name="slice1")],
                  [], ["y"],
                  [numpy_helper.from_array(np.ones([1], np.float32), "c"), _i64("shape", shape),
                   _i64("starts", [0]), _i64("ends", [1])])


def expand_at_run_time(shape: Sequence[int]) -> onnx.ModelProto:
    """A fed x [1] expanded to `shape` by 'expand_wrap' at run time."""
    return _model([helper.make_node("Expand", ["x", "shape"], ["y"], name="expand_wrap")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])], ["y"], [_i64("shape", shape)])


def huge_declared_input() -> onnx.ModelProto:
    """Input x declared [2^32, 2^32] (2^64 elements), through a Relu."""
    return _model([helper.make_node("Relu", ["x"], ["y"], name="relu1")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [TWO_32, TWO_32])], ["y"])


def initializer_claiming(dims: Sequence[int], raw: bytes = b"\0\0\0\0") -> onnx.ModelProto:
    """Initializer 'w' declaring `dims` float32 with only `raw` as data."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=list(dims), raw_data=raw)
    return _model([helper.make_node("Relu", ["w"], ["y"], name="relu_w")], [], ["y"], [w])


def external_data(location: str, offset: Optional[str] = None, length: Optional[str] = None) -> onnx.ModelProto:
    """Initializer 'w' (float32 [4]) stored in `location` (+ offset/length strings, unchecked)."""
    w = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            w.external_data.add(key=key, value=value)
    return _model([helper.make_node("Relu", ["w"], ["y"], name="relu_w")], [], ["y"], [w])


def relu(input_shape: Sequence, name: str = "x", output: str = "y") -> onnx.ModelProto:
    return _model([helper.make_node("Relu", [name], [output], name="relu1")],
                  [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(input_shape))], [output])


def unsupported_operator() -> onnx.ModelProto:
    return _model([helper.make_node("FancyOp", ["x"], ["y"], name="fancy")],
                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], ["y"])


def hostile_models() -> Dict[str, onnx.ModelProto]:
    """Every hostile model of the issue, by file name."""
    m = {
        "expand_wrap_folded_then_slice.onnx": expand_then_slice([TWO_32, TWO_32, 4]),
        "expand_huge_folded_then_slice.onnx": expand_then_slice([1 << 20, 1 << 20, 1 << 20]),
        "expand_wrap_at_run_time.onnx": expand_at_run_time([TWO_32, TWO_32, 4]),
        "input_declared_2pow32_squared.onnx": huge_declared_input(),
        "initializer_1e12_with_4_bytes.onnx": initializer_claiming([10 ** 12]),
        "initializer_negative_dim.onnx": initializer_claiming([-4]),
        "external_data_symlink.onnx": external_data("weights/secret.bin"),
        "external_data_absolute.onnx": external_data("/etc/passwd"),
        "external_data_dotdot.onnx": external_data("../outside/secret.bin"),
        "external_data_offset_not_a_number.onnx": external_data("w.bin", offset="abc"),
        "external_data_offset_huge.onnx": external_data("w.bin", offset="99999999999999999999"),
        "external_data_length_negative.onnx": external_data("w.bin", length="-16"),
        "unsupported_operator.onnx": unsupported_operator(),
    }
    return m


# ---------------------------------------------------------------- arrays and point clouds

def npy_bytes(descr: str, shape: str, body: bytes, extra: str = "") -> bytes:
    """An .npy image with a hand-written header dict (`extra` is appended after the dict)."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }%s" % (descr, shape, extra)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + body


def floats(values: Sequence[float]) -> bytes:
    return np.asarray(values, "<f4").tobytes()


XYZ_PLY = "property float x\nproperty float y\nproperty float z\n"
PCD_XYZ = "FIELDS x y z\nSIZE 4 4 4\nTYPE F F F\nCOUNT 1 1 1\n"


def hostile_files() -> Dict[str, bytes]:
    """Malformed array and point-cloud files, by file name (the reader is chosen by extension)."""
    return {
        "trailing_garbage_header.npy": npy_bytes("<f4", "(3,)", floats([1, 2, 3]), " garbage"),
        "object_dtype.npy": npy_bytes("|O", "(3,)", b"\0" * 24),
        "shape_wraps.npy": npy_bytes("<f4", "(4294967296, 4294967296)", floats([1])),
        "data_truncated.npy": npy_bytes("<f4", "(1000,)", floats([1, 2])),
        "no_xyz.ply": ("ply\nformat ascii 1.0\nelement vertex 1\nproperty float a\nproperty float b\n"
                       "property float c\nend_header\n1 2 3\n").encode(),
        "claims_4e12_points.ply": ("ply\nformat binary_little_endian 1.0\nelement vertex 4000000000000\n" + XYZ_PLY +
                                   "end_header\n").encode() + floats([1, 2, 3]),
        "bad_number.ply": ("ply\nformat ascii 1.0\nelement vertex 1\n" + XYZ_PLY + "end_header\n1 2 3x\n").encode(),
        "no_xyz.pcd": b"FIELDS a b c\nSIZE 4 4 4\nTYPE F F F\nPOINTS 1\nDATA ascii\n1 2 3\n",
        "width_disagrees_with_points.pcd": (PCD_XYZ + "WIDTH 3\nHEIGHT 1\nPOINTS 2\nDATA ascii\n1 2 3\n4 5 6\n").encode(),
        "claims_4e12_points.pcd": (PCD_XYZ + "POINTS 4000000000000\nDATA binary\n").encode() + floats([1, 2, 3]),
        "size_not_a_number.pcd": b"FIELDS x y z\nSIZE 4 4 four\nTYPE F F F\nPOINTS 1\nDATA ascii\n1 2 3\n",
        "not_whole_points.bin": b"abcdefg",
    }


def write_all(folder: Path, items: Dict[str, object], save: Callable[[object, Path], None]) -> List[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, item in items.items():
        save(item, folder / name)
        paths.append(folder / name)
    return paths
