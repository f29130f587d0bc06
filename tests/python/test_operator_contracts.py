"""One definition per operator: the Python exporters are checked against the C++ schemas.

The C++ side states each pointrt-domain operator's inputs, outputs and attributes (name, type,
required or default) once, in its family's ``schemas.cc``; ``pointrt._pointrt.operator_schemas()``
returns them.  The Python side writes the ONNX nodes in two places: the ``OpDecl`` declarations
(torch >= 2.4 custom ops, both exporters; the sparse Functions' ``symbolic`` too) and the autograd
Functions' ``symbolic`` (the TorchScript exporter on torch 1.13).  Every node either can write is
compared with the C++ schema here, so a renamed, retyped or re-defaulted attribute fails CI.
The numpy oracle of the tests (tests/python/oracle.py) is checked for its defaults too, and the
C++ kernels against their own schemas: a node without a defaulted attribute runs as one carrying
the schema's default, and each family's kernels read exactly the attribute names it declares;
each operator page (docs/operators-<family>.md) names every attribute.
"""
from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any, Dict, List

import numpy as np
import pytest
import torch

from pointrt import _pointrt
from pointrt.torch import _library, _ops_library, _sparse_library, detect, ops, pose, sparse

import oracle  # tests/python (pytest puts the test folder on sys.path)

# the kind of an OpDecl attribute -> ONNX attribute type
_DECL_TYPES = {"int": "INT", "float": "FLOAT", "ints": "INTS", "floats": "FLOATS", "str": "STRING"}
# TorchScript's g.op attribute suffix -> ONNX attribute type (a list value makes it the plural type)
_SUFFIX_TYPES = {"i": "INT", "f": "FLOAT", "s": "STRING"}


def _schemas() -> Dict[str, Dict[str, Any]]:
    return {s["name"]: s for s in _pointrt.operator_schemas() if s["domain"] == "pointrt"}


SCHEMAS = _schemas()


def _same_value(a: Any, b: Any) -> bool:
    """Attribute values equal as the node stores them (floats as float32)."""
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b) and all(
            _same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b)
    return a == b


# ------------------------------------------------------------------ a graph that records g.op
class _Value:
    """A TorchScript value as far as the symbolics look at it (no type: no static sizes)."""

    def node(self) -> "_Value":
        return self

    def mustBeNone(self) -> bool:  # noqa: N802 - TorchScript's name
        return False


class _Graph:
    def __init__(self) -> None:
        self.nodes: List[Dict[str, Any]] = []

    def op(self, name: str, *inputs: Any, outputs: int = 1, **attrs: Any):
        self.nodes.append({"op": name, "inputs": list(inputs), "outputs": outputs, "attrs": attrs})
        return tuple(_Value() for _ in range(outputs)) if outputs > 1 else _Value()


def _node_attributes(attrs: Dict[str, Any]) -> Dict[str, tuple]:
    """{"min_radius_f": 0.1} -> {"min_radius": ("FLOAT", 0.1)}"""
    out = {}
    for key, value in attrs.items():
        name, suffix = key.rsplit("_", 1)
        kind = _SUFFIX_TYPES[suffix] + ("S" if isinstance(value, (list, tuple)) else "")
        out[name] = (kind, value)
    return out


def _check_node(node: Dict[str, Any], given: Dict[str, Any]) -> List[str]:
    """Differences between a written node and the C++ schema. ``given``: the attribute values the
    caller passed; any other attribute the node carries must have the C++ default."""
    domain, _, name = node["op"].partition("::")
    if domain != "pointrt" or name not in SCHEMAS:
        return [f"{node['op']}: no C++ schema of that name in the pointrt domain"]
    schema, problems = SCHEMAS[name], []
    cpp = schema["attributes"]
    written = _node_attributes(node["attrs"])
    for attr, (kind, value) in written.items():
        if attr not in cpp:
            problems.append(f"{name}: attribute '{attr}' is not in the C++ schema (it has {sorted(cpp)})")
            continue
        if kind != cpp[attr]["type"]:
            problems.append(f"{name}: attribute '{attr}' is written as {kind}, the C++ schema says {cpp[attr]['type']}")
        default = cpp[attr]["default"]
        if attr not in given and default is not None and not _same_value(value, default):
            problems.append(f"{name}: attribute '{attr}' defaults to {value!r} in Python, {default!r} in C++")
    for attr, a in cpp.items():
        if a["required"] and attr not in written:
            problems.append(f"{name}: required attribute '{attr}' is not written")
    problems += _count_problems(name, "inputs", len(node["inputs"]), schema["inputs"])
    problems += _count_problems(name, "outputs", node["outputs"], schema["outputs"])
    return problems


