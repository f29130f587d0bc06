"""Point axes from the data flow: which input axes reach the point axes of the pointrt operators.

While the model runs (inside the TorchScript exporter's own trace, or a probe forward before the
dynamo exporter), a TorchFunctionMode gives every axis of every tensor a class and carries the
classes through each operation (``_axes_rules``); operations that need two axes to be the same
(broadcasting, concatenation, the batch of two pointrt inputs) merge their classes. Each pointrt
operator marks the classes of its point axes (FurthestPointSample's ``xyz`` axis 1, GatherPoints'
``features`` axis 2, Voxelize's ``points`` axis 0, ...). An input axis whose class is marked is a
point axis, wherever it sits: PVN3D's ``choose`` [1, 1, N] gets axis 2 because its gathered image
features are concatenated with the point features along N.

Layers that fix a point length (a pooling window as long as the axis, ``AvgPool1d(N)``; a literal
size in ``view``/``reshape``/``expand`` while tracing, ``view(B, -1, N)``) are noted with their
module path, so the export can name them.
"""
from __future__ import annotations

import dataclasses
import weakref
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch.overrides import TorchFunctionMode

from . import _axes_rules as rules

__all__ = ["AxisTracker", "FixedSize", "active", "pointrt_op"]

# pointrt operator -> (point axes as (argument, axis), axes that must be equal, output axes from (argument, axis))
_B = ((0, 0), (1, 0))
POINTRT_FLOW: Dict[str, Tuple[list, list, list]] = {
    "FurthestPointSample": ([(0, 1)], [], [[(0, 0), None]]),
    "GatherPoints": ([(0, 2)], [_B], [[(0, 0), (0, 1), (1, 1)]]),
    "BallQuery": ([(0, 1), (1, 1)], [_B], [[(1, 0), (1, 1), None]]),
    "GroupPoints": ([(0, 2)], [_B], [[(0, 0), (0, 1), (1, 1), (1, 2)]]),
    "ThreeNN": ([(0, 1), (1, 1)], [_B], [[(0, 0), (0, 1), None]] * 2),
    "ThreeInterpolate": ([(0, 2)], [_B, ((1, 1), (2, 1))], [[(0, 0), (0, 1), (1, 1)]]),
    "KNN": ([(0, 1), (1, 1)], [_B], [[(1, 0), (1, 1), None]] * 2),
    "Voxelize": ([(0, 0)], [], [[None, None], [None, None], [None]]),
    "SparseConv": ([], [((0, 0), (1, 0))], [[None, None], [None, None]]),
    "ScatterDense": ([], [], [[None] * 5]),
}


@dataclasses.dataclass
class FixedSize:
    """A layer that fixes the length of a point axis."""
    module: str      # module path in the model ("" for the model itself)
    layer: str       # the module, as printed (``AvgPool1d(kernel_size=(12288,), ...)``)
    reason: str      # what in it fixes the length
    length: int
    axis_class: int

    def __str__(self) -> str:
        where = f"module '{self.module}'" if self.module else "the model's own forward"
        return f"{where} ({self.layer}): {self.reason} (length {self.length})"


_ACTIVE: List["AxisTracker"] = []


def active() -> Optional["AxisTracker"]:
    return _ACTIVE[-1] if _ACTIVE else None


def pointrt_op(name: str, args: Sequence, run: Callable):
    """Called by every pointrt operator's Python entry: runs it (untracked inside) and, while a
    tracker is active, records its data flow. ``run`` is called with ``probe=True`` when the
    tracker only needs shapes."""
    tracker = active()
    if tracker is None or tracker.inside:
        return run(False)
    tracker.inside += 1
    try:
        out = run(tracker.probe)
    finally:
        tracker.inside -= 1
    tracker.record_pointrt(name, args, out)
    return out


