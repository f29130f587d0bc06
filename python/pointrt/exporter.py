"""``pointrt.export`` (this module: ``pointrt.exporter``): torch.onnx.export for point-cloud models, checked and verified.

What it adds to ``torch.onnx.export``:
  * ``custom_opsets={"pointrt": 1}`` so the ``pointrt`` nodes written by
    :mod:`pointrt.torch.ops` / :mod:`pointrt.torch.pointnet2` are declared;
  * the highest opset the installed torch can write, or a clear :class:`ExportError` when the
    requested one is not supported;
  * the point-count axis of the inputs (axis 1 of ``[B, N, C]`` by default) and the output axes
    of that length marked dynamic;
  * the adaptive-average-pooling failure fixed by a retry with
    :func:`pointrt.torch.patches.patch_adaptive_avg_pool2d`;
  * ``onnx.checker`` on the result;
  * a run of the file in the pointrt runtime (``pointrt._pointrt``) against PyTorch, with the
    maximum error of each output printed.
"""
import contextlib
import dataclasses
import io
import os
import warnings
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from ._dynamic_axes import AxisPlan
from .errors import ExportError, VerificationError
from ._export_backends import (_export_dynamo, _export_torchscript, check_torch_version,  # noqa: F401
                               resolve_exporter, supported_torch)

__all__ = ["export", "ExportReport", "supported_opsets", "default_opset", "resolve_exporter", "supported_torch"]


@dataclasses.dataclass
class ExportReport:
    path: str
    opset: int
    size_bytes: int
    pointrt_nodes: Dict[str, int]
    dynamic_axes: Dict[str, Dict[int, str]]
    verified: Optional[bool] = None          # None: not run
    max_errors: Dict[str, float] = dataclasses.field(default_factory=dict)
    verify_skipped: str = ""
    adaptive_pool_patched: bool = False
    exporter: str = "torchscript"
    fixed_sizes: List[str] = dataclasses.field(default_factory=list)  # layers that fixed a point count

    def __str__(self):
        lines = [f"pointrt.export: wrote {self.path} ({self.size_bytes / 1e6:.2f} MB, "
                 f"opset {self.opset}, {self.exporter} exporter, pointrt nodes: "
                 + (", ".join(f"{k} x{v}" for k, v in sorted(self.pointrt_nodes.items()))
                    or "none") + ")"]
        for f in self.fixed_sizes:
            lines.append(f"  point count fixed (exported static) by {f}")
        if self.adaptive_pool_patched:
            lines.append("  adaptive_avg_pool2d written in its static form (the traced image size is fixed)")
        if self.verified is None:
            lines.append(f"  verification skipped: {self.verify_skipped or 'verify=False'}")
        elif not self.max_errors:
            lines.append(f"  verification failed: {self.verify_skipped.splitlines()[0]}")
        else:
            for k, v in self.max_errors.items():
                lines.append(f"  {k}: max |pointrt - torch| = {v:.3g}")
        return "\n".join(lines)


# The highest default-domain opset the pointrt runtime executes (docs/operators.md).
RUNTIME_MAX_OPSET = 21


def supported_opsets(exporter: str = "auto") -> range:
    """Opsets the installed torch's exporter writes, the installed onnx knows and the runtime
    executes (the dynamo exporter writes opset 18 and later)."""
    from torch.onnx import _constants
    which = resolve_exporter(exporter)
    hi = _constants.ONNX_MAX_OPSET
    lo = _constants.ONNX_MIN_OPSET
    if which == "torchscript":
        hi = getattr(_constants, "ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET", hi)
    else:
        lo = max(lo, 18)
    hi = min(hi, RUNTIME_MAX_OPSET)
    try:
        import onnx.defs
        hi = min(hi, onnx.defs.onnx_opset_version())
    except Exception:  # pragma: no cover
        pass
    return range(lo, hi + 1)


def default_opset(exporter: str = "auto") -> int:
    return supported_opsets(exporter)[-1]


def _declared_domains() -> List[str]:
    from .torch import _library
    return sorted({d.domain for d in _library.declarations().values()})


def _resolve_opset(opset: Optional[int], exporter: str) -> int:
    import torch
    ops = supported_opsets(exporter)
    if opset is None:
        return ops[-1]
    if not isinstance(opset, int) or opset not in ops:
        raise ExportError(
            f"opset {opset!r} is not supported by the installed PyTorch {torch.__version__}'s "
            f"{exporter} exporter: it writes opsets {ops[0]}..{ops[-1]}. Pass opset=None to use "
            f"{ops[-1]}, the highest it supports, or install a PyTorch that writes opset {opset}.") from None
    return opset


