"""Users' own operators: one declaration -> a PyTorch op that both ONNX exporters write as one node.

The workflow this serves: an operator implemented in PyTorch (often a C++ extension built with
``torch.utils.cpp_extension``), which the exporter cannot see into, and a pointrt runtime plugin
(``include/pointrt/plugin.h``) that runs the same operator from the ONNX file::

    point_norm = pointrt.torch.custom_op(
        "example::PointNorm", inputs=["points"], outputs=["norms"],
        attrs={"p": 2.0, "keepdims": 0},
        shape=lambda points, p, keepdims: (points.shape[:-1] + ((1,) if keepdims else ()), points.dtype),
        kernel=lambda points, p, keepdims: my_extension.point_norm(points, p, keepdims))
    y = point_norm(x, p=3.0)          # eager: runs `kernel`
    pointrt.export(model, x, "m.onnx")  # the file holds example::PointNorm(p=3.0), domain opset 1

``shape(*inputs, **attrs)`` is the shape rule: it sees tensors whose shapes and dtypes are those
of the real inputs (they may be meta or fake tensors: read ``.shape`` and ``.dtype`` only) and
returns ``(shape, dtype)`` per output (one pair for a single output). From that one declaration:

* torch >= 2.4: a ``torch.library`` op ``<domain>::<Name>`` (the kernel for every device, a fake
  kernel from the shape rule for ``torch.export``), the TorchScript exporter's symbolic and the
  dynamo exporter's onnxscript translation (``pointrt.export`` passes it);
* torch 1.13: an autograd Function whose ``symbolic`` writes the node (TorchScript exporter).

Attributes: ``attrs`` maps each name to its default (its Python type gives the ONNX kind: int,
float, str, list of int or float); a default of ``None`` makes it required. The exported node
carries every attribute. Inputs are tensors only, in order; gradients are not defined (export
and inference only).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple, Union

import torch

from . import _library
from ._library import Attr, OpDecl

__all__ = ["custom_op", "CustomOp"]

AttrSpec = Union[Mapping[str, Any], Sequence[Attr]]


def _attr_of(name: str, default: Any) -> Attr:
    if isinstance(default, Attr):
        return default
    if isinstance(default, bool) or isinstance(default, int):
        return Attr(name, "int", int(default))
    if isinstance(default, float):
        return Attr(name, "float", default)
    if isinstance(default, str):
        return Attr(name, "str", default)
    if isinstance(default, (list, tuple)) and default:
        kind = "floats" if any(isinstance(v, float) for v in default) else "ints"
        return Attr(name, kind, list(default))
    raise TypeError(f"custom_op: attribute '{name}': give a default of type int, float, str or a non-empty list "
                    f"(or an Attr(name, kind) for a required one), got {default!r}")


def _attrs(spec: AttrSpec) -> List[Attr]:
    if isinstance(spec, Mapping):
        return [_attr_of(n, d) for n, d in spec.items()]
    return [a if isinstance(a, Attr) else _attr_of(*a) for a in spec]


class CustomOp:
    """The callable ``custom_op`` returns: ``op(*tensors, **attrs)``."""

    def __init__(self, decl: OpDecl, shape: Callable) -> None:
        self.decl = decl
        self._shape = shape
        self._function = None if _library.available() else _function_for(self)

    @property
    def qualname(self) -> str:
        return self.decl.qualname

    def output_meta(self, tensors: Sequence[torch.Tensor], attrs: Sequence[Any]) -> List[Tuple[Tuple[int, ...], Any]]:
        """The shape rule's ``(shape, dtype)`` per output, checked."""
        named = {a.name: a.value(v) for a, v in zip(self.decl.attrs, attrs)}
        got = self._shape(*tensors, **named)
        pairs = [got] if len(self.decl.outputs) == 1 and isinstance(got, tuple) and len(got) == 2 and \
            isinstance(got[1], torch.dtype) else list(got)
        if len(pairs) != len(self.decl.outputs):
            raise ValueError(f"{self.qualname}: the shape rule returned {len(pairs)} outputs, the declaration has "
                             f"{len(self.decl.outputs)}")
        return [(tuple(s), d) for s, d in pairs]

    def _arguments(self, tensors: Tuple[Any, ...], attrs: Dict[str, Any]) -> List[Any]:
        n = len(self.decl.inputs)
        if len(tensors) != n:
            raise TypeError(f"{self.qualname} takes {n} tensor inputs ({', '.join(self.decl.inputs)}), got "
                            f"{len(tensors)}")
        known = {a.name for a in self.decl.attrs}
        unknown = sorted(set(attrs) - known)
        if unknown:
            raise TypeError(f"{self.qualname}: unknown attribute(s) {unknown} (attributes: {sorted(known)})")
        values = []
        for a in self.decl.attrs:
            if a.name not in attrs and a.default is None:
                raise TypeError(f"{self.qualname}: attribute '{a.name}' is required")
            values.append(a.value(attrs.get(a.name, a.default)))
        return list(tensors) + values

    def __call__(self, *tensors: torch.Tensor, **attrs: Any):
        args = self._arguments(tensors, attrs)
        if self._function is not None:
            return self._function.apply(*args)
        return self.decl.call(*args)