class AxisTracker(TorchFunctionMode):
    """Use as a context manager around one forward of ``model`` (see the module docstring)."""

    def __init__(self, model: torch.nn.Module, probe: bool = False) -> None:
        super().__init__()
        self.probe = probe  # pointrt operators may return zeros of the right shape
        self.inside = 0
        self._parent: List[int] = []
        self._size: List[int] = []
        self._labels: Dict[int, Tuple[weakref.ref, tuple]] = {}
        self.points: set = set()
        self._literals: List[Tuple[int, str, str, str]] = []  # (class, module, layer, reason)
        self._names = {id(m): n for n, m in model.named_modules()}
        self._stack: List[torch.nn.Module] = []
        self._hooks: list = []

    # ------------------------------------------------------------------ classes
    def new(self, size: int) -> int:
        self._parent.append(len(self._parent))
        self._size.append(int(size))
        return len(self._parent) - 1

    def find(self, c: int) -> int:
        while self._parent[c] != c:
            self._parent[c] = self._parent[self._parent[c]]
            c = self._parent[c]
        return c

    def size(self, c: int) -> int:
        return self._size[c]

    def unify(self, a: Optional[int], b: Optional[int]) -> None:
        if a is None or b is None:
            return
        ra, rb = self.find(a), self.find(b)
        if ra != rb and self._size[ra] == self._size[rb]:
            self._parent[rb] = ra

    def labels(self, t: torch.Tensor) -> tuple:
        entry = self._labels.get(id(t))
        if entry is not None and entry[0]() is t and len(entry[1]) == t.dim():
            return entry[1]
        return self.set_labels(t, [None] * t.dim())

    def set_labels(self, t: torch.Tensor, labels) -> tuple:
        labels = tuple(self.new(t.shape[i]) if c is None else c for i, c in enumerate(labels))
        key = id(t)
        try:
            ref = weakref.ref(t, lambda _r, k=key, d=self._labels: d.pop(k, None))
        except TypeError:  # not weak-referenceable: not tracked
            return labels
        self._labels[key] = (ref, labels)
        return labels

    def label_input(self, t: torch.Tensor) -> tuple:
        return self.set_labels(t, [None] * t.dim())

    def literal(self, c: Optional[int], reason: str) -> None:
        if c is None:
            return
        module = self._stack[-1] if self._stack else None
        path = self._names.get(id(module), type(module).__name__) if module is not None else ""
        layer = repr(module).splitlines()[0][:120] if module is not None else ""
        self._literals.append((c, path, layer, reason))

    # ------------------------------------------------------------------ tracking
    def __enter__(self):
        self._hooks = [torch.nn.modules.module.register_module_forward_pre_hook(self._pre),
                       torch.nn.modules.module.register_module_forward_hook(self._post)]
        _ACTIVE.append(self)
        return super().__enter__()

    def __exit__(self, *exc):
        _ACTIVE.remove(self)
        for h in self._hooks:
            h.remove()
        return super().__exit__(*exc)

    def _pre(self, module, inputs) -> None:
        self._stack.append(module)

    def _post(self, module, inputs, output) -> None:
        if self._stack and self._stack[-1] is module:
            self._stack.pop()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if not self.inside:
            self.inside += 1
            try:
                self._record(func, args, kwargs, out)
            except Exception:  # noqa: BLE001 - the analysis must never break the model's forward
                pass
            finally:
                self.inside -= 1
        return out

    def _record(self, func, args, kwargs, out) -> None:
        outs = _tensors_of(out)
        if not outs:
            return
        name = rules.op_name(func)
        result = rules.rule_for(name)(rules.Flow(self, name, tuple(args), kwargs, outs))
        for t, labels in zip(outs, result):
            if labels is not None and len(labels) == t.dim():
                self.set_labels(t, labels)

    def record_pointrt(self, name: str, args: Sequence, out) -> None:
        flow = POINTRT_FLOW.get(name)
        outs = _tensors_of(out)
        if flow is None:
            return
        points, equal, out_axes = flow
        tensors = [a if isinstance(a, torch.Tensor) else None for a in args]

        def cls(arg: int, axis: int) -> Optional[int]:
            t = tensors[arg] if arg < len(tensors) else None
            return self.labels(t)[axis] if t is not None and axis < t.dim() else None

        for arg, axis in points:
            c = cls(arg, axis)
            if c is not None:
                self.points.add(c)
        for a, b in equal:
            self.unify(cls(*a), cls(*b))
        for t, spec in zip(outs, out_axes):
            if len(spec) == t.dim():
                self.set_labels(t, [cls(*s) if s is not None else None for s in spec])

    # ------------------------------------------------------------------ results
    def point_roots(self) -> set:
        return {self.find(c) for c in self.points}

    def root(self, c: int) -> int:
        return self.find(c)

    def fixed_sizes(self) -> List[FixedSize]:
        roots = self.point_roots()
        seen, out = set(), []
        for c, module, layer, reason in self._literals:
            r = self.find(c)
            if r in roots and (module, reason) not in seen:
                seen.add((module, reason))
                out.append(FixedSize(module, layer, reason, self._size[r], r))
        return out


def _tensors_of(out) -> List[torch.Tensor]:
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, torch.Tensor)]
    return []