def _count_problems(name: str, what: str, count: int, params: List[Dict[str, Any]]) -> List[str]:
    """``count`` inputs or outputs: at least the required ones, at most all (trailing ones optional)."""
    n_required = sum(not p["optional"] for p in params)
    if n_required <= count <= len(params):
        return []
    return [f"{name}: {count} {what} written, the C++ schema has {n_required} to {len(params)}"]


# ------------------------------------------------------------------ the Functions' symbolics
def _t() -> _Value:
    return _Value()


_CONV_ATTRS = {"kernel_size": [3, 3, 3], "stride": [2, 2, 2], "padding": [1, 1, 1], "dilation": [1, 1, 1],
               "output_padding": [0, 0, 0], "input_spatial_shape": [8, 8, 8], "output_spatial_shape": [4, 4, 4],
               "subm": 0, "transposed": 0, "inverse": 0, "rulebook": "r1", "activation": "LeakyRelu", "alpha": 0.2}
_PCR = [0.0, -4.0, -1.0, 8.0, 4.0, 3.0]

# Function -> calls of its symbolic: (tensor arguments, attribute arguments by name). The first call
# gives only what the signature requires (the rest must take the C++ defaults), the second sets
# every attribute the symbolic can write.
SYMBOLIC_CALLS = {
    ops.FurthestPointSample: [([_t()], {"npoint": 16}), ([_t()], {"npoint": 16, "ignore_origin": 1})],
    ops.GatherPoints: [([_t(), _t()], {})],
    ops.BallQuery: [([_t(), _t()], {"radius": 0.2, "nsample": 8}),
                    ([_t(), _t()], {"radius": 0.2, "nsample": 8, "min_radius": 0.05})],
    ops.GroupPoints: [([_t(), _t()], {})],
    ops.ThreeNN: [([_t(), _t()], {})],
    ops.ThreeInterpolate: [([_t(), _t(), _t()], {})],
    ops.KNN: [([_t(), _t()], {"k": 4})],
    pose.MeanShift: [([_t(), _t()], {"num_instances": 3, "bandwidth": 0.5}),
                     ([_t(), _t()], {"num_instances": 3, "bandwidth": 0.5, "max_iterations": 10, "stop_threshold": 1e-4,
                                     "ignore_label": 0, "filter_vote": 1})],
    pose.InstanceReduce: [([_t(), _t()], {"num_instances": 3}),
                          ([_t(), _t()], {"num_instances": 3, "reduction": "sum", "ignore_label": 0})],
    pose.RigidFit: [([_t(), _t()], {}), ([_t(), _t(), _t()], {})],
    detect.CenterPointDecode: [
        ([_t()] * 5 + [None], {"voxel_size": [0.1, 0.1, 0.2], "point_cloud_range": _PCR, "out_size_factor": 4.0}),
        ([_t()] * 6, {"voxel_size": [0.1, 0.1, 0.2], "point_cloud_range": _PCR, "out_size_factor": 4.0,
                      "score_threshold": 0.3, "post_center_range": _PCR, "max_detections": 50,
                      "heatmap_activation": "none", "size_activation": "none", "peak_kernel": 3,
                      "candidates": "topk"})],
    detect.BoxNMS: [([_t(), _t(), None, None], {}),
                    ([_t(), _t(), _t(), _t()], {"mode": "circle", "iou_threshold": 0.5, "min_radius": 1.0,
                                                "max_output": 10, "per_class": 1})],
    sparse._SparseConvFunction: [([_t(), _t(), _t(), None], {"attrs": _CONV_ATTRS, "rulebook": None}),
                                 ([_t(), _t(), _t(), _t()], {"attrs": dict(_CONV_ATTRS, subm=1), "rulebook": None})],
    sparse._ScatterDenseFunction: [([_t(), _t()], {"spatial_shape": [4, 4, 4], "batch_size": 2})],
    sparse._VoxelizeFunction: [([_t()], {"voxel_size": [0.1, 0.1, 0.2], "pc_range": _PCR, "max_points": 5,
                                         "max_voxels": 100})],
}


