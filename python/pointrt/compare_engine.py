"""``pointrt.compare``: where do pointrt's numbers drift from a reference, layer by layer?

The file runs once per mode in the pointrt runtime with ``SessionOptions::observe`` /
``RunHooks::on_value`` (``Session(observe=...)``, ``run(on_value=...)``): every value that has a
reference is measured as the runtime computes it, and

* cumulative: the run goes on with pointrt's own value (errors add up along the graph);
* isolated: the run goes on with the reference's value, so each node starts from the reference's
  inputs and an error is charged to the node (or, for PyTorch, the module) that made it.

References: a PyTorch ``nn.Module`` (:mod:`pointrt.compare_torch`), ONNX Runtime on the same file,
saved arrays (``.npz``, Polygraphy JSON), or pointrt's own float32 run (for ``precision="fp16"``,
which rounds weights and every node's float32 output through float16, as an fp16 engine stores
them, and counts overflows to inf and flushes to zero).
"""
import os
import resource
import tempfile
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .errors import PointrtError
from .fp16 import round_to_fp16, round_weights, static_hazards

__all__ = ["compare", "CompareReport", "LayerResult", "MODES"]

MODES = ("cumulative", "isolated")


@dataclass
class LayerResult:
    value: str             # the ONNX value
    label: str             # module path, "mark NAME", "output NAME", or "" (the value itself)
    node: str              # the node that computes it
    op_type: str
    position: int          # the node's index in the file (graph order)
    shape: List[int]
    max_abs_error: float
    error_to_magnitude: float  # max |err| / max |ref|
    cosine: float
    magnitude: float       # max |ref|
    over_tolerance: bool
    overflow: int = 0      # fp16: finite values that became inf
    underflow: int = 0     # fp16: non-zero values that became 0
    note: str = ""


@dataclass
class CompareReport:
    model: str
    reference: str
    precision: str
    atol: float
    rtol: float
    modes: Dict[str, List[LayerResult]]
    unmatched: List[str] = field(default_factory=list)   # reference names the file never computed
    hazards: List[str] = field(default_factory=list)
    seconds: Dict[str, float] = field(default_factory=dict)
    peak_rss_mib: float = 0.0
    compared_mib: float = 0.0  # the reference tensors held during the runs

    def first_over(self, mode: str) -> Optional[LayerResult]:
        return next((r for r in self.modes.get(mode, []) if r.over_tolerance), None)

    @property
    def ok(self) -> bool:
        return all(self.first_over(m) is None for m in self.modes)

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        d["first_over"] = {m: (asdict(r) if (r := self.first_over(m)) else None) for m in self.modes}
        d["ok"] = self.ok
        return d

    def __str__(self) -> str:
        from .compare_report import format_table
        return format_table(self)


_CHUNK = 1 << 20  # elements per float64 slice: keeps the comparison's own memory to a few MiB


def _measure(got: np.ndarray, ref: np.ndarray) -> Tuple[float, float, float, float, str]:
    """(max |err|, max |err| / max |ref|, cosine, max |ref|, note), in float64, slice by slice."""
    if tuple(got.shape) != tuple(ref.shape):
        return float("inf"), float("inf"), 0.0, 0.0, f"shape {list(got.shape)} but the reference is {list(ref.shape)}"
    gflat, rflat = got.reshape(-1), ref.reshape(-1)
    err = magnitude = dot = ng2 = nr2 = 0.0
    for k in range(0, gflat.size, _CHUNK):
        g = gflat[k:k + _CHUNK].astype(np.float64)
        r = rflat[k:k + _CHUNK].astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            same = (g == r) | (np.isnan(g) & np.isnan(r))
            diff = np.abs(g - r)
            diff[same] = 0.0
            diff[np.isnan(diff)] = np.inf
            finite = np.isfinite(g) & np.isfinite(r)
            err = max(err, float(diff.max()))
            magnitude = max(magnitude, float(np.abs(r[np.isfinite(r)]).max(initial=0.0)))
            gf, rf = g[finite], r[finite]
            dot += float(np.dot(gf, rf))
            ng2 += float(np.dot(gf, gf))
            nr2 += float(np.dot(rf, rf))
    if not gflat.size:
        return 0.0, 0.0, 1.0, 0.0, ""
    cosine = dot / (np.sqrt(ng2) * np.sqrt(nr2)) if ng2 > 0 and nr2 > 0 else (1.0 if ng2 == nr2 else 0.0)
    rel = err / magnitude if magnitude > 0 else (0.0 if err == 0 else float("inf"))
    return err, rel, float(cosine), magnitude, ""


