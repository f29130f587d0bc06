"""Give pure-PyTorch PointNet++ code (yanx27/Pointnet_Pointnet2_pytorch's layout) pointrt's operators.

That code samples and groups with Python loops and masked assignments (``farthest_point_sample``
with a random start, ``query_ball_point``, ``index_points``, the feature propagation's full sort
of a distance matrix). A plain ``torch.onnx.export`` fails on ``aten::randint`` or, with a fixed
start, unrolls one loop iteration per sample (tens of thousands of nodes, minutes). ::

    import pointrt
    from pointrt.torch.adopt import adopt

    adopt(model)                                  # patches the helpers, prints what it did
    pointrt.export(model, (points,), "model.onnx", input_names=["points"], output_names=[...])

:func:`adopt` looks at the modules that the model's classes come from and recognises each helper
by its **name and its parameter names** (the signature of yanx27's function); a function with a
known name but another signature is left alone and reported. Each replacement is checked on a
small fixed-seed probe against the original before it is installed (a probe that differs leaves
the original in place and says so). It is installed in **every** loaded module that holds the
original (the defining ``pointnet2_utils`` and any ``from pointnet2_utils import *`` copy), so
it affects every model using those modules until :func:`adopt` ``(model, undo=True)`` (or the
end of a ``with adopted(model):`` block) puts the originals back.

=====================================================  ==========================================
helper (yanx27 signature)                              becomes
=====================================================  ==========================================
``farthest_point_sample(xyz, npoint)``                 FurthestPointSample, **start index 0**
``query_ball_point(radius, nsample, xyz, new_xyz)``    BallQuery
``index_points(points, idx)``, idx [B, S] / [B, S, K]  GatherPoints / GroupPoints
``knn_point(nsample, xyz, new_xyz)``                   KNN (only if the probe gives the same order)
``PointNetFeaturePropagation`` (class, its forward)    KNN k=3 + ThreeInterpolate, then its MLP
``square_distance``, ``sample_and_group[_all]``        kept: plain tensor ops, or calls of the above
=====================================================  ==========================================

Differences, on purpose or unavoidable:

- the original FPS starts at ``torch.randint(0, N)``; the replacement starts at index 0 (so the
  file is deterministic); the probe compares against the original with its start forced to 0;
- the original measures distances as ``|a|^2 + |b|^2 - 2 a.b`` (cancellation error about
  ``|x|^2 * 1e-7``); pointrt uses ``sum((a - b)^2)`` as OPS.md says. Ball membership can
  therefore differ for a point within that rounding of the radius, and the interpolation
  weights near coincident points differ in the last digits (the original's are the less accurate);
- ``query_ball_point`` of a centre with no point in its ball gives index N (out of range) in the
  original and 0 in pointrt; centres sampled from the cloud always hit themselves;
- index outputs stay int64 as in the original (a Cast after the pointrt node).
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import inspect
import sys
import types
import weakref
from typing import Callable, Dict, Iterator, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import ops

__all__ = ["adopt", "adopted", "adopt_report", "AdoptReport", "Adoption"]


# ----------------------------------------------------------------------------- replacements
def _fps(original: Callable) -> Callable:
    def farthest_point_sample(xyz, npoint):
        """pointrt FurthestPointSample (start index 0), int64 like the original."""
        return ops.furthest_point_sample(xyz, int(npoint)).long()
    return farthest_point_sample


def _ball(original: Callable) -> Callable:
    def query_ball_point(radius, nsample, xyz, new_xyz):
        """pointrt BallQuery: the first nsample points (by index) in the ball, padded with the first."""
        return ops.ball_query(xyz, new_xyz, float(radius), int(nsample)).long()
    return query_ball_point


def _index(original: Callable) -> Callable:
    def index_points(points, idx):
        """pointrt GatherPoints (idx [B, S]) or GroupPoints (idx [B, S, K]) on [B, N, C] points."""
        if not points.is_floating_point() or points.dim() != 3 or idx.dim() not in (2, 3):
            return original(points, idx)
        features = points.transpose(1, 2)
        if idx.dim() == 2:
            return ops.gather_points(features, idx).transpose(1, 2)
        return ops.group_points(features, idx).permute(0, 2, 3, 1)
    return index_points


def _knn(original: Callable) -> Callable:
    def knn_point(nsample, xyz, new_xyz):
        """pointrt KNN: the nsample nearest points, ascending by distance, int64."""
        return ops.knn(xyz, new_xyz, int(nsample))[0].long()
    return knn_point


def _fp_forward(self, xyz1, xyz2, points1, points2):
    """yanx27 PointNetFeaturePropagation.forward with pointrt's KNN (k=3, squared distances, as
    the original weights) and ThreeInterpolate instead of sorting the whole distance matrix."""
    unknown, known = xyz1.permute(0, 2, 1), xyz2.permute(0, 2, 1)
    if known.shape[1] == 1:
        interpolated = points2.repeat(1, 1, unknown.shape[1])
    else:
        idx, dist2 = ops.knn(known, unknown, 3)
        recip = 1.0 / (dist2 + 1e-8)
        weight = recip / torch.sum(recip, dim=2, keepdim=True)
        interpolated = ops.three_interpolate(points2, idx, weight)
    new_points = interpolated if points1 is None else torch.cat([points1, interpolated], dim=1)
    for conv, bn in zip(self.mlp_convs, self.mlp_bns):
        new_points = F.relu(bn(conv(new_points)))
    return new_points


# ----------------------------------------------------------------------------- probes
def _cloud(b: int, n: int, c: int = 3, seed: int = 0) -> torch.Tensor:
    return torch.rand(b, n, c, generator=torch.Generator().manual_seed(seed)) * 2 - 1


@contextlib.contextmanager
def _randint_zero() -> Iterator[None]:
    """torch.randint returns zeros inside the block: the original FPS then starts at index 0."""
    real = torch.randint

    def zeros(*args, **kwargs):
        size = kwargs.get("size", args[-1] if args else ())
        return torch.zeros(size, dtype=kwargs.get("dtype") or torch.long, device=kwargs.get("device"))

    torch.randint = zeros
    try:
        yield
    finally:
        torch.randint = real


def _same(want, got) -> bool:
    if want.shape != got.shape:
        return False
    if want.is_floating_point():
        return bool(torch.allclose(want, got, rtol=1e-5, atol=1e-5))
    return bool(torch.equal(want.long(), got.long()))


def _probe_fps(original, replacement) -> bool:
    xyz = _cloud(2, 40)
    with _randint_zero():
        want = original(xyz, 9)
    return _same(want, replacement(xyz, 9))


def _probe_ball(original, replacement) -> bool:
    xyz = _cloud(2, 40, seed=1)
    centres = xyz[:, ::7].contiguous()
    return _same(original(0.6, 5, xyz, centres), replacement(0.6, 5, xyz, centres))


def _probe_index(original, replacement) -> bool:
    points = _cloud(2, 10, 5, seed=2)
    gen = torch.Generator().manual_seed(3)
    idx2, idx3 = torch.randint(0, 10, (2, 4), generator=gen), torch.randint(0, 10, (2, 4, 3), generator=gen)
    return all(_same(original(points, i), replacement(points, i)) for i in (idx2, idx3))


def _probe_knn(original, replacement) -> bool:
    xyz = _cloud(2, 30, seed=4)
    centres = _cloud(2, 6, seed=5)
    return _same(original(4, xyz, centres), replacement(4, xyz, centres))


@dataclasses.dataclass(frozen=True)
class _Helper:
    params: Tuple[str, ...]                        # yanx27's parameter names, in order
    make: Optional[Callable[[Callable], Callable]]  # None: recognised and kept
    probe: Optional[Callable[[Callable, Callable], bool]] = None
    kept_because: str = ""


_HELPERS: Dict[str, _Helper] = {
    "farthest_point_sample": _Helper(("xyz", "npoint"), _fps, _probe_fps),
    "query_ball_point": _Helper(("radius", "nsample", "xyz", "new_xyz"), _ball, _probe_ball),
    "index_points": _Helper(("points", "idx"), _index, _probe_index),
    "knn_point": _Helper(("nsample", "xyz", "new_xyz"), _knn, _probe_knn),
    "square_distance": _Helper(("src", "dst"), None, kept_because=(
        "plain tensor ops (MatMul, two sums) that export without unrolling; no pointrt operator "
        "computes a dense distance matrix")),
    "sample_and_group": _Helper(("npoint", "radius", "nsample", "xyz", "points"), None, kept_because=(
        "calls the helpers above through its module")),
    "sample_and_group_all": _Helper(("xyz", "points"), None, kept_because=(
        "tensor ops only (a zero centre and a view of all points)")),
}
_FP_CLASS = "PointNetFeaturePropagation"
_FP_PARAMS = ("self", "xyz1", "xyz2", "points1", "points2")


# ----------------------------------------------------------------------------- report
@dataclasses.dataclass
class Adoption:
    """One recognised helper: ``status`` is "replaced", "kept" (recognised, nothing to do) or
    "not replaced" (name known, but its signature or the probe differ); ``where`` lists the
    modules (or module paths of the model) it was installed in."""
    name: str
    status: str
    why: str = ""
    where: List[str] = dataclasses.field(default_factory=list)

    def __str__(self) -> str:
        text = f"  {self.status:12s} {self.name}"
        if self.where:
            text += f" (in {', '.join(self.where)})"
        return text + (f": {self.why}" if self.why else "")


@dataclasses.dataclass
class AdoptReport:
    """What :func:`adopt` found. ``undo()`` restores every original it replaced."""
    entries: List[Adoption] = dataclasses.field(default_factory=list)
    _undo: List[Callable[[], None]] = dataclasses.field(default_factory=list, repr=False)

    @property
    def replaced(self) -> List[Adoption]:
        return [e for e in self.entries if e.status == "replaced"]

    @property
    def not_replaced(self) -> List[Adoption]:
        return [e for e in self.entries if e.status != "replaced"]

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()

    def __str__(self) -> str:
        head = f"pointrt.torch.adopt: {len(self.replaced)} replaced, {len(self.not_replaced)} left as they are"
        return "\n".join([head] + [str(e) for e in self.entries])


_REPORTS: "weakref.WeakKeyDictionary[nn.Module, AdoptReport]" = weakref.WeakKeyDictionary()


# ----------------------------------------------------------------------------- adopt
def _source_modules(model: nn.Module) -> List[types.ModuleType]:
    """The modules that define the classes of ``model`` and of its submodules (and their bases)."""
    names: List[str] = []
    for sub in model.modules():
        for cls in type(sub).__mro__:
            if cls.__module__ not in names and cls.__module__.split(".")[0] not in ("torch", "builtins"):
                names.append(cls.__module__)
    return [sys.modules[n] for n in names if n in sys.modules]


def _holders(function: Callable) -> List[Tuple[types.ModuleType, str]]:
    """(module, attribute name) of every loaded module that holds ``function``."""
    found = []
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        found += [(module, key) for key, value in list(namespace.items()) if value is function]
    return found


def _params(function: Callable) -> Tuple[str, ...]:
    try:
        return tuple(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return ()


def _judge(name: str, helper: _Helper, function: Callable) -> Tuple[str, str, Optional[Callable]]:
    """(status, why, replacement or None) for a function called ``name``."""
    params = list(inspect.signature(function).parameters.values())
    names = tuple(p.name for p in params)
    extra_required = [p for p in params[len(helper.params):] if p.default is inspect.Parameter.empty]
    if names[:len(helper.params)] != helper.params or extra_required:
        return "not replaced", f"signature ({', '.join(names)}) is not yanx27's ({', '.join(helper.params)})", None
    if helper.make is None:
        return "kept", helper.kept_because, None
    replacement = helper.make(function)
    try:
        agrees = helper.probe(function, replacement)
    except Exception as exc:  # the user's function failed on the probe: leave it alone
        return "not replaced", f"the probe call failed ({type(exc).__name__}: {exc})", None
    if not agrees:
        return "not replaced", "gives other results than the pointrt operator on a probe input", None
    return "replaced", "", replacement


def _adopt_function(name: str, function: Callable, report: AdoptReport) -> None:
    status, why, replacement = _judge(name, _HELPERS[name], function)
    holders = _holders(function)
    where = sorted({getattr(m, "__name__", key) for m, key in holders})
    if replacement is not None:
        replacement.__pointrt_original__ = function  # type: ignore[attr-defined]
        for module, key in holders:
            setattr(module, key, replacement)
            report._undo.append(lambda m=module, k=key: setattr(m, k, function))
    report.entries.append(Adoption(f"{function.__module__}.{name}", status, why, where))


def _fp_class(cls: type) -> type:
    """A subclass of the user's FP class whose forward uses the pointrt operators."""
    return type(cls.__name__, (cls,), {"forward": _fp_forward, "__pointrt_original__": cls,
                                       "__module__": cls.__module__, "__qualname__": cls.__qualname__})