def _functions_with_symbolic() -> List[type]:
    found = []
    for module in (ops, pose, detect, sparse):
        for value in vars(module).values():
            if (inspect.isclass(value) and issubclass(value, torch.autograd.Function) and "symbolic" in vars(value)
                    and value.__module__ == module.__name__):
                found.append(value)
    return found


def test_every_symbolic_is_checked() -> None:
    missing = [f.__qualname__ for f in _functions_with_symbolic() if f not in SYMBOLIC_CALLS]
    assert not missing, f"add these Functions to SYMBOLIC_CALLS: {missing}"


@pytest.mark.parametrize("function", list(SYMBOLIC_CALLS), ids=lambda f: f.__name__)
def test_symbolic_matches_cpp_schema(function) -> None:
    problems = []
    for tensors, attrs in SYMBOLIC_CALLS[function]:
        g = _Graph()
        function.symbolic(g, *tensors, **attrs)
        assert len(g.nodes) == 1, f"{function.__name__}.symbolic wrote {len(g.nodes)} nodes"
        given = dict(attrs.get("attrs", attrs))  # SparseConv passes its attributes as one dict
        problems += _check_node(g.nodes[0], given)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("function", list(SYMBOLIC_CALLS), ids=lambda f: f.__name__)
def test_symbolic_defaults_match_cpp(function) -> None:
    """A symbolic's keyword defaults named after an attribute equal the C++ default."""
    g = _Graph()
    tensors, attrs = SYMBOLIC_CALLS[function][0]
    function.symbolic(g, *tensors, **attrs)
    cpp = SCHEMAS[g.nodes[0]["op"].partition("::")[2]]["attributes"]
    problems = []
    for p in inspect.signature(function.symbolic).parameters.values():
        if p.name in cpp and p.default not in (inspect.Parameter.empty, None) and cpp[p.name]["default"] is not None:
            if not _same_value(p.default, cpp[p.name]["default"]):
                problems.append(f"{p.name}: {p.default!r} in Python, {cpp[p.name]['default']!r} in C++")
    assert not problems, f"{function.__name__}: " + "; ".join(problems)


# ------------------------------------------------------------------ the OpDecl declarations
DECLS = list(_ops_library.DECLS) + list(_sparse_library.DECLS)


def _decl_problems(decl: _library.OpDecl) -> List[str]:
    if decl.domain != "pointrt" or decl.name not in SCHEMAS:
        return [f"{decl.qualname}: no C++ schema of that name in the pointrt domain"]
    schema, problems = SCHEMAS[decl.name], []
    cpp = schema["attributes"]
    carried = [a for a in decl.attrs if a.name not in decl.hidden]
    for a in carried:
        if a.name not in cpp:
            problems.append(f"{decl.name}: attribute '{a.name}' is not in the C++ schema (it has {sorted(cpp)})")
            continue
        c = cpp[a.name]
        if _DECL_TYPES[a.kind] != c["type"]:
            problems.append(f"{decl.name}: attribute '{a.name}' is {_DECL_TYPES[a.kind]} in Python, {c['type']} in C++")
        if a.default is not None and c["default"] is not None and not _same_value(a.value(a.default), c["default"]):
            problems.append(f"{decl.name}: attribute '{a.name}' defaults to {a.default!r} in Python, "
                            f"{c['default']!r} in C++")
        if c["required"] and a.omit_default:
            problems.append(f"{decl.name}: required attribute '{a.name}' is left out at its Python default")
    names = {a.name for a in carried}
    problems += [f"{decl.name}: required attribute '{n}' is not declared" for n, c in cpp.items()
                 if c["required"] and n not in names]
    node_inputs = decl.node_inputs(decl.inputs)
    if len(node_inputs) != len(schema["inputs"]):
        problems.append(f"{decl.name}: {len(node_inputs)} node inputs, the C++ schema has {len(schema['inputs'])}")
    else:
        for n, i in zip(node_inputs, schema["inputs"]):
            if (n in decl.optional_inputs) != i["optional"]:
                problems.append(f"{decl.name}: input '{n}' optional in one, not the other")
    problems += _count_problems(decl.name, "outputs", len(decl.outputs), schema["outputs"])
    return problems


@pytest.mark.parametrize("decl", DECLS, ids=lambda d: d.name)
def test_declaration_matches_cpp_schema(decl) -> None:
    problems = _decl_problems(decl)
    assert not problems, "\n".join(problems)