class _Refs:
    """Reference values by ONNX value name (a dict), with the TorchReference interface."""

    def __init__(self, arrays: Dict[str, np.ndarray], labels: Optional[Dict[str, str]] = None):
        self.direct = dict(arrays)
        self.labels = labels or {}

    def names(self) -> List[str]:
        return list(self.direct)

    def get(self, value: str, shape: Sequence[int], got: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
        return self.direct.get(value)

    def label(self, value: str) -> str:
        return self.labels.get(value, "")

    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.direct.values())

    def unmatched(self, seen) -> List[str]:
        return [n for n in self.direct if n not in seen]


def _node_index(graph) -> Dict[str, Tuple[int, str, str]]:
    idx = {}
    for i, n in enumerate(graph.node):
        for o in n.output:
            if o:
                idx[o] = (i, n.name, n.op_type)
    return idx


def _run_mode(sess, feeds, refs, mode: str, fp16: bool, atol: float, rtol: float, where) -> List[LayerResult]:
    rows: List[LayerResult] = []

    def on_value(name: str, got: np.ndarray):
        used, over, under = (round_to_fp16(got) if fp16 and got.dtype == np.float32 else (got, 0, 0))
        ref = refs.get(name, got.shape, used)
        replacement = used if used is not got else None
        if ref is None:
            return replacement
        err, rel, cos, mag, note = _measure(used, ref)
        exact = got.dtype.kind not in "fc"
        bad = err > 0 if exact else not err <= atol + rtol * mag
        pos, node, op = where.get(name, (-1, "", ""))
        rows.append(LayerResult(name, refs.label(name), node, op, pos, list(got.shape), err, rel, cos, mag, bad,
                                over, under, note))
        if mode == "isolated" and not note:
            r = np.ascontiguousarray(ref, dtype=got.dtype)
            replacement = round_to_fp16(r)[0] if fp16 and r.dtype == np.float32 else r
        return replacement

    sess.run(feeds, on_value=on_value)
    return rows


def _pointrt_values(runtime, path: str, feeds, threads: int) -> Dict[str, np.ndarray]:
    values: Dict[str, np.ndarray] = {}
    sess = runtime.Session(path, threads=threads, observe=["*"])
    sess.run(feeds, on_value=lambda n, v: values.__setitem__(n, v.copy()))
    return values


class _LoadedOnRead(Mapping):
    """{value name: reference array}; spilled references are read back when accessed."""

    def __init__(self, values: Dict[str, Any]) -> None:
        self._values = values

    def __getitem__(self, name: str) -> np.ndarray:
        from .compare_torch import load_array
        return load_array(self._values[name])

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


def _return_free_memory() -> None:
    """Collect garbage and hand freed heap pages back to the system (glibc keeps them mapped, so a
    freed torch forward's activations would otherwise count toward the pointrt runs' peak)."""
    import ctypes
    import gc
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def _feeds_for(graph, inputs) -> Dict[str, np.ndarray]:
    init = {t.name for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in init]
    if isinstance(inputs, dict):
        items = inputs.items()
    else:
        items = zip(names, inputs if isinstance(inputs, (list, tuple)) else [inputs])
    feeds = {}
    for k, v in items:
        v = v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)
        feeds[k] = np.ascontiguousarray(v)
    missing = [n for n in names if n not in feeds]
    if missing:
        raise PointrtError(f"compare: no value for the model input(s) {missing} (inputs: {names})")
    return {n: feeds[n] for n in names}  # the file's input order (PyTorch's forward arguments)


def _reference(reference, path, graph, feeds, inputs, runtime, threads, runner, seconds):
    """(a _Refs or TorchReference, its description)."""
    if isinstance(reference, dict):
        return _Refs(reference), "arrays"
    if isinstance(reference, str) and reference == "onnxruntime":
        from .compare_ort import onnxruntime_values
        t0 = time.perf_counter()
        values = onnxruntime_values(path, feeds)
        seconds["reference"] = time.perf_counter() - t0
        return _Refs(values), "onnxruntime"
    if isinstance(reference, str) and reference == "pointrt":
        t0 = time.perf_counter()
        values = _pointrt_values(runtime, path, feeds, threads)
        seconds["reference"] = time.perf_counter() - t0
        return _Refs(values), "pointrt float32"
    if isinstance(reference, (str, os.PathLike)):
        from .compare_io import read_arrays
        return _Refs(read_arrays(os.fspath(reference), runner)), os.fspath(reference)
    import torch
    if isinstance(reference, torch.nn.Module):
        from .compare_torch import run_torch_reference
        args = inputs if isinstance(inputs, (list, tuple)) else list(feeds.values()) if isinstance(
            inputs, dict) else [inputs]
        args = [torch.as_tensor(a) if not isinstance(a, torch.Tensor) else a for a in args]
        ref, seconds["reference"] = run_torch_reference(reference, args, graph)
        return ref, f"torch {type(reference).__name__}"
    raise PointrtError(f"compare: reference must be an nn.Module, 'onnxruntime', 'pointrt', a .npz/.json path or "
                       f"a dict of arrays, got {type(reference).__name__}")