def _fp_probe(module: nn.Module, adopted_cls: type) -> bool:
    original = copy.deepcopy(module).eval()
    trial = copy.deepcopy(original)
    trial.__class__ = adopted_cls
    device = module.mlp_convs[0].weight.device
    xyz1, xyz2 = (_cloud(1, n, seed=s).transpose(1, 2).to(device) for n, s in ((24, 6), (7, 7)))
    feats = _cloud(1, module.mlp_convs[0].in_channels, 7, seed=8).to(device)
    with torch.no_grad():
        want, got = original(xyz1, xyz2, None, feats), trial(xyz1, xyz2, None, feats)
    scale = float(want.abs().max()) + 1e-6
    return want.shape == got.shape and float((want - got).abs().max()) <= 1e-4 * scale


def _fp_verdict(module: nn.Module) -> str:
    """Why a module named PointNetFeaturePropagation cannot be adopted ("" if it can)."""
    forward = type(module).forward
    if _params(forward) != _FP_PARAMS:
        return f"forward{inspect.signature(forward)} is not yanx27's ({', '.join(_FP_PARAMS[1:])})"
    convs, bns = getattr(module, "mlp_convs", None), getattr(module, "mlp_bns", None)
    if not (isinstance(convs, nn.ModuleList) and isinstance(bns, nn.ModuleList) and len(convs) == len(bns) > 0
            and all(isinstance(c, nn.Conv1d) for c in convs) and all(isinstance(b, nn.BatchNorm1d) for b in bns)):
        return "mlp_convs/mlp_bns are not matching lists of Conv1d and BatchNorm1d"
    return ""