def test_python_writes_only_operators_the_runtime_declares() -> None:
    written = {d.name for d in DECLS}
    for function, calls in SYMBOLIC_CALLS.items():
        g = _Graph()
        function.symbolic(g, *calls[0][0], **calls[0][1])
        written.add(g.nodes[0]["op"].partition("::")[2])
    assert written <= set(SCHEMAS), sorted(written - set(SCHEMAS))
    assert set(SCHEMAS) <= written, f"C++ operators no Python exporter writes: {sorted(set(SCHEMAS) - written)}"


# ------------------------------------------------------------------ the numpy oracle
ORACLE_OPS = {oracle.fps: "FurthestPointSample", oracle.ball_query: "BallQuery", oracle.k_nearest: "KNN"}


@pytest.mark.parametrize("function", list(ORACLE_OPS), ids=lambda f: f.__name__)
def test_oracle_defaults_match_cpp(function) -> None:
    cpp = SCHEMAS[ORACLE_OPS[function]]["attributes"]
    for p in inspect.signature(function).parameters.values():
        if p.default is not inspect.Parameter.empty and p.name in cpp:
            assert _same_value(p.default, cpp[p.name]["default"]), (function.__name__, p.name)


def test_the_check_catches_a_wrong_name() -> None:
    """The comparison itself: a misspelt attribute and a wrong default are reported."""
    g = _Graph()
    g.op("pointrt::BallQuery", _t(), _t(), radius_f=0.2, nsample_i=8, min_radus_f=0.1)
    assert any("'min_radus' is not in the C++ schema" in p for p in _check_node(g.nodes[0], {}))
    g.op("pointrt::FurthestPointSample", _t(), npoint_i=4, ignore_origin_i=1)
    assert any("defaults to 1 in Python, 0 in C++" in p for p in _check_node(g.nodes[1], {"npoint": 4}))


# ------------------------------------------------------------------ the kernels' own defaults
# The kernels parse their attributes themselves (a default written once more, in the parser): a node
# without the attribute must run exactly as one that carries the schema's default. Inputs where the
# attribute matters (origin points for ignore_origin, centres next to points for min_radius, label 0 for
# ignore_label, scores about the threshold, a kernel that a stride would thin out).
def _cloud(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


def _kernel_cases() -> Dict[str, tuple]:
    rng = np.random.default_rng(13)
    xyz = _cloud(rng, (1, 16, 3), 1.0, 2.0)
    xyz[0, 5:8] = 0.0  # points at the origin, far from the others: FPS takes one unless ignore_origin
    labels = rng.integers(-1, 3, (1, 16)).astype(np.int32)
    sites = np.array([[0, z, y, x] for z in range(3) for y in range(3) for x in range(2)], np.int32)
    boxes = np.concatenate([_cloud(rng, (1, 10, 3), 0, 3), _cloud(rng, (1, 10, 3), 1, 2),
                            _cloud(rng, (1, 10, 1))], axis=2)
    heads = {"heatmap": _cloud(rng, (1, 2, 8, 8), -4, 2), "offset": _cloud(rng, (1, 2, 8, 8)),
             "height": _cloud(rng, (1, 1, 8, 8)), "size": _cloud(rng, (1, 3, 8, 8)),
             "rotation": _cloud(rng, (1, 2, 8, 8))}
    return {
        "FurthestPointSample": ({"xyz": xyz}, {"npoint": 4}),
        "BallQuery": ({"xyz": xyz, "new_xyz": xyz[:, :4] + np.float32(0.01)}, {"radius": 0.6, "nsample": 4}),
        "MeanShift": ({"votes": _cloud(rng, (1, 2, 16, 3)), "labels": labels},
                      {"num_instances": 3, "bandwidth": 0.5}),
        "InstanceReduce": ({"values": _cloud(rng, (1, 16, 3)), "labels": labels}, {"num_instances": 3}),
        "CenterPointDecode": (heads, {"voxel_size": [0.1, 0.1, 0.2], "point_cloud_range": _PCR,
                                      "out_size_factor": 4.0}),
        "BoxNMS": ({"boxes": boxes, "scores": rng.uniform(0, 1, (1, 10)).astype(np.float32)}, {}),
        "SparseConv": ({"features": _cloud(rng, (len(sites), 2)), "indices": sites,
                        "weight": _cloud(rng, (3, 3, 3, 3, 2))},
                       {"kernel_size": [3, 3, 3], "input_spatial_shape": [4, 4, 4]}),
        "ScatterDense": ({"features": _cloud(rng, (len(sites), 2)), "indices": sites}, {"spatial_shape": [4, 4, 4]}),
    }


def _run_node(tmp_path, op: str, inputs: Dict[str, np.ndarray], attrs: Dict[str, Any]) -> List[np.ndarray]:
    import onnx
    from onnx import helper

    schema = SCHEMAS[op]
    outputs = [o["name"] for o in schema["outputs"]]
    node = helper.make_node(op, list(inputs), outputs, domain="pointrt", **attrs)
    graph = helper.make_graph(
        [node], "contract",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
         for n, v in inputs.items()],
        [helper.make_empty_tensor_value_info(n) for n in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("pointrt", 1)])
    path = tmp_path / f"{op}_{len(attrs)}.onnx"
    onnx.save(model, str(path))
    result = _pointrt.Session(str(path)).run(inputs)
    return [result[n] for n in outputs]


