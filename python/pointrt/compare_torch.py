"""PyTorch as the reference of ``pointrt.compare``: module outputs and marks, lined up with the
ONNX values that carry them.

* Every module's forward output is recorded by a forward hook (a copy, written at once to a
  temporary spill file: later in-place ops must not change it, and a full network's outputs must
  not stay in memory while pointrt runs); tensors marked with :func:`pointrt.torch.mark` are recorded by name.
* torch.onnx (1.13+) names each node after the module scopes it was traced in, e.g.
  ``/SA_modules.0/mlps.0/layer1/conv/Conv``. A scope path resolves to the module's qualified name
  (``SA_modules.0.mlps.0.layer1.conv``); the values a module's nodes produce and something outside
  the module reads (or the graph returns) are that module's outputs in the file.
* Which hook tensor is which such value is settled when the runtime computes the value: the first
  unclaimed tensor of the innermost module with the same shape (modules that return several
  tensors of one shape are matched in order).
* A mark is the Identity in scope ``pointrt.mark.<name>``; graph outputs are the root module's
  outputs, in order.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .torch.mark import MARK_SCOPE_PREFIX

__all__ = ["TorchReference", "run_torch_reference", "module_outputs_in_file", "SpilledArray", "load_array"]

_TAG = "_pointrt_compare_serial"


def _flatten(out: Any) -> list:
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flatten(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _flatten(o)]
    return []


def _scope_module(node_name: str) -> Optional[str]:
    """'/layers/layers.0/conv/Conv' -> 'layers.0.conv'; None for names without scopes."""
    if not node_name.startswith("/"):
        return None
    parts = node_name.split("/")[1:-1]
    q = ""
    for p in parts:
        # a component is either the child's own name or its qualified name (Sequential/ModuleList)
        q = p if (q and p.startswith(q + ".")) or not q else f"{q}.{p}"
    return q


def module_outputs_in_file(graph) -> Tuple[Dict[str, List[str]], Dict[str, str]]:
    """({module qualified name: its output values in node order}, {mark name: value})."""
    produced_in: Dict[str, str] = {}
    readers: Dict[str, List[str]] = {}
    marks: Dict[str, str] = {}
    order: List[Tuple[str, str]] = []
    computed = {v for n in graph.node for v in n.output}
    for n in graph.node:
        q = _scope_module(n.name)
        if q is None:
            continue
        last = n.name.split("/")[-2] if n.name.count("/") >= 2 else ""
        if n.op_type == "Identity" and last.startswith(MARK_SCOPE_PREFIX) and n.output:
            # the marked value itself (so the report names the node that computed it), unless it
            # is a graph input or a constant, which no node computes
            marks[last[len(MARK_SCOPE_PREFIX):]] = n.input[0] if n.input[0] in computed else n.output[0]
        for v in n.input:
            readers.setdefault(v, []).append(q)
        for v in n.output:
            if v:
                produced_in[v] = q
                order.append((v, q))
    graph_outputs = {o.name for o in graph.output}
    boundary: Dict[str, List[str]] = {}
    for v, q in order:
        parts = q.split(".")
        # every enclosing module whose scope some reader of v is outside of
        for k in range(len(parts), 0, -1):
            m = ".".join(parts[:k])
            outside = v in graph_outputs or any(r != m and not r.startswith(m + ".") for r in readers.get(v, []))
            if outside:
                boundary.setdefault(m, []).append(v)
    return boundary, marks


class SpilledArray:
    """A reference array kept in the compare run's spill file instead of in memory: a full network's
    module outputs (2.3 GiB for PVN3D) would otherwise stay resident through every pointrt run.
    ``shape``, ``dtype`` and ``nbytes`` as an ndarray's; :meth:`load` reads it back (a fresh copy)."""

    __slots__ = ("_store", "_offset", "shape", "dtype")

    def __init__(self, store: "SpillStore", offset: int, shape: Tuple[int, ...], dtype: np.dtype) -> None:
        self._store, self._offset, self.shape, self.dtype = store, offset, shape, dtype

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def load(self) -> np.ndarray:
        return self._store.read(self._offset, self.shape, self.dtype)