def _adopt_fp_modules(model: nn.Module, report: AdoptReport) -> None:
    done: Dict[type, Tuple[Optional[type], str]] = {}
    paths: Dict[type, List[str]] = {}
    for path, module in model.named_modules():
        cls = type(module)
        if cls.__name__ != _FP_CLASS or getattr(cls, "__pointrt_original__", None) is not None:
            continue
        if cls not in done:
            why = _fp_verdict(module)
            adopted_cls = None if why else _fp_class(cls)
            try:
                agrees = adopted_cls is None or _fp_probe(module, adopted_cls)
            except Exception as exc:  # the user's forward failed on the probe: leave it alone
                agrees, why = False, f"the probe call failed ({type(exc).__name__}: {exc})"
            if not agrees:
                adopted_cls, why = None, why or "its forward gives other results than the pointrt version on a probe input"
            done[cls] = (adopted_cls, why)
        adopted_cls, _ = done[cls]
        paths.setdefault(cls, []).append(path or "<model>")
        if adopted_cls is not None:
            module.__class__ = adopted_cls
            report._undo.append(lambda m=module, c=cls: setattr(m, "__class__", c))
    for cls, (adopted_cls, why) in done.items():
        status = "replaced" if adopted_cls is not None else "not replaced"
        report.entries.append(Adoption(f"{cls.__module__}.{cls.__qualname__}.forward", status, why, paths[cls]))


