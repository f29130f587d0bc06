"""One-node ONNX files for bench/compare_ops_onnxruntime.py: the standard operators exported
point-cloud graphs are made of, at 1e3 to 1e7 elements, in the broadcasting and axis patterns
those graphs use (yanx27 PointNet++: sums over the last axis of size 3, max over a middle axis,
[B,S,K,3] - [B,S,1,3], rank-4 permutes, full-row sorts by TopK; attention: head transposes,
batched MatMul, Softmax, LayerNormalization).

A case is a file plus input recipes; inputs are generated in the worker (seeded), so nothing
large is written to disk. Secondary inputs that an exporter writes as constants (shapes, axes,
pads, repeats, scales) are initializers; data and index tensors are graph inputs.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
SIZES = (1_000, 100_000, 10_000_000)
NP_TO_ONNX = {np.dtype("float32"): TensorProto.FLOAT, np.dtype("int64"): TensorProto.INT64,
              np.dtype("int32"): TensorProto.INT32, np.dtype("bool"): TensorProto.BOOL}


@dataclasses.dataclass
class InputSpec:
    """How a worker makes one input: kind 'normal' | 'uniform' (low, high) | 'int' (low, high)
    | 'bool' (density) | 'perm' (values 0..high-1 shuffled, repeated to fill) | 'gathernd'
    (rows of (0, a row below high)) | 'npy' (the array saved at `path`)."""
    name: str
    dtype: str
    shape: Tuple[int, ...]
    kind: str = "normal"
    low: float = 0.0
    high: float = 1.0
    path: str = ""


@dataclasses.dataclass
class Case:
    name: str  # "<Op>/<pattern>/<numel>"
    op: str
    pattern: str
    numel: int  # the size the case is labelled with (elements of the largest tensor)
    model: onnx.ModelProto
    inputs: List[InputSpec]


def make_input(spec: InputSpec, seed: int) -> np.ndarray:
    if spec.kind == "npy":
        return np.load(spec.path)
    rng = np.random.default_rng(seed)
    n = int(np.prod(spec.shape)) if spec.shape else 1
    if spec.kind == "normal":
        a = rng.standard_normal(n, dtype=np.float32)
    elif spec.kind == "uniform":
        a = rng.uniform(spec.low, spec.high, n).astype(np.float32)
    elif spec.kind == "int":
        a = rng.integers(int(spec.low), int(spec.high), n)
    elif spec.kind == "bool":
        a = rng.random(n) < spec.high
    elif spec.kind == "perm":
        a = np.resize(rng.permutation(int(spec.high)), n)
    elif spec.kind == "gathernd":  # [..., 2] rows of (batch 0, a row below high)
        a = np.stack([np.zeros(n // 2, np.int64), rng.integers(0, int(spec.high), n // 2)], -1)
    else:
        raise ValueError(spec.kind)
    return a.astype(spec.dtype).reshape(spec.shape)


def one_node(op: str, specs: Sequence[InputSpec], n_out: int = 1, consts: Optional[Dict[str, np.ndarray]] = None,
             input_order: Optional[Sequence[str]] = None, **attrs) -> onnx.ModelProto:
    """A graph of one `op` node: graph inputs from `specs`, initializers from `consts`, node
    inputs in `input_order` (names; '' for an omitted optional input), outputs y0..y{n-1} of
    unspecified shape (every runtime infers them)."""
    consts = consts or {}
    order = list(input_order) if input_order is not None else [s.name for s in specs] + list(consts)
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, order, outs, **attrs)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(s.name, NP_TO_ONNX[np.dtype(s.dtype)], list(s.shape)) for s in specs],
        [helper.make_value_info(o, onnx.TypeProto()) for o in outs],
        [numpy_helper.from_array(v, k) for k, v in consts.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)  # fills the outputs' types


def f32(name: str, shape: Sequence[int], kind: str = "normal", low: float = 0.0, high: float = 1.0) -> InputSpec:
    return InputSpec(name, "float32", tuple(int(d) for d in shape), kind, low, high)


def i64(name: str, shape: Sequence[int], low: int, high: int, kind: str = "int") -> InputSpec:
    return InputSpec(name, "int64", tuple(int(d) for d in shape), kind, low, high)


def rows(numel: int, inner: int) -> int:
    return max(1, numel // inner)


def ints(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


# ----------------------------------------------------------------------------- families
Builder = Callable[[int], List[Tuple[str, onnx.ModelProto, List[InputSpec]]]]


def transposes(n: int):
    out = []
    for pattern, shape, perm in [
        ("rank3_021", (4, rows(n, 4 * 256), 256), (0, 2, 1)),  # permute(0, 2, 1) of [B, N, C]
        ("rank4_0321", (1, rows(n, 32 * 64), 32, 64), (0, 3, 2, 1)),  # yanx27 [B,S,K,C] -> [B,C,K,S]
        ("rank4_0213", (2, rows(n, 2 * 8 * 64), 8, 64), (0, 2, 1, 3)),  # attention head split
        ("rank5_03142", (2, 4, rows(n, 2 * 4 * 8 * 16), 8, 16), (0, 3, 1, 4, 2)),
    ]:
        x = f32("x", shape)
        out.append((f"Transpose|{pattern}", one_node("Transpose", [x], perm=list(perm)), [x]))
    return out


REDUCE_PATTERNS = {  # pattern: (shape builder, axes)
    "last3": (lambda n: (rows(n, 3), 3), [-1]),  # sum(src ** 2, -1) of [B, N, 3]
    "last256": (lambda n: (rows(n, 256), 256), [-1]),
    "middle32": (lambda n: (1, 64, 32, rows(n, 64 * 32)), [2]),  # max over K of [B, C, K, S]
    "first": (lambda n: (64, rows(n, 64)), [0]),
}


def reductions(n: int):
    out = []
    for op in ["ReduceSum", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum"]:
        patterns = REDUCE_PATTERNS if op in ("ReduceSum", "ReduceMax") else {"middle32": REDUCE_PATTERNS["middle32"]}
        for pattern, (shape_of, axes) in patterns.items():
            kind = "uniform" if op in ("ReduceProd", "ReduceLogSum") else "normal"
            x = f32("x", shape_of(n), kind, 0.9, 1.1)
            if op == "ReduceSum":  # axes is an input from opset 13
                model = one_node(op, [x], consts={"axes": ints(*axes)}, keepdims=1)
            else:
                model = one_node(op, [x], axes=axes, keepdims=1)
            out.append((f"{op}|{pattern}", model, [x]))
    return out


BINARY_PATTERNS = {  # pattern: (a shape, b shape) for numel n of the output
    "same": lambda n: ((n,), (n,)),
    "bsk3_bs13": lambda n: ((1, rows(n, 32 * 3), 32, 3), (1, rows(n, 32 * 3), 1, 3)),  # grouped_xyz - new_xyz
    "rows_x_vec": lambda n: ((rows(n, 64), 64), (64,)),
    "col_x_row": lambda n: ((1, rows(n, 1024), 1), (1, 1, 1024)),  # dist += |src|^2 (B,N,1) + (B,1,M)
    "scalar": lambda n: ((n,), ()),
}


def binaries(n: int):
    out = []
    for op in ["Add", "Sub", "Mul", "Div"]:
        for pattern, shapes in BINARY_PATTERNS.items():
            a_shape, b_shape = shapes(n)
            a, b = f32("a", a_shape), f32("b", b_shape, "uniform", 0.5, 1.5)
            out.append((f"{op}|{pattern}", one_node(op, [a, b]), [a, b]))
    x = f32("x", (n,))
    out.append(("Pow|square", one_node("Pow", [x], consts={"e": np.array(2.0, np.float32)}), [x]))
    x = f32("x", (n,), "uniform", 0.1, 2.0)
    out.append(("Pow|cube", one_node("Pow", [x], consts={"e": np.array(3.0, np.float32)}), [x]))
    cond = InputSpec("c", "bool", (n,), "bool", 0, 0.5)
    x = f32("x", (n,))
    out.append(("Where|same_scalar", one_node("Where", [cond, x], consts={"y": np.array(0, np.float32)},
                                              input_order=["c", "x", "y"]), [cond, x]))
    cond = InputSpec("c", "bool", (1, rows(n, 1024), 1024), "bool", 0, 0.5)
    x, y = f32("x", (1, rows(n, 1024), 1024)), f32("y", (1, rows(n, 1024), 1))
    out.append(("Where|bcast_last", one_node("Where", [cond, x, y]), [cond, x, y]))
    a, b = f32("a", (n,)), f32("b", (n,))
    out.append(("Less|same", one_node("Less", [a, b]), [a, b]))
    idx = i64("a", (rows(n, 64), 64), 0, 100)
    out.append(("Equal|int64_scalar", one_node("Equal", [idx], consts={"b": np.array(99, np.int64)}), [idx]))
    return out


def argmaxes(n: int):
    out = []
    for pattern, shape in [("last1024", (rows(n, 1024), 1024)), ("row", (1, n))]:  # FPS: argmax of [B, N]
        x = f32("x", shape)
        out.append((f"ArgMax|{pattern}", one_node("ArgMax", [x], axis=-1, keepdims=0), [x]))
    return out


def topks(n: int):
    out = []
    for pattern, inner, k in [("k3_of_128", 128, 3), ("k16_of_1024", 1024, 16), ("sort_1024", 1024, 1024),
                              ("k500_of_all", n, min(500, n))]:
        x = f32("x", (rows(n, inner), inner))
        model = one_node("TopK", [x], n_out=2, consts={"k": ints(k)}, axis=-1, largest=1, sorted=1)
        out.append((f"TopK|{pattern}", model, [x]))
    x = f32("x", (rows(n, 1024), 1024))
    model = one_node("TopK", [x], n_out=2, consts={"k": ints(32)}, axis=-1, largest=0, sorted=1)
    out.append(("TopK|smallest32_of_1024", model, [x]))
    return out


def gathers(n: int):
    out = []
    r = rows(n, 64)
    data, idx = f32("data", (r, 64)), i64("idx", (r,), 0, r)
    out.append(("Gather|rows64", one_node("Gather", [data, idx], axis=0), [data, idx]))
    data = f32("data", (1, rows(n, 32), 32))  # group_idx[:, :, 0]
    out.append(("Gather|last_scalar", one_node("Gather", [data], consts={"i": np.array(0, np.int64)}, axis=2), [data]))
    for c in (3, 64):
        m = rows(n, c)
        data = f32("data", (1, m, c))
        idx = InputSpec("idx", "int64", (1, m, 2), "int", 0, 1)  # batch column 0; rows below
        out.append((f"GatherND|rows{c}", one_node("GatherND", [data, idx]), [data, idx]))
    return out


def scatters(n: int):
    out = []
    data, idx, upd = f32("data", (n,)), i64("idx", (n // 2, 1), 0, n, "perm"), f32("upd", (n // 2,))
    out.append(("ScatterND|elements", one_node("ScatterND", [data, idx, upd]), [data, idx, upd]))
    r = rows(n, 64)
    data, idx, upd = f32("data", (r, 64)), i64("idx", (r // 2, 1), 0, r, "perm"), f32("upd", (r // 2, 64))
    out.append(("ScatterND|rows64", one_node("ScatterND", [data, idx, upd]), [data, idx, upd]))
    for pattern, shape, density in [("flat_half", (n,), 0.5), ("rank2_tenth", (rows(n, 1024), 1024), 0.1)]:
        c = InputSpec("c", "bool", shape, "bool", 0, density)
        out.append((f"NonZero|{pattern}", one_node("NonZero", [c]), [c]))
    return out


def shape_ops(n: int):
    out = []
    r = rows(n, 64)
    x = f32("x", (r * 64,))
    out.append(("Reshape|flat_to_2d", one_node("Reshape", [x], consts={"s": ints(-1, 64)}), [x]))
    x = f32("x", (r, 1))
    out.append(("Expand|col_to_64", one_node("Expand", [x], consts={"s": ints(r, 64)}), [x]))
    x = f32("x", (1, 64))
    out.append(("Expand|row_to_rows", one_node("Expand", [x], consts={"s": ints(r, 64)}), [x]))
    a, b = f32("a", (1, r, 3)), f32("b", (1, r, 61))
    out.append(("Concat|last_3_61", one_node("Concat", [a, b], axis=-1), [a, b]))
    a, b = f32("a", (r // 2, 64)), f32("b", (r - r // 2, 64))
    out.append(("Concat|axis0", one_node("Concat", [a, b], axis=0), [a, b]))
    x = f32("x", (r, 64))
    out.append(("Slice|inner_0_3", one_node("Slice", [x], consts={"s": ints(0), "e": ints(3), "a": ints(1)}), [x]))
    out.append(("Slice|rows_step2", one_node("Slice", [x], consts={"s": ints(0), "e": ints(r), "a": ints(0),
                                                                   "p": ints(2)}), [x]))
    out.append(("Split|last_halves", one_node("Split", [x], n_out=2, consts={"sp": ints(32, 32)}, axis=1), [x]))
    out.append(("Split|rows_halves", one_node("Split", [x], n_out=2, consts={"sp": ints(r // 2, r - r // 2)},
                                              axis=0), [x]))
    x = f32("x", (rows(n, 4), 1))
    out.append(("Tile|col_x4", one_node("Tile", [x], consts={"r": ints(1, 4)}), [x]))
    x = f32("x", (rows(n, 4 * 64), 64))
    out.append(("Tile|rows_x4", one_node("Tile", [x], consts={"r": ints(4, 1)}), [x]))
    hw = max(2, int(math.sqrt(n / 16)))
    x = f32("x", (1, 16, hw, hw))
    out.append(("Pad|constant1", one_node("Pad", [x], consts={"p": ints(0, 0, 1, 1, 0, 0, 1, 1)}), [x]))
    out.append(("Pad|reflect1", one_node("Pad", [x], consts={"p": ints(0, 0, 1, 1, 0, 0, 1, 1)}, mode="reflect"), [x]))
    hw = max(1, int(math.sqrt(n / 64)))  # output 16 x 2hw x 2hw = n
    x = f32("x", (1, 16, hw, hw))
    scales = {"roi": np.zeros(0, np.float32), "sc": np.array([1, 1, 2, 2], np.float32)}
    out.append(("Resize|linear_x2", one_node("Resize", [x], consts=scales, mode="linear"), [x]))
    out.append(("Resize|nearest_x2", one_node("Resize", [x], consts=scales, mode="nearest"), [x]))
    return out


def casts(n: int):
    out = []
    for pattern, spec, to in [("f32_to_i64", f32("x", (n,)), TensorProto.INT64),
                              ("i64_to_f32", i64("x", (n,), 0, 1000), TensorProto.FLOAT),
                              ("bool_to_f32", InputSpec("x", "bool", (n,), "bool", 0, 0.5), TensorProto.FLOAT)]:
        out.append((f"Cast|{pattern}", one_node("Cast", [spec], to=to), [spec]))
    return out


def dense(n: int):
    out = []
    rng = np.random.default_rng(0)
    length = max(2, int(math.sqrt(n / 8)))
    q, k = f32("q", (8, length, 32)), f32("k", (8, 32, length))
    out.append(("MatMul|attn_qk_8h", one_node("MatMul", [q, k]), [q, k]))
    a, b = f32("a", (1, rows(n, 1024), 3)), f32("b", (1, 3, 1024))
    out.append(("MatMul|sqdist_k3", one_node("MatMul", [a, b]), [a, b]))
    a = f32("a", (1, rows(n, 64), 64))
    w = {"w": rng.standard_normal((64, 64)).astype(np.float32)}
    out.append(("MatMul|proj_const64", one_node("MatMul", [a], consts=w), [a]))
    a = f32("a", (rows(n, 256), 256))
    gw = {"w": rng.standard_normal((256, 256)).astype(np.float32) * 0.06, "b": rng.standard_normal(256).astype(np.float32)}
    out.append(("Gemm|fc256_transB", one_node("Gemm", [a], consts=gw, transB=1), [a]))
    for inner in (16, 256):
        x = f32("x", (rows(n, inner), inner))
        out.append((f"Softmax|last{inner}", one_node("Softmax", [x], axis=-1), [x]))
    for inner in (64, 256):
        x = f32("x", (rows(n, inner), inner))
        ln = {"g": rng.uniform(0.5, 1.5, inner).astype(np.float32), "b": rng.standard_normal(inner).astype(np.float32)}
        out.append((f"LayerNormalization|last{inner}", one_node("LayerNormalization", [x], consts=ln, axis=-1), [x]))
    return out


FAMILIES: List[Builder] = [transposes, reductions, argmaxes, topks, binaries, gathers, scatters, shape_ops, casts,
                           dense]


def gathernd_rows_fix(case_inputs: List[InputSpec], data_rows: int) -> None:
    """GatherND indices: column 0 is the batch (0), column 1 a row in [0, data_rows)."""
    for s in case_inputs:
        if s.name == "idx" and s.kind == "int" and s.shape[-1] == 2:
            s.kind, s.low, s.high = "gathernd", 0, data_rows


def all_cases(sizes: Sequence[int] = SIZES) -> List[Case]:
    cases = []
    for n in sizes:
        for family in FAMILIES:
            for label, model, specs in family(n):
                op, pattern = label.split("|")
                if op == "GatherND":
                    gathernd_rows_fix(specs, specs[0].shape[1])
                cases.append(Case(f"{op}/{pattern}/{n:.0e}".replace("+0", ""), op, pattern, n, model, specs))
    return cases
