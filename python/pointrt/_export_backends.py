"""The two torch.onnx exporters behind :func:`pointrt.export`, and the supported torch versions.

* ``torchscript``: torch.onnx's tracing exporter (``dynamo=False`` on torch 2.x); the
  ``pointrt`` nodes come from the autograd Functions' ``symbolic`` (torch 1.13) or from the
  symbolics registered for the ``pointrt::`` custom ops (torch >= 2.4).
* ``dynamo``: ``torch.onnx.export(..., dynamo=True)`` (torch.export + onnxscript, torch >= 2.6);
  the ``pointrt`` nodes come from the onnxscript translations of the custom ops
  (:func:`pointrt.torch._library.translation_table`).
"""
from __future__ import annotations

import importlib.util
import io
import re
from typing import Any, Dict, Tuple

from .errors import ExportError

# Tested: Debian's 1.13.1 (TorchScript) and PyPI's 2.15.0 (both exporters).
SUPPORTED_TORCH = ((1, 13), (2, 99))
DYNAMO_MIN_TORCH = (2, 6)


def _torch_version() -> Tuple[int, int]:
    import torch
    m = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def supported_torch() -> str:
    lo, hi = SUPPORTED_TORCH
    return f"{lo[0]}.{lo[1]} to {hi[0]}.x"


def check_torch_version() -> None:
    """An :class:`ExportError` naming the supported range when the installed torch is outside it."""
    import torch
    v = _torch_version()
    lo, hi = SUPPORTED_TORCH
    if not lo <= v <= hi:
        raise ExportError(f"pointrt.export supports torch {supported_torch()} (tested: 1.13 with the TorchScript "
                          f"exporter, 2.15 with both exporters); the installed torch is {torch.__version__}")


def dynamo_available() -> bool:
    return _torch_version() >= DYNAMO_MIN_TORCH and importlib.util.find_spec("onnxscript") is not None


def torchscript_available() -> bool:
    """torch.onnx's TorchScript exporter: every torch up to 2.x (deprecated in 2.x, kept)."""
    return _torch_version() < (3, 0)


def resolve_exporter(exporter: str) -> str:
    """"auto" -> "torchscript" while the installed torch has it, else "dynamo".

    TorchScript first: on the models of models/ it exports every one, in less time (PVN3D's
    point branch 20 s vs 31 s), while torch.export still refuses some (a ``dynamic_axes`` it
    cannot convert, Python code it cannot trace); "dynamo" is one argument away."""
    if exporter not in ("auto", "dynamo", "torchscript"):
        raise ExportError(f"exporter must be 'auto', 'dynamo' or 'torchscript', got {exporter!r}")
    if exporter == "auto":
        return "torchscript" if torchscript_available() else "dynamo"
    if exporter == "dynamo" and not dynamo_available():
        import torch
        raise ExportError(f"exporter='dynamo' needs torch >= {DYNAMO_MIN_TORCH[0]}.{DYNAMO_MIN_TORCH[1]} and "
                          f"onnxscript; installed: torch {torch.__version__}, onnxscript "
                          f"{'present' if importlib.util.find_spec('onnxscript') else 'absent'}. "
                          "Use exporter='torchscript'.")
    return exporter


def _export_torchscript(model, args, kw: Dict[str, Any]) -> bytes:
    import torch
    buffer = io.BytesIO()
    extra = {"dynamo": False} if _torch_version() >= (2, 5) else {}
    torch.onnx.export(model, args, buffer, **kw, **extra)
    return buffer.getvalue()


def _export_dynamo(model, args, kw: Dict[str, Any]) -> bytes:
    import torch

    from .torch import _library
    kw = dict(kw)
    kw.pop("custom_opsets", None)
    kw.pop("do_constant_folding", None)
    axes = kw.get("dynamic_axes")
    if axes:
        # torch.onnx (2.15) pairs the converted dynamic_axes with the inputs in the dict's order, not by
        # name: list every input, in order (None: static), then the outputs
        names = list(kw.get("input_names") or [])
        kw["dynamic_axes"] = {**{n: axes.get(n) for n in names}, **{n: a for n, a in axes.items() if n not in names}}
    table = dict(kw.pop("custom_translation_table", None) or {})
    for op, fn in _library.translation_table().items():
        table.setdefault(op, fn)
    program = torch.onnx.export(model, args, None, dynamo=True, custom_translation_table=table, verbose=False,
                                optimize=False, **kw)
    _fold(program.model)
    return program.model_proto.SerializeToString()


def _fold(model) -> None:
    """Constant folding and dead-node removal, without the exporter's default rewrite rules:
    onnxscript 0.7.2's "x + 0 -> x" rule matches with an absolute tolerance of 1e-8 and so
    deleted PointNet++'s ``1 / (dist + 1e-8)`` guard (output off by 0.67 on the FP modules)."""
    import onnxscript.optimizer
    # no size limits: weights computed in the graph (BatchNorm folded into SparseConv) become one
    # initializer, as the TorchScript exporter's constant folding writes them
    onnxscript.optimizer.fold_constants(model, input_size_limit=_FOLD_LIMIT, output_size_limit=_FOLD_LIMIT)
    onnxscript.optimizer.remove_unused_nodes(model)


_FOLD_LIMIT = 1 << 40