def _as_tuple(args) -> tuple:
    import torch
    if isinstance(args, torch.Tensor):
        return (args,)
    if isinstance(args, list):
        return tuple(args)
    if isinstance(args, tuple):
        return args
    raise ExportError(f"args must be a tensor or a tuple of tensors, got {type(args).__name__}")


def _flatten(out) -> list:
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        r = []
        for o in out:
            r += _flatten(o)
        return r
    if isinstance(out, dict):
        r = []
        for o in out.values():
            r += _flatten(o)
        return r
    if out is None:
        return []
    raise ExportError(f"model output of type {type(out).__name__} cannot be exported")


@contextlib.contextmanager
def _quiet_export():
    """Hide the exporter's noise about pointrt nodes (no ONNX shape inference for a custom
    domain, tracer warnings from shape checks) and the torch 1.13 g.op deprecation note."""
    import torch
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*pointrt::.*")
        for domain in _declared_domains():  # pointrt.torch.custom_op operators: typed by their shape rule
            warnings.filterwarnings("ignore", message=rf"The shape inference of {domain}::")
        warnings.filterwarnings("ignore", message=r"The shape inference of prim::Constant")
        warnings.filterwarnings("ignore", message=r".*_graph_op.*deprecated.*")
        warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
        yield


def _run_torch(model, args):
    import torch
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            return _flatten(model(*args))
    finally:
        model.train(was_training)


def export(model, args, path: Union[str, os.PathLike], *, input_names: Sequence[str],
           output_names: Sequence[str], opset: Optional[int] = None,
           dynamic_points: bool = True, point_axes: Optional[Dict[str, Optional[int]]] = None,
           dynamic_batch: bool = False, dynamic_axes: Optional[Dict[str, Any]] = None,
           verify: bool = True, atol: float = 1e-4, rtol: float = 1e-3, strict: bool = False,
           fix_adaptive_pool: bool = True, do_constant_folding: bool = True,
           exporter: str = "auto", quiet: bool = False, plugins: Sequence[str] = (),
           **export_kwargs) -> ExportReport:
    """Export ``model(*args)`` to one ONNX file that the pointrt runtime executes.

    Args:
      model: a ``torch.nn.Module`` (exported in eval mode).
      args: the example input tensor, or a tuple of them.
      path: the ``.onnx`` file to write.
      input_names, output_names: graph input/output names, in order.
      opset: ONNX opset of the default domain; None picks the highest the installed torch
        writes (17 for torch 1.13).  An unsupported value raises :class:`ExportError`.
      dynamic_points: mark the point-count axes dynamic, found from the data flow
        (:mod:`pointrt._dynamic_axes`): an input axis is a point axis when it reaches a point
        axis of a pointrt operator (PVN3D's ``choose`` [1, 1, N] gets axis 2), wherever it sits;
        output axes fed by it get its symbol.  The first cloud's axis is ``num_points``,
        independent ones ``num_points_<input name>``.  Without pointrt operators, axis 1 of
        each rank-3 input.  ``point_axes={"name": axis or None}`` overrides an input.  A layer
        that fixes a point length (``AvgPool1d(N)``, ``view(B, -1, N)``) is named in a warning
        (that axis stays static; an ExportError when the axis was asked for explicitly).
      dynamic_batch: also mark axis 0 of inputs and outputs dynamic (``batch``).
      dynamic_axes: extra axes, as for ``torch.onnx.export``; merged last.
      verify: run the file with ``pointrt._pointrt`` and compare with PyTorch; skipped with a
        warning when the module is absent.  Errors above ``atol + rtol * max|torch|`` warn, or
        raise :class:`VerificationError` with ``strict=True``.
      fix_adaptive_pool: trace ``adaptive_avg_pool2d`` in its static form
        (:func:`pointrt.torch.patches.patch_adaptive_avg_pool2d`: AveragePool, or MatMul with
        constant averaging matrices where the sizes do not divide), which torch.onnx otherwise
        refuses; the traced image size is then fixed in the file.
      exporter: "torchscript" (torch.onnx's tracing exporter, every supported torch), "dynamo"
        (torch.export-based, torch >= 2.6 with onnxscript), or "auto": TorchScript while the
        installed torch has it (faster, and it exports every model of models/), else dynamo.
        Both write the same ``pointrt`` nodes.
      quiet: do not print the summary.
      plugins: runtime plugin libraries (``include/pointrt/plugin.h``) that verification loads,
        for models with :func:`pointrt.torch.custom_op` operators.
      export_kwargs: passed to ``torch.onnx.export``.

    Returns:
      an :class:`ExportReport` (also printed unless ``quiet``).
    """
    import torch

    check_torch_version()
    which = resolve_exporter(exporter)
    path = os.fspath(path)
    opset = _resolve_opset(opset, which)
    args = _as_tuple(args)
    input_names = list(input_names)
    output_names = list(output_names)
    if not isinstance(model, torch.nn.Module):
        raise ExportError(f"model must be a torch.nn.Module, got {type(model).__name__}")

    plan = AxisPlan.create(model, args, input_names, dynamic_points, point_axes, dynamic_batch, dynamic_axes,
                           probe=which == "dynamo")
    custom = dict(export_kwargs.pop("custom_opsets", {}) or {})
    custom.setdefault("pointrt", 1)
    for domain in _declared_domains():  # pointrt.torch.custom_op operators
        custom.setdefault(domain, 1)
    kw = dict(input_names=input_names, output_names=output_names, opset_version=opset,
              dynamic_axes=plan.axes, custom_opsets=custom, do_constant_folding=do_constant_folding)
    kw.update(export_kwargs)

    was_training = model.training
    model.eval()
    captured: list = []
    try:
        with _quiet_export(), _adaptive_pool_fix(fix_adaptive_pool) as frozen_pools:
            if which == "dynamo":
                ref = _probe_axes(model, args, plan, output_names)
                kw["dynamic_axes"] = plan.axes or None
                data = _export_dynamo(model, args, kw)
            else:
                # the axes are found during the exporter's own trace (plan.finish in the output hook)
                with _tracking(plan), _capture_outputs(model, plan, output_names) as captured:
                    data = _export_torchscript(model, args, kw)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - turned into an ExportError below
        if captured:
            _check_output_count(_flatten(captured[0]), output_names)
        raise _export_error(e, which) from e
    finally:
        model.train(was_training)
    if which != "dynamo":
        ref = _flatten(captured[0]) if captured else _run_torch(model, args)
    _check_output_count(ref, output_names)
    report = _finish_file(data, path, opset, output_names, ref, plan.axes)
    report.adaptive_pool_patched = bool(frozen_pools)
    report.exporter = which
    report.fixed_sizes = [str(f) for f in plan.fixed]

    if verify:
        _verify(report, args, ref, input_names, output_names, atol, rtol, strict, plugins)
    if not quiet:
        print(report)
    return report