def compare(model: Union[str, os.PathLike], inputs: Any, reference: Any = "pointrt", *,
            modes: Sequence[str] = MODES, precision: str = "fp32", atol: float = 1e-5, rtol: float = 1e-3,
            threads: int = 0, runner: Optional[str] = None) -> CompareReport:
    """Compare the ONNX file ``model``, run by pointrt on ``inputs``, with ``reference``, layer by layer.

    Args:
      model: the .onnx file.
      inputs: ``{input name: array}``, or the model's positional inputs (tensors or arrays) in the
        file's input order (for a PyTorch reference: the ``forward`` arguments).
      reference: an ``nn.Module`` (its module outputs and ``pointrt.torch.mark`` tensors),
        ``"onnxruntime"`` (every value of the same file), a ``.npz`` / Polygraphy ``.json`` path or
        a dict of named arrays, or ``"pointrt"`` (pointrt's own float32 run, for ``precision="fp16"``).
      modes: any of ``"cumulative"``, ``"isolated"``.
      precision: ``"fp32"``, or ``"fp16"`` to emulate float16 storage of weights and node outputs.
      atol, rtol: a value is over tolerance when max |err| > atol + rtol * max |ref|.
      runner: the Polygraphy runner to read from a ``.json`` (default: the first).

    Returns:
      a :class:`CompareReport` (``str()`` is the table; ``.to_dict()`` the JSON; see
      :func:`pointrt.compare_report.plot`).
    """
    import onnx

    from .runtime import runtime_status
    bad_modes = [m for m in modes if m not in MODES]
    if bad_modes or not modes:
        raise PointrtError(f"compare: modes must be among {MODES}, got {list(modes)}")
    if precision not in ("fp32", "fp16"):
        raise PointrtError(f"compare: precision is 'fp32' or 'fp16', got {precision!r}")
    st = runtime_status()
    if st.module is None:
        raise PointrtError(st.reason)
    rt = st.module
    path = os.fspath(model)
    fp16 = precision == "fp16"
    proto = onnx.load(path, load_external_data=fp16)
    graph = proto.graph
    feeds = _feeds_for(graph, inputs)
    if not fp16:  # only the nodes are needed from here on: the weights would stay alive through every run
        graph.ClearField("initializer")
    seconds: Dict[str, float] = {}
    refs, described = _reference(reference, path, graph, feeds, inputs, rt, threads, runner, seconds)
    _return_free_memory()  # the reference's own intermediates (a torch forward's) are gone by now
    hazards: List[str] = []
    test_path, tmp = path, None
    if fp16:
        hazards = [str(h) for h in static_hazards(graph)] + round_weights(proto)
        tmp = tempfile.TemporaryDirectory()
        test_path = os.path.join(tmp.name, "fp16_weights.onnx")
        onnx.save(proto, test_path)
        graph.ClearField("initializer")
    del proto
    _return_free_memory()
    where = _node_index(graph)
    observe = ["*"] if fp16 else [n for n in refs.names() if n in where]
    compared_mib = refs.nbytes() / 2**20
    report = CompareReport(path, described, precision, atol, rtol, {}, hazards=hazards, seconds=seconds)
    try:
        sess = rt.Session(test_path, threads=threads, observe=observe)
        for mode in modes:
            t0 = time.perf_counter()
            report.modes[mode] = _run_mode(sess, feeds, refs, mode, fp16, atol, rtol, where)
            seconds[mode] = time.perf_counter() - t0
    finally:
        if tmp is not None:
            tmp.cleanup()
    seen = {r.value for rows in report.modes.values() for r in rows}
    report.unmatched = refs.unmatched(seen)
    report.reference_values = _LoadedOnRead({v: refs.direct[v] for v in seen if v in refs.direct})  # not in to_dict()
    report.compared_mib = compared_mib
    report.peak_rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    return report