class SpillStore:
    """An anonymous temporary file the references are appended to (the page cache holds them, not
    the process: they do not count toward its resident memory)."""

    def __init__(self) -> None:
        import tempfile
        self._file = tempfile.TemporaryFile(prefix="pointrt_compare_")
        self._end = 0

    def put(self, array: np.ndarray) -> SpilledArray:
        a = np.ascontiguousarray(array)
        offset = self._end
        self._file.seek(offset)
        self._file.write(memoryview(a).cast("B") if a.size else b"")
        self._end += a.nbytes
        return SpilledArray(self, offset, tuple(a.shape), a.dtype)

    def read(self, offset: int, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        out = np.empty(shape, dtype=dtype)
        if out.size:
            self._file.seek(offset)
            self._file.readinto(memoryview(out).cast("B"))
        return out


def load_array(value: Any) -> np.ndarray:
    """The array itself, read back from the spill file if it was spilled."""
    return value.load() if isinstance(value, SpilledArray) else value


class TorchReference:
    """Reference values from one PyTorch forward, matched to file values as they are computed.

    ``module_tensors[m]``: (serial number of the original tensor, copy) for each output of module ``m``;
    ``module_inputs[m]``: ids of its input tensors. A module with no node in the file whose input
    is another module's output was folded into it by the exporter (BatchNorm into Conv): that
    module's value then answers for both, and the closer of the two tensors is taken.
    """

    def __init__(self, module_tensors: Dict[str, List[Tuple[int, np.ndarray]]], module_inputs: Dict[str, List[int]],
                 marks: Dict[str, np.ndarray], outputs: List[Tuple[int, np.ndarray]], graph):
        boundary, mark_values = module_outputs_in_file(graph)
        self.direct: Dict[str, np.ndarray] = {}
        self.labels: Dict[str, str] = {}
        for name, value in mark_values.items():
            if name in marks:
                self.direct[value] = marks[name]
                self.labels[value] = f"mark {name}"
        owner = {tid: m for m, ts in module_tensors.items() for tid, _ in ts}
        graph_outputs = [o.name for o in graph.output]
        if len(outputs) == len(graph_outputs):
            for v, (tid, t) in zip(graph_outputs, outputs):
                self.direct.setdefault(v, t)
                self.labels.setdefault(v, f"{owner[tid]} (output {v})" if tid in owner else f"output {v}")
        self.claimed: set = {owner[tid] for tid, _ in outputs if tid in owner}
        in_file = set(boundary)
        # folded[m]: modules without nodes that read m's outputs (their value is m's value in the file)
        self.folded: Dict[str, List[str]] = {}
        for b, ids in module_inputs.items():
            if b in in_file or not module_tensors.get(b):
                continue
            for i in ids:
                if i in owner and owner[i] != b:
                    self.folded.setdefault(owner[i], []).append(b)
        self.candidates: Dict[str, List[str]] = {}
        for m in sorted(boundary, key=lambda s: -s.count(".")):
            if module_tensors.get(m):
                for v in boundary[m]:
                    self.candidates.setdefault(v, []).append(m)
        self.pool = {m: [(i, t) for i, (_, t) in enumerate(ts)] for m, ts in module_tensors.items()}
        self.counts = {m: len(ts) for m, ts in module_tensors.items()}

    def names(self) -> List[str]:
        return list(dict.fromkeys(list(self.direct) + list(self.candidates)))

    def _name(self, m: str, i: int) -> str:
        return m if self.counts[m] == 1 else f"{m}[{i}]"

    def get(self, value: str, shape: Sequence[int], got: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
        if value in self.direct:
            return load_array(self.direct[value])
        for m in self.candidates.get(value, []):
            options = [(m, k) for k, (_, t) in enumerate(self.pool[m]) if tuple(t.shape) == tuple(shape)][:1]
            if not options:
                continue
            for f in self.folded.get(m, []):
                options += [(f, k) for k, (_, t) in enumerate(self.pool[f]) if tuple(t.shape) == tuple(shape)][:1]
            if got is not None and len(options) > 1:
                g = got.astype(np.float64)
                options.sort(key=lambda o: float(np.abs(load_array(self.pool[o[0]][o[1]][1]) - g).max()))
            mm, k = options[0]
            i, t = self.pool[mm].pop(k)
            self.claimed.update({m, mm})
            self.direct[value] = t
            self.labels[value] = self._name(mm, i) if mm == m else f"{self._name(mm, i)} (folded into {m})"
            return load_array(t)
        return None

    def label(self, value: str) -> str:
        return self.labels.get(value, "")

    def nbytes(self) -> int:
        return sum(t.nbytes for ts in self.pool.values() for _, t in ts) + sum(a.nbytes for a in self.direct.values())

    def unmatched(self, seen) -> List[str]:
        """Marks and outputs the file never computed, and modules none of whose outputs were found
        (folded into constants, or inputs passed through)."""
        lost = [self.labels.get(v, v) for v in self.direct if v not in seen]
        folded_away = {f for fs in self.folded.values() for f in fs} | set(self.folded)
        return lost + [f"module {m}" for m, ts in self.pool.items()
                       if ts and len(ts) == self.counts[m] and m not in self.claimed and m not in folded_away]


def run_torch_reference(model, args: Sequence[Any], graph) -> Tuple[TorchReference, float]:
    """Run ``model(*args)`` (eval, no grad) with hooks on every module; returns the reference and
    the forward's wall time in seconds (hooks included)."""
    import time

    import torch

    from .torch.mark import recording_marks

    names = {m: n for n, m in model.named_modules()}
    spill = SpillStore()
    keep = lambda t: spill.put(t.detach().cpu().numpy())  # noqa: E731 - the value now: later in-place ops change t
    recorded: Dict[str, List[Tuple[int, SpilledArray]]] = {}
    inputs_of: Dict[str, List[int]] = {}
    # Tensors are tagged with a serial number (an attribute): id() would be reused once a tensor dies.
    serial = [0]

    def tag(t) -> int:
        if not hasattr(t, _TAG):
            serial[0] += 1
            setattr(t, _TAG, serial[0])
            return -serial[0]  # new
        return getattr(t, _TAG)

    def hook(module, inputs, output):
        name = names.get(module)
        if not name:  # the root's outputs are the graph outputs
            return
        inputs_of[name] = [abs(tag(t)) for t in _flatten(inputs)]
        # a container returning its last child's tensor adds nothing: that tensor is the child's
        tags = [(tag(t), t) for t in _flatten(output)]
        fresh = [(-k, keep(t)) for k, t in tags if k < 0]
        if fresh:
            recorded.setdefault(name, []).extend(fresh)

    handles = [m.register_forward_hook(hook) for m in names]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), recording_marks() as marks:
            t0 = time.perf_counter()
            out = _flatten(model(*args))
            seconds = time.perf_counter() - t0
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    ref = TorchReference(recorded, inputs_of, {k: keep(v) for k, v in marks.items()},
                         [(getattr(t, _TAG, 0), keep(t)) for t in out], graph)
    return ref, seconds
