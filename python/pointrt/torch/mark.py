"""``pointrt.torch.mark(x, "name")``: name a tensor so that ``pointrt.compare`` lines it up.

In eager PyTorch, ``mark`` returns ``x`` itself (recording a copy while a compare run is
listening). Under ``torch.onnx.export`` it writes an ``Identity`` node in a scope named
``pointrt.mark.<name>`` (the node is ``/<module scopes>/pointrt.mark.<name>/Identity``), which
``pointrt.compare`` finds again in the file: the Identity's output is compared with the tensor
PyTorch marked. Runtimes treat the Identity as a no-op (pointrt returns a view).
"""
import contextlib
from typing import Dict, Iterator, List

import torch

__all__ = ["mark", "MARK_SCOPE_PREFIX", "recording_marks"]

MARK_SCOPE_PREFIX = "pointrt.mark."

_recorders: List[Dict[str, torch.Tensor]] = []


class _MarkIdentity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):  # type: ignore[override]
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):  # type: ignore[override]
        return grad

    @staticmethod
    def symbolic(g, x):
        return g.op("Identity", x)


def mark(x: torch.Tensor, name: str) -> torch.Tensor:
    """Return ``x``, marked ``name`` for ``pointrt.compare`` (an Identity node when exported)."""
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"pointrt.torch.mark: the name must be a non-empty string without '/', got {name!r}")
    state = torch._C._get_tracing_state()
    if state is None:
        for r in _recorders:
            # a copy: later in-place ops (ReLU(inplace=True)) must not change what was marked
            r[name] = x.detach().clone()
        return x
    state.push_scope(f"pointrt.mark::{MARK_SCOPE_PREFIX}{name}")
    try:
        return _MarkIdentity.apply(x)
    finally:
        state.pop_scope()


@contextlib.contextmanager
def recording_marks() -> Iterator[Dict[str, torch.Tensor]]:
    """Collect every tensor marked while the block runs: ``{name: copy}``."""
    marks: Dict[str, torch.Tensor] = {}
    _recorders.append(marks)
    try:
        yield marks
    finally:
        _recorders.remove(marks)
