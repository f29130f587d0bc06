"""Where float16 breaks a file: static hazards (read from the graph) and weight rounding.

Used by ``pointrt.compare(precision="fp16")`` (which also counts, per node, the values that
overflow to inf or flush to zero when rounded) and by ``pointrt check`` (its float16 lint).
"""
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import numpy as np

__all__ = ["FP16_MAX", "FP16_TINY", "Hazard", "static_hazards", "round_weights", "round_to_fp16"]

FP16_MAX = 65504.0           # largest finite float16
FP16_TINY = 2.0 ** -24       # smallest positive (subnormal) float16: smaller values become 0
FP16_NORMAL = 2.0 ** -14     # smallest normal float16: below it precision falls away

_DIVIDING = {"Div": 1, "Reciprocal": 0, "Log": 0, "Sqrt": 0, "Pow": 0}  # op -> input made hazardous


@dataclass
class Hazard:
    node: str
    op_type: str
    problem: str
    fix: str

    def __str__(self) -> str:
        return f"node '{self.node}' ({self.op_type}): {self.problem}; fix: {self.fix}"


def _constants(graph) -> Dict[str, np.ndarray]:
    from onnx import numpy_helper
    c = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for n in graph.node:
        if n.op_type == "Constant" and n.output:
            for a in n.attribute:
                if a.name == "value":
                    c[n.output[0]] = numpy_helper.to_array(a.t)
                elif a.name == "value_float":
                    c[n.output[0]] = np.array(a.f, np.float32)
                elif a.name == "value_floats":
                    c[n.output[0]] = np.array(list(a.floats), np.float32)
    return c


def _floats(a: np.ndarray) -> Optional[np.ndarray]:
    return a.astype(np.float64) if a.dtype.kind == "f" and a.size else None


def static_hazards(graph) -> List[Hazard]:
    """Hazards of running ``graph`` (an onnx GraphProto) in float16, each naming a node and a fix."""
    consts = _constants(graph)
    readers: Dict[str, List] = {}
    for n in graph.node:
        for i, v in enumerate(n.input):
            readers.setdefault(v, []).append((n, i))
    out: List[Hazard] = []
    for n in graph.node:
        name = n.name or n.output[0]
        if n.domain == "pointrt" and n.op_type == "FurthestPointSample":
            out.append(Hazard(name, n.op_type, "the running distance starts at 1e10, beyond float16's 65504",
                              "an fp16 engine must keep FurthestPointSample's distances in float32 (pointrt does)"))
        if n.domain == "pointrt" and n.op_type == "ThreeNN":
            out.append(Hazard(name, n.op_type, "missing neighbours get distance 1e20, beyond float16's 65504",
                              "keep ThreeNN and the 1/(d + eps) weights after it in float32"))
        for v in n.input:
            f = _floats(consts[v]) if v in consts and n.op_type != "Constant" else None
            if f is None:
                continue
            finite = f[np.isfinite(f)]
            if finite.size and np.abs(finite).max() > FP16_MAX:
                out.append(Hazard(name, n.op_type, f"constant '{v}' holds {np.abs(finite).max():.3g}, which "
                                  "overflows float16 to inf", "use a value within +-65504 (e.g. -1e4 for masks)"))
            if n.op_type in ("Add", "Sub") and f.size == 1 and 0 < abs(f.item()) < FP16_NORMAL:
                eps = f.item()
                fate = "flushes to 0" if abs(eps) < FP16_TINY else "is a subnormal"
                feeds = [r for r, i in readers.get(n.output[0], []) if _DIVIDING.get(r.op_type) == i]
                where = (f"; it guards {', '.join(repr(r.name) for r in feeds)} ({feeds[0].op_type}), which then "
                         "divides by (or takes the log/root of) zero") if feeds else ""
                out.append(Hazard(name, n.op_type, f"epsilon {eps:g} {fate} in float16{where}",
                                  "use an epsilon >= 1e-4 (6.1e-5 is float16's smallest normal), or keep the "
                                  "node in float32"))
    return out


def round_to_fp16(a: np.ndarray) -> Tuple[np.ndarray, int, int]:
    """``a`` rounded through float16 (same dtype), and how many elements overflowed to inf and
    how many non-zero ones became 0."""
    with np.errstate(over="ignore", under="ignore"):
        h = a.astype(np.float16)
    overflow = int(np.count_nonzero(np.isinf(h) & np.isfinite(a)))
    underflow = int(np.count_nonzero((h == 0) & (a != 0)))
    return h.astype(a.dtype), overflow, underflow


def round_weights(model) -> List[str]:
    """Round every float32 initializer and Constant of ``model`` (a ModelProto, changed in place)
    through float16, as an fp16 engine stores them; returns a line per weight that overflowed or
    flushed to zero."""
    from onnx import numpy_helper
    notes: List[str] = []

    def fix(t) -> None:
        a = numpy_helper.to_array(t)
        if a.dtype != np.float32 or not a.size:
            return
        r, over, under = round_to_fp16(a)
        if over or under:
            notes.append(f"weight '{t.name}': {over} element(s) overflow to inf, {under} flush to 0 in float16")
        t.CopyFrom(numpy_helper.from_array(r, t.name))

    for t in model.graph.initializer:
        fix(t)
    for n in model.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    fix(a.t)
    return notes