def _check_output_count(ref: list, output_names: List[str]) -> None:
    if len(ref) != len(output_names):
        raise ExportError(f"the model returns {len(ref)} tensors but {len(output_names)} "
                          f"output_names were given: {output_names}")


@contextlib.contextmanager
def _adaptive_pool_fix(enabled: bool):
    """Decided before tracing: with ``enabled`` every adaptive_avg_pool2d is traced in its
    static form (one trace; no retry after the exporter's refusal)."""
    if not enabled:
        yield []
        return
    from .torch.patches import patch_adaptive_avg_pool2d
    with patch_adaptive_avg_pool2d() as frozen:
        yield frozen


@contextlib.contextmanager
def _capture_outputs(model, plan: AxisPlan, output_names: Sequence[str]):
    """Keep the outputs of the exporter's own trace of ``model`` (real values: the tracer runs
    the forward), so that no second forward is needed for verification; and complete the dynamic
    axes from that forward's data flow before the exporter reads them."""
    from .torch._tracing import NotTraced
    captured: list = []

    def hook(module, inputs, output):
        with NotTraced():
            captured[:] = [_detached(output)]
            plan.finish(_flatten(output), output_names)

    handle = model.register_forward_hook(hook)
    try:
        yield captured
    finally:
        handle.remove()


@contextlib.contextmanager
def _tracking(plan: AxisPlan):
    if plan.tracker is None:
        yield
        return
    with plan.tracker:
        yield


def _probe_axes(model, args, plan: AxisPlan, output_names: Sequence[str]) -> list:
    """One forward before the dynamo exporter (it needs the dynamic axes up front), with the
    tracker: pointrt operators return zeros of their output shapes; returns PyTorch's outputs."""
    import torch
    if plan.tracker is None:
        plan.finish([], output_names)
        return _run_torch(model, args)
    with torch.no_grad(), plan.tracker:
        out = _flatten(model(*args))
    plan.finish(out, output_names)
    return _run_torch(model, args)


def _detached(out):
    import torch
    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    if isinstance(out, (list, tuple)):
        return [_detached(o) for o in out]
    if isinstance(out, dict):
        return {k: _detached(v) for k, v in out.items()}
    return out


