"""How tensor axes flow through PyTorch operations, for the point-axis analysis of ``_axes``.

Each rule maps an operation's tensor arguments (their axis classes) to the classes of its
outputs' axes, and may unify classes that the operation requires to be the same axis
(elementwise broadcasting, concatenation). A rule returns one label tuple per output tensor
(None in a tuple: a fresh class). Unknown operations use broadcasting by position from the right
(an axis inherits only from input axes of the same length at the same place), which is exact for
elementwise operations and for the rest at worst loses the flow (a fresh class), never invents it.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

Labels = Tuple[Optional[int], ...]


def _dims(v, rank: int) -> List[int]:
    if v is None:
        return list(range(rank))
    vs = list(v) if isinstance(v, (list, tuple)) else [v]
    return sorted(int(d) % max(rank, 1) for d in vs)


def _int(v) -> Optional[int]:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, torch.Tensor) and v.numel() == 1 and not v.is_floating_point():
        return int(v)
    return None


class Flow:
    """What a rule sees: the tracker (labels of tensors, class union) and the call."""

    def __init__(self, tracker, name: str, args: tuple, kwargs: dict, outs: List[torch.Tensor]):
        self.t, self.name, self.args, self.kwargs, self.outs = tracker, name, args, kwargs, outs

    def arg(self, i: int, key: str, default=None):
        if key in self.kwargs:
            return self.kwargs[key]
        return self.args[i] if i < len(self.args) else default

    def tensors(self) -> List[torch.Tensor]:
        out = []
        for a in list(self.args) + list(self.kwargs.values()):
            if isinstance(a, torch.Tensor):
                out.append(a)
            elif isinstance(a, (list, tuple)):
                out += [x for x in a if isinstance(x, torch.Tensor)]
        return out

    def labels(self, x: torch.Tensor) -> Labels:
        return self.t.labels(x)

    def same_axis(self, a: Optional[int], b: Optional[int]) -> None:
        self.t.unify(a, b)


def broadcast(f: Flow, sources: Optional[Sequence[torch.Tensor]] = None) -> List[Labels]:
    srcs = list(f.tensors() if sources is None else sources)
    result = []
    for out in f.outs:
        labels: List[Optional[int]] = []
        for i in range(out.dim()):
            back = out.dim() - i
            size = out.shape[i]
            found = [f.labels(s)[s.dim() - back] for s in srcs if s.dim() >= back and s.shape[s.dim() - back] == size]
            label = found[0] if found and size > 1 else None
            for other in found[1:] if size > 1 else []:
                f.same_axis(label, other)
            labels.append(label)
        result.append(tuple(labels))
    return result


def first(f: Flow) -> List[Labels]:
    return broadcast(f, f.tensors()[:1])


def permute(f: Flow) -> List[Labels]:
    x = f.tensors()[0]
    lab = list(f.labels(x))
    if f.name in ("transpose", "swapaxes", "swapdims"):
        d0, d1 = _int(f.arg(1, "dim0")) % x.dim(), _int(f.arg(2, "dim1")) % x.dim()
        lab[d0], lab[d1] = lab[d1], lab[d0]
    elif f.name == "t":
        lab = lab[::-1]
    else:  # permute
        dims = f.args[1:] if len(f.args) > 2 or not isinstance(f.arg(1, "dims"), (list, tuple)) else f.arg(1, "dims")
        lab = [lab[int(d) % x.dim()] for d in dims]
    return [tuple(lab)]


def unsqueeze(f: Flow) -> List[Labels]:
    x = f.tensors()[0]
    d = _int(f.arg(1, "dim")) % (x.dim() + 1)
    lab = list(f.labels(x))
    return [tuple(lab[:d] + [None] + lab[d:])]


def squeeze(f: Flow) -> List[Labels]:
    x, out = f.tensors()[0], f.outs[0]
    lab = f.labels(x)
    kept = [lab[i] for i in range(x.dim()) if x.shape[i] != 1 or out.dim() == x.dim()]
    return [tuple(kept)] if len(kept) == out.dim() else broadcast(f)


def reshape(f: Flow) -> List[Labels]:
    """view/reshape/flatten/...: an output axis inherits when it is exactly one input axis (same
    length, same position in the row-major grouping); a Python-int size there while tracing is a
    literal that fixes that length in the file."""
    x, out = f.tensors()[0], f.outs[0]
    lab = f.labels(x)
    labels: List[Optional[int]] = [None] * out.dim()
    i = j = 0
    pi = pj = 1
    while i < x.dim() and j < out.dim():
        if pi == pj and x.shape[i] == out.shape[j]:
            labels[j] = lab[i] if x.shape[i] > 1 else None
            i, j = i + 1, j + 1
            continue
        if pi * x.shape[i] <= pj * out.shape[j]:
            pi *= x.shape[i]
            i += 1
        else:
            pj *= out.shape[j]
            j += 1
    if f.name in ("view", "reshape", "expand") and torch._C._get_tracing_state() is not None:
        sizes = f.args[1:] if len(f.args) > 2 or not isinstance(f.arg(1, "shape"), (list, tuple)) else f.arg(1, "shape")
        for j, s in enumerate(sizes):
            if j < len(labels) and labels[j] is not None and type(s) is int and s != -1:
                f.t.literal(labels[j], f"{f.name} with the literal size {s} at axis {j}")
    return [tuple(labels)]


def repeat(f: Flow) -> List[Labels]:
    x, out = f.tensors()[0], f.outs[0]
    lab = f.labels(x)
    off = out.dim() - x.dim()
    return [tuple(lab[j - off] if j >= off and out.shape[j] == x.shape[j - off] else None for j in range(out.dim()))]


def cat(f: Flow) -> List[Labels]:
    xs = [t for t in f.arg(0, "tensors") if isinstance(t, torch.Tensor) and t.dim() == f.outs[0].dim()]
    dim = (_int(f.arg(1, "dim", 0)) or 0) % f.outs[0].dim()
    labels = []
    for i in range(f.outs[0].dim()):
        if i == dim:
            labels.append(None)
            continue
        ls = [f.labels(x)[i] for x in xs]
        for other in ls[1:]:
            f.same_axis(ls[0], other)
        labels.append(ls[0] if ls else None)
    return [tuple(labels)]


def stack(f: Flow) -> List[Labels]:
    xs = [t for t in f.arg(0, "tensors") if isinstance(t, torch.Tensor)]
    dim = (_int(f.arg(1, "dim", 0)) or 0) % f.outs[0].dim()
    base = list(f.labels(xs[0]))
    for x in xs[1:]:
        for a, b in zip(base, f.labels(x)):
            f.same_axis(a, b)
    return [tuple(base[:dim] + [None] + base[dim:])]


def window(f: Flow) -> List[Labels]:
    """Convolutions and pooling over [B, C, *spatial]: a spatial axis keeps its class when its
    length is kept; a window as long as a whole axis is noted (it fixes that length)."""
    x, out = f.tensors()[0], f.outs[0]
    lab = f.labels(x)
    conv = f.name.startswith("conv")
    kernel = f.tensors()[1].shape[2:] if conv and len(f.tensors()) > 1 else f.arg(1, "kernel_size")
    n_sp = x.dim() - 2
    if isinstance(kernel, int):
        kernel = [kernel] * n_sp
    labels: List[Optional[int]] = [lab[0], None if conv else lab[1]]
    for a in range(n_sp):
        length = x.shape[2 + a]
        labels.append(lab[2 + a] if out.dim() == x.dim() and out.shape[2 + a] == length else None)
        k = kernel[a] if kernel is not None and a < len(kernel) else None
        if k is not None and int(k) == length > 1:
            f.t.literal(lab[2 + a], f"{f.name} with a window of {int(k)} over the whole axis")
    return [tuple(labels)] + [tuple(labels)] * (len(f.outs) - 1)


def resample(f: Flow) -> List[Labels]:
    x = f.tensors()[0]
    lab = f.labels(x)
    return [tuple(list(lab[:2]) + [None] * (o.dim() - 2)) for o in f.outs]


def reduce(f: Flow) -> List[Labels]:
    x = f.tensors()[0]
    if len(f.tensors()) > 1 and f.name in ("max", "min"):
        return broadcast(f)  # elementwise torch.max(a, b)
    dim = f.arg(1, "dim")
    keep = bool(f.arg(2, "keepdim", False))
    dims = _dims(dim, x.dim())
    lab = f.labels(x)
    labels = [None if i in dims else lab[i] for i in range(x.dim())] if keep else \
        [lab[i] for i in range(x.dim()) if i not in dims]
    return [tuple(labels) if len(labels) == o.dim() else (None,) * o.dim() for o in f.outs]


def matmul(f: Flow) -> List[Labels]:
    ts = f.tensors()
    if f.name == "linear":
        lab = f.labels(ts[0])
        return [tuple(list(lab[:-1]) + [None])]
    a, b = (ts[1], ts[2]) if f.name in ("addmm", "baddbmm") else (ts[0], ts[1])
    out = f.outs[0]
    if a.dim() < 2 or b.dim() < 2:
        return [(None,) * out.dim()]
    la, lb = f.labels(a), f.labels(b)
    f.same_axis(la[-1], lb[-2])
    batch = broadcast(Flow(f.t, f.name, (), {}, [torch.empty(out.shape[:-2], device="meta")]),
                      [torch.empty(a.shape[:-2], device="meta"), torch.empty(b.shape[:-2], device="meta")])
    return [tuple(list(batch[0]) + [la[-2], lb[-1]])] if len(batch[0]) == out.dim() - 2 else [(None,) * out.dim()]


def gather(f: Flow) -> List[Labels]:
    index = f.arg(2, "index")
    return [f.labels(index)] if isinstance(index, torch.Tensor) else broadcast(f)


def index_select(f: Flow) -> List[Labels]:
    x, index = f.arg(0, "input"), f.arg(2, "index")
    lab = list(f.labels(x))
    d = _int(f.arg(1, "dim")) % x.dim()
    lab[d] = f.labels(index)[0] if index.dim() == 1 else None
    return [tuple(lab)]


def getitem(f: Flow) -> List[Labels]:
    x, key = f.args[0], f.args[1]
    key = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, torch.Tensor) or (isinstance(k, (list, tuple))) for k in key):
        return broadcast(f, [x])
    n_index = sum(1 for k in key if k is not None and k is not Ellipsis)
    lab, out_lab, axis = f.labels(x), [], 0
    for k in key:
        if k is Ellipsis:
            for _ in range(x.dim() - n_index):
                out_lab.append(lab[axis])
                axis += 1
        elif k is None:
            out_lab.append(None)
        elif isinstance(k, slice):
            out_lab.append(lab[axis])
            axis += 1
        else:  # an integer drops the axis
            axis += 1
    out_lab += list(lab[axis:])
    out = f.outs[0]
    if len(out_lab) != out.dim():
        return broadcast(f, [x])
    # a slice that shortened an axis gives it a new length: a new class
    return [tuple(label if label is None or f.t.size(label) == out.shape[i] else None for i, label in enumerate(out_lab))]


def split(f: Flow) -> List[Labels]:
    x = f.tensors()[0]
    return [broadcast(Flow(f.t, f.name, (), {}, [o]), [x])[0] for o in f.outs]


def fresh(f: Flow) -> List[Labels]:
    return [(None,) * o.dim() for o in f.outs]


_GROUPS: Dict[Callable, Sequence[str]] = {
    first: ("batch_norm", "layer_norm", "group_norm", "instance_norm", "dropout", "softmax", "log_softmax", "relu",
            "leaky_relu", "gelu", "sigmoid", "tanh", "hardtanh", "elu", "selu", "silu", "contiguous", "clone", "detach",
            "float", "double", "half", "int", "long", "bool", "to", "type", "type_as", "cpu", "cuda", "normalize",
            "cumsum", "sort", "argsort", "topk", "flip", "roll", "requires_grad", "masked_fill", "prelu"),
    permute: ("transpose", "swapaxes", "swapdims", "permute", "t"),
    unsqueeze: ("unsqueeze",),
    squeeze: ("squeeze",),
    reshape: ("view", "reshape", "flatten", "unflatten", "view_as", "reshape_as", "expand", "expand_as"),
    repeat: ("repeat", "tile"),
    cat: ("cat", "concat", "concatenate"),
    stack: ("stack",),
    window: ("conv1d", "conv2d", "conv3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d",
             "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices"),
    resample: ("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
               "adaptive_max_pool2d", "interpolate", "upsample", "upsample_bilinear2d", "upsample_nearest2d",
               "grid_sample", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "pixel_shuffle"),
    reduce: ("sum", "mean", "amax", "amin", "max", "min", "prod", "std", "var", "argmax", "argmin", "norm",
             "logsumexp", "all", "any", "median", "nansum", "count_nonzero"),
    matmul: ("matmul", "bmm", "mm", "linear", "addmm", "baddbmm"),
    gather: ("gather", "take_along_dim"),
    index_select: ("index_select",),
    getitem: ("getitem",),
    split: ("split", "chunk", "unbind", "tensor_split", "narrow", "split_with_sizes"),
    fresh: ("nonzero", "unique", "masked_select", "argwhere", "arange", "zeros", "ones", "full", "empty", "rand",
            "randn", "randint", "tensor", "eye", "linspace", "new_zeros", "new_ones", "new_full", "new_empty",
            "new_tensor", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like"),
}
RULES: Dict[str, Callable[[Flow], List[Labels]]] = {n: rule for rule, names in _GROUPS.items() for n in names}


def rule_for(name: str) -> Callable[[Flow], List[Labels]]:
    return RULES.get(name, broadcast)


def op_name(func: Any) -> str:
    name = getattr(func, "__name__", "") or ""
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
        if name.startswith("r") and name[1:] in ("add", "sub", "mul", "truediv", "matmul", "pow"):
            name = name[1:]
        if name.startswith("i") and name[1:] in ("add", "sub", "mul", "truediv"):
            name = name[1:]
    elif name.endswith("_") and not name.startswith("_"):
        name = name[:-1]
    return name