def adopt(model: nn.Module, *, undo: bool = False, quiet: bool = False) -> nn.Module:
    """Replace the yanx27-style PointNet++ helpers used by ``model`` with pointrt operators.

    Recognises, in the modules that define the classes of ``model`` and its submodules, the
    functions ``farthest_point_sample``, ``query_ball_point``, ``index_points``, ``knn_point``,
    ``square_distance``, ``sample_and_group``, ``sample_and_group_all`` by name **and** parameter
    names, and the class ``PointNetFeaturePropagation`` by name, forward signature and layers.
    Each replacement must reproduce the original on a probe input (FPS with the original's random
    start forced to index 0: the replacement always starts at 0). Replacements are installed in
    every loaded module holding the original function, and FP modules of ``model`` get a subclass
    whose forward uses KNN + ThreeInterpolate (state_dict unchanged).

    Returns ``model`` (modified in place); :func:`adopt_report` gives what was done, which is also
    printed unless ``quiet``. ``undo=True`` restores the originals of an earlier ``adopt(model)``.
    Point axes need no help: ``pointrt.export`` finds them from the pointrt operators (the
    channel-first [B, 3, N] input gets its axis 2).
    """
    if undo:
        previous = _REPORTS.pop(model, None)
        if previous is not None:
            previous.undo()
        return model
    report = _REPORTS.get(model) or AdoptReport()
    seen: set = set()
    for module in _source_modules(model):
        for value in list(vars(module).values()):
            name = getattr(value, "__name__", None)
            if not isinstance(value, types.FunctionType) or name not in _HELPERS or id(value) in seen:
                continue
            seen.add(id(value))
            known = {e.name for e in report.entries}
            if getattr(value, "__pointrt_original__", None) is None and f"{value.__module__}.{name}" not in known:
                _adopt_function(name, value, report)
    _adopt_fp_modules(model, report)
    _REPORTS[model] = report
    if not quiet:
        print(report)
    return model


def adopt_report(model: nn.Module) -> Optional[AdoptReport]:
    """The :class:`AdoptReport` of the last :func:`adopt` of ``model`` (None if not adopted)."""
    return _REPORTS.get(model)


@contextlib.contextmanager
def adopted(model: nn.Module, quiet: bool = False) -> Iterator[AdoptReport]:
    """``with adopted(model) as report:`` adopt inside the block, the originals back after it."""
    adopt(model, quiet=quiet)
    try:
        yield _REPORTS[model]
    finally:
        adopt(model, undo=True)
