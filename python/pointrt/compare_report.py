"""``pointrt.compare`` reports: a terminal table, JSON, and a PNG of the error along the graph."""
import json
import math
from typing import Dict, List, Optional, Tuple

__all__ = ["format_table", "write_json", "plot"]


def _num(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


def _rows(report) -> List[Tuple[int, str, Dict[str, object]]]:
    """(position, value, {mode: LayerResult}) in graph order."""
    by_value: Dict[str, Dict[str, object]] = {}
    pos: Dict[str, int] = {}
    for mode, rows in report.modes.items():
        for r in rows:
            by_value.setdefault(r.value, {})[mode] = r
            pos[r.value] = r.position
    return sorted(((pos[v], v, m) for v, m in by_value.items()), key=lambda t: (t[0], t[1]))


def format_table(report, limit: Optional[int] = None) -> str:
    modes = list(report.modes)
    tol = f"max|err| <= {report.atol:g} + {report.rtol:g} * max|ref|"
    lines = [f"pointrt compare: {report.model} vs {report.reference} ({report.precision}; {', '.join(modes)}; {tol})"]
    head = f"{'#':>4}  {'layer':<40} {'op':<18} {'shape':<18}"
    for m in modes:
        head += f" | {m + ' max|err|':>20} {'/max|ref|':>9} {'cosine':>9}"
    lines.append(head)
    firsts = {m: report.first_over(m) for m in modes}
    rows = _rows(report)
    for position, value, per_mode in rows[:limit] if limit else rows:
        any_row = next(iter(per_mode.values()))
        name = any_row.label or value
        line = f"{position:>4}  {name[:40]:<40} {any_row.op_type[:18]:<18} {str(any_row.shape)[:18]:<18}"
        marks = []
        for m in modes:
            r = per_mode.get(m)
            if r is None:
                line += f" | {'':>20} {'':>9} {'':>9}"
                continue
            flag = "*" if r.over_tolerance else " "
            line += f" | {_num(r.max_abs_error):>19}{flag} {_num(r.error_to_magnitude):>9} {r.cosine:>9.6f}"
            if firsts[m] is not None and firsts[m].value == value:
                marks.append(f"<- first over tolerance ({m})")
            if r.overflow or r.underflow:
                marks.append(f"fp16: {r.overflow} inf, {r.underflow} flushed to 0")
            if r.note:
                marks.append(r.note)
        lines.append(line + ("  " + "; ".join(dict.fromkeys(marks)) if marks else ""))
    lines.append("(* over tolerance)")
    for m in modes:
        f = firsts[m]
        lines.append(f"{m}: " + ("every layer within tolerance" if f is None else
                                 f"first over tolerance: {f.label or f.value} (node '{f.node}', {f.op_type}), "
                                 f"max|err| {_num(f.max_abs_error)} = {_num(f.error_to_magnitude)} of max|ref| "
                                 f"{_num(f.magnitude)}"))
    for h in report.hazards:
        lines.append(f"fp16 hazard: {h}")
    if report.unmatched:
        shown = ", ".join(report.unmatched[:8]) + (" ..." if len(report.unmatched) > 8 else "")
        lines.append(f"not found in the file ({len(report.unmatched)}): {shown}")
    if report.seconds:
        lines.append("time: " + ", ".join(f"{k} {v:.2f} s" for k, v in report.seconds.items()) +
                     f"; peak RSS {report.peak_rss_mib:.0f} MiB, reference tensors {report.compared_mib:.0f} MiB")
    return "\n".join(lines)


def write_json(report, path: str) -> None:
    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return str(x)
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items()}
        if isinstance(x, list):
            return [clean(v) for v in x]
        return x
    with open(path, "w") as f:
        json.dump(clean(report.to_dict()), f, indent=1)


def plot(report, path: str) -> None:
    """Error relative to the magnitude per layer along the graph, one line per mode, on one PNG."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(12, 4.5))
    floor = 1e-12
    for mode, rows in report.modes.items():
        rows = sorted(rows, key=lambda r: r.position)
        xs = [r.position for r in rows]
        ys = [max(min(r.error_to_magnitude, 1e6), floor) for r in rows]
        ax.plot(xs, ys, marker="o", markersize=3, linewidth=1, label=mode)
        first = report.first_over(mode)
        if first is not None:
            ax.annotate(f"{first.label or first.value}\n({first.op_type})", (first.position,
                        max(min(first.error_to_magnitude, 1e6), floor)), textcoords="offset points",
                        xytext=(8, 8), fontsize=8, arrowprops={"arrowstyle": "->"})
    ax.axhline(report.rtol, color="gray", linestyle="--", linewidth=0.8, label=f"rtol {report.rtol:g}")
    ax.set_yscale("log")
    ax.set_xlabel("node position in the file (graph order)")
    ax.set_ylabel("max |err| / max |ref|")
    ax.set_title(f"{report.model} vs {report.reference} ({report.precision})", fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