KERNEL_CASES = _kernel_cases()


def test_every_defaulted_attribute_has_a_kernel_case() -> None:
    with_defaults = {n for n, s in SCHEMAS.items() if any(a["default"] is not None for a in s["attributes"].values())}
    assert with_defaults <= set(KERNEL_CASES), sorted(with_defaults - set(KERNEL_CASES))


@pytest.mark.parametrize("op", list(KERNEL_CASES))
def test_kernel_defaults_match_cpp_schema(tmp_path, op) -> None:
    inputs, required = KERNEL_CASES[op]
    implicit = _run_node(tmp_path, op, inputs, required)
    problems = []
    for attr, a in SCHEMAS[op]["attributes"].items():
        if a["default"] is None:
            continue
        explicit = _run_node(tmp_path, op, inputs, dict(required, **{attr: a["default"]}))
        if not all(x.shape == y.shape and np.array_equal(x, y, equal_nan=True) for x, y in zip(implicit, explicit)):
            problems.append(f"{op}: the kernel without '{attr}' differs from '{attr}' = {a['default']!r}")
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------ the names the kernels read
# A static check of the C++ side itself: the attribute names a family's kernels read (Attributes'
# get_int/get_float/get_ints/get_floats/get_string/has, sparse's get_ints3, detect's choice) are
# exactly those its schemas.cc declares, so a kernel cannot read a name the schema (and so every
# check above) does not know.
SRC = Path(__file__).resolve().parents[2] / "src" / "ops"
_READ = re.compile(r'\b(?:get_(?:int|float|ints|floats|string|ints3)|has|choice)\('
                   r'\s*(?:[\w.]+(?:\(\))?\s*,\s*)?"(\w+)"')
_DECLARED = re.compile(r'\.Attr\(\s*"(\w+)"')


@pytest.mark.parametrize("family", ["pointnet2", "sparse", "pose", "detect"])
def test_kernels_read_the_declared_attributes(family) -> None:
    folder = SRC / family
    declared = set(_DECLARED.findall((folder / "schemas.cc").read_text()))
    read = set()
    for f in sorted(folder.glob("*.cc")) + sorted(folder.glob("*.h")):
        if f.name != "schemas.cc":
            read |= set(_READ.findall(f.read_text()))
    assert read - declared == set(), f"src/ops/{family} reads attributes its schemas.cc does not declare"
    assert declared - read == set(), f"src/ops/{family}/schemas.cc declares attributes no kernel reads"


# ------------------------------------------------------------------ the operator pages
DOCS = Path(__file__).resolve().parents[2] / "docs"


def _doc_section(op: str) -> str:
    for page in sorted(DOCS.glob("operators-*.md")):
        m = re.search(rf"^## {op}\n(.*?)(?=^## |\Z)", page.read_text(), re.S | re.M)
        if m:
            return m.group(1)
    return ""


@pytest.mark.parametrize("op", sorted(SCHEMAS))
def test_operator_page_names_every_attribute(op) -> None:
    """docs/operators-<family>.md has a section ``## <Op>`` naming each attribute in backticks."""
    section = _doc_section(op)
    assert section, f"no '## {op}' section in docs/operators-*.md"
    leading = {m.group(0) for m in (re.match(r"\w+", t) for t in re.findall(r"`([^`]*)`", section)) if m}
    missing = sorted(set(SCHEMAS[op]["attributes"]) - leading)
    assert not missing, f"{op}: attributes the operator page does not name: {missing}"
