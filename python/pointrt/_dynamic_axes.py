"""The dynamic axes of :func:`pointrt.export`, found from the data flow (``pointrt.torch._axes``).

An input axis is a point axis when its values reach a point axis of a pointrt operator (directly,
or through axes that operations require to be the same). Each group of equal point axes gets one
symbol: ``num_points`` for the group of the first input that has one, ``num_points_<input>`` for
the next groups (independent sizes). Output axes in a group get its symbol. A group that a layer
fixes (``AvgPool1d(N)``, ``view(B, -1, N)`` with a literal ``N``) stays static with a warning
naming the layer, or is an :class:`ExportError` when the caller asked for that axis explicitly.
A model without pointrt operators has no such flow: there axis 1 of each [B, N, C] input is a
point axis (each its own symbol), followed through the model to the outputs.
"""
from __future__ import annotations

import dataclasses
import warnings
from typing import Any, Dict, List, Optional, Sequence

from .errors import ExportError

__all__ = ["AxisPlan"]


@dataclasses.dataclass
class AxisPlan:
    """The dynamic axes of one export. ``axes`` is the dict handed to the exporter; the TorchScript
    exporter reads it after its trace, so :meth:`finish` (called at the end of that traced forward)
    can still fill it."""
    input_names: List[str]
    point_axes: Dict[str, Optional[int]]
    dynamic_points: bool
    dynamic_batch: bool
    explicit: Dict[str, Dict[int, str]]
    axes: Dict[str, Dict[int, str]] = dataclasses.field(default_factory=dict)
    fixed: list = dataclasses.field(default_factory=list)
    tracker: Any = None
    _inputs: Dict[str, Any] = dataclasses.field(default_factory=dict)

    @classmethod
    def create(cls, model, args: Sequence, input_names: Sequence[str], dynamic_points: bool,
               point_axes: Optional[Dict[str, Optional[int]]], dynamic_batch: bool,
               dynamic_axes: Optional[Dict[str, Any]], probe: bool = False) -> "AxisPlan":
        import torch
        from .torch._axes import AxisTracker
        explicit: Dict[str, Dict[int, str]] = {}
        for name, d in (dynamic_axes or {}).items():
            explicit[name] = {int(i): f"{name}_dim{i}" for i in d} if isinstance(d, (list, tuple)) else dict(d)
        plan = cls(list(input_names), dict(point_axes or {}), dynamic_points, dynamic_batch, explicit)
        plan._inputs = {n: a for n, a in zip(input_names, args) if isinstance(a, torch.Tensor)}
        if dynamic_points:
            plan.tracker = AxisTracker(model, probe=probe)
            for t in plan._inputs.values():
                plan.tracker.label_input(t)
        return plan

    def finish(self, outputs: Sequence, output_names: Sequence[str]) -> None:
        """Point axes of the inputs and outputs into ``axes`` (in place), then batch and explicit axes."""
        import torch
        self.axes.clear()
        outs = [(n, o) for n, o in zip(output_names, outputs) if isinstance(o, torch.Tensor)]
        if self.tracker is not None:
            self._point_axes(outs)
        if self.dynamic_batch:
            for name, t in list(self._inputs.items()) + outs:
                if t.dim() >= 1:
                    self.axes.setdefault(name, {})[0] = "batch"
        for name, d in self.explicit.items():
            self.axes.setdefault(name, {}).update(d)

    def _point_axes(self, outs) -> None:
        tr = self.tracker
        roots = tr.point_roots()
        groups: Dict[int, str] = {}  # root -> symbol
        requested = set()
        for name, t in self._inputs.items():
            labels = tr.labels(t)
            if name in self.point_axes:
                ax = self.point_axes[name]
                chosen = [] if ax is None else [ax % t.dim()]
                requested.update(tr.root(labels[a]) for a in chosen)
            elif not roots:  # no pointrt operator ran: axis 1 of each [B, N, C] input, as before
                chosen = [1] if t.dim() == 3 and t.shape[1] > 1 else []
            else:
                chosen = [a for a in range(t.dim()) if tr.root(labels[a]) in roots and t.shape[a] > 1]
            for a in chosen:
                r = tr.root(labels[a])
                if r not in groups:
                    groups[r] = "num_points" if not groups else f"num_points_{name}"
        for name, d in self.explicit.items():
            t = self._inputs.get(name)
            if t is not None:
                requested.update(tr.root(tr.labels(t)[int(a) % t.dim()]) for a in d)
        self._drop_fixed(groups, requested)
        for name, t in list(self._inputs.items()) + outs:
            for a, c in enumerate(tr.labels(t)):
                if tr.root(c) in groups and t.shape[a] > 1:
                    self.axes.setdefault(name, {})[a] = groups[tr.root(c)]

    def _drop_fixed(self, groups: Dict[int, str], requested: set) -> None:
        for fix in self.tracker.fixed_sizes():
            root = self.tracker.root(fix.axis_class)
            symbol = groups.pop(root, None)
            if symbol is None and root not in requested:
                continue
            self.fixed.append(fix)
            msg = (f"the point count {symbol or ''} (length {fix.length}) is fixed by {fix}; ")
            if root in requested:
                raise ExportError("pointrt.export: " + msg + "it cannot be dynamic as asked (point_axes / "
                                  "dynamic_axes): make that layer follow the input size (a reduction over the "
                                  "axis, -1 or x.size() in view) or export with dynamic_points=False")
            warnings.warn("pointrt.export: " + msg + "exported with that length static (pass dynamic_points=False "
                          "to silence this, or make the layer follow the input size)")