def _function_for(op: CustomOp):
    """torch 1.13: an autograd Function with the kernel as forward and a symbolic writing the node."""
    decl = op.decl
    n_in = len(decl.inputs)

    def forward(ctx, *args):
        return decl.kernel(*args)

    def symbolic(g, *args):
        node = _library.write_node(g, decl, args[:n_in], args[n_in:])
        _type_outputs(op, args[:n_in], args[n_in:], node)
        return node

    return type(decl.name, (torch.autograd.Function,),
                {"forward": staticmethod(forward), "symbolic": staticmethod(symbolic)})


def _type_outputs(op: CustomOp, tensors, attrs, node) -> None:
    """Give the TorchScript node's outputs their dtype and, where the inputs' sizes are static,
    their shape (from the shape rule on meta tensors), as built-in operators' outputs have."""
    from .ops import _set_type, _sizes

    sizes = [_sizes(t) for t in tensors]
    if not all(s and all(isinstance(d, int) for d in s) for s in sizes):
        return
    try:
        metas = [torch.empty(s, dtype=_scalar_type(t), device="meta") for s, t in zip(sizes, tensors)]
        meta = op.output_meta(metas, attrs)
    except Exception:  # noqa: BLE001 - types are a hint for the exporter only
        return
    outs = node if isinstance(node, (tuple, list)) else (node,)
    for out, (shape, dtype) in zip(outs, meta):
        _set_type(out, tensors[0], dtype, list(shape))


def _scalar_type(value) -> torch.dtype:
    names = {"Float": torch.float32, "Double": torch.float64, "Half": torch.float16, "Int": torch.int32,
             "Long": torch.int64, "Bool": torch.bool}
    return names.get(value.type().scalarType(), torch.float32)


def custom_op(qualname: str, *, inputs: Sequence[str], outputs: Sequence[str], shape: Callable, kernel: Callable,
              attrs: AttrSpec = ()) -> CustomOp:
    """Declare an operator ``"<domain>::<Name>"`` (see the module docstring). ``kernel(*tensors,
    **attrs)`` computes it in PyTorch; ``shape(*tensors, **attrs)`` gives ``(shape, dtype)`` per
    output. The domain must be your own (not ``""``/``ai.onnx``/``pointrt``); a pointrt plugin
    serving the same domain and name runs the exported node."""
    domain, sep, name = qualname.partition("::")
    if not sep or not domain or not name or not name.isidentifier():
        raise ValueError(f"custom_op: the name must be 'domain::Name', got {qualname!r}")
    if domain in ("ai.onnx", "pointrt", "aten", "prim", "onnx"):
        raise ValueError(f"custom_op: the domain '{domain}' is taken; declare your operators in a domain of your own")
    if not inputs or not outputs:
        raise ValueError(f"custom_op {qualname}: give at least one input and one output")
    attr_list = _attrs(attrs)
    names = [a.name for a in attr_list]
    holder: Dict[str, CustomOp] = {}

    def run_kernel(*args):
        return kernel(*args[:len(inputs)], **dict(zip(names, args[len(inputs):])))

    def fake(*args):
        meta = holder["op"].output_meta(args[:len(inputs)], args[len(inputs):])
        like = args[0]
        made = [like.new_empty(s, dtype=d) for s, d in meta]
        return made[0] if len(made) == 1 else tuple(made)

    decl = OpDecl(domain, name, list(inputs), attr_list, list(outputs), run_kernel, fake)
    before = _DECLARED.get(qualname)
    if before is not None:  # declared again (a re-run cell, a reloaded module): same signature only
        if before.decl.schema() != decl.schema() or list(before.decl.outputs) != list(outputs):
            raise ValueError(f"custom_op: {qualname} was declared before as {before.decl.schema()}; now "
                             f"{decl.schema()}")
        before.decl.kernel, before.decl.fake, before._shape = run_kernel, fake, shape
        holder["op"] = before
        return before
    op = holder["op"] = CustomOp(decl, shape)
    _library.register(decl)
    _DECLARED[qualname] = op
    return op


_DECLARED: Dict[str, CustomOp] = {}
