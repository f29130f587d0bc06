"""Helpers for running Python code outside torch's ONNX tracer.

During ``torch.onnx.export`` only a custom Function's ``symbolic`` ends up in the file; the ops
its pure-PyTorch ``forward`` runs are recorded by the tracer and then thrown away. For the
PointNet++ and sparse Functions that is thousands of small ops (FPS loops over ``npoint``), which
made exporting PVN3D take minutes. Code run under :class:`NotTraced` executes normally (the
values are still computed, so shapes and later ops see real data) but is not recorded.
"""
import functools

import torch

__all__ = ["NotTraced", "untraced", "UntracedFunction"]


class NotTraced:
    """Context manager: suspends the tracer (if any) and restores it on exit."""

    def __enter__(self) -> None:
        self._state = torch._C._get_tracing_state()
        torch._C._set_tracing_state(None)

    def __exit__(self, *exc) -> None:
        torch._C._set_tracing_state(self._state)


def untraced(fn):
    """Decorator for ``Function.forward``: its body runs under :class:`NotTraced`.

    ``Function.apply`` itself stays traced, so the tracer still records the Function's node
    (and its ``symbolic`` writes the ONNX node); only the ops inside the body are skipped.
    Outside tracing this costs one C call."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if torch._C._get_tracing_state() is None:
            return fn(*args, **kwargs)
        with NotTraced():
            return fn(*args, **kwargs)

    return wrapper


class UntracedFunction(torch.autograd.Function):
    """An autograd Function whose ``forward`` (decorate it with :func:`untraced`) runs outside
    the tracer. While tracing, ``apply`` also runs without autograd: torch 1.13's tracer cannot
    record an output that requires grad but was computed untraced ("Cannot insert a Tensor
    that requires grad as a constant"); the traced graph is the same either way (only the
    Function's node is recorded, and its ``symbolic`` is what gets exported)."""

    @classmethod
    def apply(cls, *args):
        route = cls.__dict__.get("_route")
        if route is not None:  # a reference-API wrapper: calls the pointrt Function with its argument order
            return route(*args)
        from . import _axes
        return _axes.pointrt_op(cls.__name__, args, lambda probe: cls._run(probe, args))

    @classmethod
    def _run(cls, probe: bool, args: tuple):
        if probe and _has_fake(cls.__name__):  # the point-axis probe needs only the output shapes
            return _probe_outputs(cls.__name__, args)
        custom_op = cls.__dict__.get("_custom_op")
        if custom_op is not None:  # registered as a torch.library custom op (torch >= 2.4)
            return custom_op(*args)
        if torch._C._get_tracing_state() is not None:
            with torch.no_grad():
                return super(UntracedFunction, cls).apply(*args)
        return super(UntracedFunction, cls).apply(*args)


def _has_fake(name: str) -> bool:
    from . import _library
    return f"pointrt::{name}" in _library.declarations()


def _probe_outputs(name: str, args: tuple):
    """Zeros of the operator's output shapes (its fake kernel), valid as indices everywhere."""
    from . import _library
    out = _library.declarations()[f"pointrt::{name}"].fake(*args)
    return tuple(o.zero_() for o in out) if isinstance(out, tuple) else out.zero_()