def _export_error(e: BaseException, which: str) -> ExportError:
    from .torch.patches import is_adaptive_pool_export_error
    if is_adaptive_pool_export_error(e):
        return ExportError(
            "torch.onnx cannot export adaptive_avg_pool2d whose output size does not divide "
            "the input size; pass fix_adaptive_pool=True or wrap the export in "
            "pointrt.torch.patches.patch_adaptive_avg_pool2d()")
    hint = " (exporter='dynamo'; exporter='torchscript' may succeed where torch.export cannot trace)" \
        if which == "dynamo" else ""
    return ExportError(f"torch.onnx.export failed{hint}: {type(e).__name__}: {str(e).strip()[:2000]}")


def _finish_file(data: bytes, path: str, opset: int, output_names, ref, axes) -> ExportReport:
    """Output shapes, onnx.checker and the node count on the exported bytes; one write."""
    import onnx
    model = onnx.load_from_string(data)
    _fix_output_shapes(model, output_names, ref, axes)
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise ExportError(f"the exported model fails onnx.checker: {e}") from e
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    nodes = Counter(n.op_type for n in model.graph.node if n.domain == "pointrt")
    return ExportReport(path=path, opset=opset, size_bytes=os.path.getsize(path),
                        pointrt_nodes=dict(nodes), dynamic_axes=axes)


def _onnx_elem_type(t) -> int:
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(str(t.dtype).replace("torch.", "")))


def _fix_output_shapes(model, output_names, ref, axes) -> None:
    """Write the traced length of every output axis that is not dynamic.

    The exporter cannot infer shapes through ``pointrt`` nodes and names such axes with fresh
    symbols (``Gatherfeatures_dim_1``); the traced sizes are the true ones for every axis that
    does not depend on the dynamic ones, which are exactly the axes left out of ``axes``.
    """
    for out in model.graph.output:
        if out.name not in output_names:
            continue
        t = ref[output_names.index(out.name)]
        tensor_type = out.type.tensor_type
        if tensor_type.elem_type == 0:  # the dynamo exporter leaves custom-domain outputs untyped
            tensor_type.elem_type = _onnx_elem_type(t)
            if not tensor_type.HasField("shape"):
                tensor_type.shape.SetInParent()
        dyn = axes.get(out.name, {})
        dims = out.type.tensor_type.shape.dim
        if len(dims) != t.dim():
            continue
        for i, d in enumerate(dims):
            if i in dyn:
                d.dim_param = dyn[i]
            elif not d.HasField("dim_value"):
                d.dim_value = int(t.shape[i])


def _verify(report, args, ref, input_names, output_names, atol, rtol, strict, plugins=()):
    import torch
    from .runtime import runtime_status

    st = runtime_status()
    if st.module is None:
        report.verify_skipped = st.reason
        warnings.warn(f"pointrt.export: verification skipped: {st.reason}")
        return
    try:
        # plugins only when given: the runtime module of an older build does not know the argument
        extra = {"plugins": [os.fspath(p) for p in plugins]} if plugins else {}
        sess = st.module.Session(report.path, **extra)
        names = list(getattr(sess, "input_names", input_names))
        feeds = {}
        for name, a in zip(input_names, args):
            if name in names and isinstance(a, torch.Tensor):
                feeds[name] = np.ascontiguousarray(a.detach().cpu().numpy())
        got = sess.run(feeds)
    except Exception as e:  # the runtime's own error (unsupported node, bad shape, ...)
        report.verified = False
        msg = (f"pointrt.export: the pointrt runtime could not run {report.path}: "
               f"{type(e).__name__}: {str(e).strip()[:1500]}")
        report.verify_skipped = msg
        if strict:
            raise VerificationError(msg) from e
        warnings.warn(msg)
        return
    bad = []
    for name, r in zip(output_names, ref):
        r = r.detach().cpu().numpy()
        if name not in got:
            bad.append(f"{name}: missing from the runtime's outputs")
            continue
        g = np.asarray(got[name])
        if g.shape != r.shape:
            bad.append(f"{name}: shape {list(g.shape)} != torch {list(r.shape)}")
            report.max_errors[name] = float("inf")
            continue
        if r.size == 0:
            report.max_errors[name] = 0.0
            continue
        err = float(np.max(np.abs(g.astype(np.float64) - r.astype(np.float64))))
        report.max_errors[name] = err
        tol = atol + rtol * float(np.max(np.abs(r)))
        if np.issubdtype(r.dtype, np.integer):
            tol = 0.0
        if not err <= tol:
            bad.append(f"{name}: max error {err:.3g} > tolerance {tol:.3g}")
    report.verified = not bad
    if bad:
        msg = "pointrt.export: the runtime's outputs differ from PyTorch: " + "; ".join(bad)
        if strict:
            raise VerificationError(msg)
        warnings.warn(msg)
