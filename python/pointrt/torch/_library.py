"""One declaration of an operator -> its torch.library registration and both ONNX translations.

On torch >= 2.4 (``torch.library.register_fake``) an :class:`OpDecl` registers:

* the schema ``<domain>::<Name>(Tensor a, ..., int attr=default, ...) -> (Tensor, ...)``;
* the pure-PyTorch kernel as ``CompositeExplicitAutograd`` (any device: the kernels create
  their tensors on the input's device), and a backward when the declaration has one;
* a fake kernel for ``torch.export`` (output shapes; a data-dependent size is an unbacked
  symbol from ``torch.library.get_ctx().new_dynamic_size()``);
* the TorchScript exporter's symbolic (``torch.onnx.register_custom_op_symbolic``), and
* the dynamo exporter's translation, an onnxscript function writing the same node, collected
  in :func:`translation_table` for ``torch.onnx.export(..., custom_translation_table=...)``.

Both exporters therefore write one ``<domain>::<Name>`` node with the same attributes.  On torch
1.13 nothing is registered here: the autograd Functions' ``symbolic`` serves the TorchScript
exporter (the only one there).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

__all__ = ["Attr", "OpDecl", "available", "register", "translation_table", "declarations", "write_node",
           "dynamic_size"]

# schema type and TorchScript attribute suffix of each attribute kind
_KINDS = {"int": ("int", "i"), "float": ("float", "f"), "ints": ("int[]", "i"), "floats": ("float[]", "f"),
          "str": ("str", "s")}


@dataclasses.dataclass(frozen=True)
class Attr:
    """An attribute: ``kind`` is int, float, ints, floats or str.  ``omit_default``: the node
    carries the attribute only when its value differs from ``default``."""
    name: str
    kind: str
    default: Any = None
    omit_default: bool = False

    def schema(self) -> str:
        s = f"{_KINDS[self.kind][0]} {self.name}"
        if self.default is not None:
            d = self.default
            s += "=" + (f'"{d}"' if self.kind == "str" else repr(list(d)) if isinstance(d, (list, tuple)) else repr(d))
        return s

    def value(self, v: Any) -> Any:
        if self.kind == "int":
            return int(v)
        if self.kind == "float":
            return float(v)
        if self.kind in ("ints", "floats"):
            cast = int if self.kind == "ints" else float
            return [cast(x) for x in v]
        return str(v)


@dataclasses.dataclass
class OpDecl:
    """An operator: tensor inputs, attributes (in schema order, after the tensors), outputs,
    the pure-PyTorch ``kernel(*tensors, *attrs)`` and ``fake(*tensors, *attrs)`` returning
    empty tensors of the output shapes (``torch.library.get_ctx().new_dynamic_size()`` for a
    size known only from the data).  ``setup_context(ctx, inputs, output)`` and
    ``backward(ctx, *grads)`` (one gradient per schema argument) make it differentiable."""
    domain: str
    name: str
    inputs: Sequence[str]
    attrs: Sequence[Attr]
    outputs: Sequence[str]
    kernel: Callable
    fake: Callable
    setup_context: Optional[Callable] = None
    backward: Optional[Callable] = None
    optional_inputs: Sequence[str] = ()
    # inputs and attributes only the PyTorch kernel needs; the ONNX node does not carry them (the
    # runtime finds that information otherwise, e.g. an inverse SparseConv's source by its key)
    hidden: Sequence[str] = ()

    @property
    def qualname(self) -> str:
        return f"{self.domain}::{self.name}"

    def schema(self) -> str:
        args = [("Tensor? " if n in self.optional_inputs else "Tensor ") + n for n in self.inputs]
        args += [a.schema() for a in self.attrs]
        rets = "Tensor" if len(self.outputs) == 1 else "(" + ", ".join("Tensor" for _ in self.outputs) + ")"
        return f"{self.name}({', '.join(args)}) -> {rets}"

    def node_inputs(self, tensors: Sequence[Any]) -> List[Any]:
        """The tensors the ONNX node takes (hidden ones dropped), in order."""
        return [t for n, t in zip(self.inputs, tensors) if n not in self.hidden]

    def node_attributes(self, values: Sequence[Any]) -> Dict[str, Any]:
        """Attribute name -> value as the ONNX node carries them."""
        out = {}
        for a, v in zip(self.attrs, values):
            v = a.value(v)
            if a.name in self.hidden or (a.omit_default and v == a.value(a.default)):
                continue
            out[a.name] = v
        return out

    def complete(self, args: Sequence[Any], kwargs: Dict[str, Any]) -> List[Any]:
        """All schema arguments in order: the dispatcher leaves out trailing ones at their default."""
        names = list(self.inputs) + [a.name for a in self.attrs]
        defaults = [None] * len(self.inputs) + [a.default for a in self.attrs]
        return list(args) + [kwargs.get(n, d) for n, d in zip(names[len(args):], defaults[len(args):])]

    def call(self, *args):
        """Run the registered op: tensors, then the attributes (converted to their kinds)."""
        n = len(self.inputs)
        attrs = [a.value(v) for a, v in zip(self.attrs, args[n:])]
        return self.torch_op()(*args[:n], *attrs)

    def torch_op(self):
        return getattr(getattr(torch.ops, self.domain), self.name).default


_DECLS: Dict[str, OpDecl] = {}
_LIBS: Dict[str, Any] = {}


def available() -> bool:
    """True when torch has the custom-op API used here (torch >= 2.4)."""
    return hasattr(torch.library, "register_fake") and hasattr(torch.library, "register_autograd")


def declarations() -> Dict[str, OpDecl]:
    return dict(_DECLS)


def write_node(g, decl: OpDecl, tensors: Sequence[Any], attr_values: Sequence[Any]):
    """The TorchScript exporter's node: ``g.op("<domain>::<Name>", ...)`` with typed attributes."""
    kw = {}
    for name, v in decl.node_attributes(attr_values).items():
        kind = next(a.kind for a in decl.attrs if a.name == name)
        kw[f"{name}_{_KINDS[kind][1]}"] = v
    present = [t for t in decl.node_inputs(tensors) if t is not None and not _is_none(t)]
    return g.op(decl.qualname, *present, outputs=len(decl.outputs), **kw)


def _is_none(v) -> bool:
    try:
        return v.node().mustBeNone()
    except AttributeError:
        return False


def register(decl: OpDecl) -> OpDecl:
    """Record ``decl`` and, on torch >= 2.4, register it with torch.library and the exporters."""
    if decl.qualname in _DECLS:
        raise ValueError(f"{decl.qualname} is declared twice")
    _DECLS[decl.qualname] = decl
    if not available():
        return decl
    lib = _LIBS.get(decl.domain)
    if lib is None:
        lib = _LIBS[decl.domain] = torch.library.Library(decl.domain, "FRAGMENT")
    lib.define(decl.schema())
    lib.impl(decl.name, lambda *a, **kw: decl.kernel(*decl.complete(a, kw)), "CompositeExplicitAutograd")
    torch.library.register_fake(decl.qualname, lambda *a, **kw: decl.fake(*decl.complete(a, kw)), lib=lib)
    if decl.backward is not None:
        torch.library.register_autograd(decl.qualname, decl.backward, setup_context=decl.setup_context, lib=lib)
    else:  # outputs without gradient (indices, distances), as the reference's Functions mark them
        n_args = len(decl.inputs) + len(decl.attrs)
        torch.library.register_autograd(decl.qualname, lambda ctx, *grads: (None,) * n_args,
                                        setup_context=_non_differentiable, lib=lib)
    _register_torchscript_symbolic(decl)
    return decl


def _non_differentiable(ctx, inputs, output) -> None:
    outs = output if isinstance(output, (tuple, list)) else (output,)
    ctx.mark_non_differentiable(*outs)


def _register_torchscript_symbolic(decl: OpDecl) -> None:
    from torch.onnx import register_custom_op_symbolic, symbolic_helper

    n_in = len(decl.inputs)
    descriptors = [_KINDS[a.kind][1] + ("s" if a.kind in ("ints", "floats") else "") for a in decl.attrs]

    def symbolic(g, *values):
        tensors = values[:n_in]
        attrs = [symbolic_helper._maybe_get_const(v, d) for v, d in zip(values[n_in:], descriptors)]
        return write_node(g, decl, tensors, attrs)

    register_custom_op_symbolic(decl.qualname, symbolic, 1)


_ONNX_ATTR_TYPES = {"int": "INT", "float": "FLOAT", "ints": "INTS", "floats": "FLOATS", "str": "STRING"}
_ONNX_TENSOR_TYPES = [f"tensor({t})" for t in ("float", "double", "float16", "bfloat16", "int8", "uint8", "int16",
                                                  "int32", "int64", "bool")]


def _register_onnx_schema(decl: OpDecl) -> None:
    """An ONNX OpSchema for the node (onnxscript builds nodes from schemas; onnx.checker then
    checks the node's inputs, outputs and attribute types too)."""
    from onnx import defs
    try:
        defs.get_schema(decl.name, 1, decl.domain)
        return
    except Exception:  # noqa: BLE001 - not registered yet
        pass
    param = defs.OpSchema.FormalParameter
    option = defs.OpSchema.FormalParameterOption
    inputs = [param(n, f"T{i}", "", param_option=option.Optional if n in decl.optional_inputs else option.Single)
              for i, n in enumerate(decl.node_inputs(decl.inputs))]
    outputs = [param(n, f"O{i}", "") for i, n in enumerate(decl.outputs)]
    constraints = [(f"T{i}", _ONNX_TENSOR_TYPES, "") for i in range(len(inputs))]
    constraints += [(f"O{i}", _ONNX_TENSOR_TYPES, "") for i in range(len(decl.outputs))]
    attributes = [defs.OpSchema.Attribute(a.name, getattr(defs.OpSchema.AttrType, _ONNX_ATTR_TYPES[a.kind]), "",
                                          required=a.default is None) for a in decl.attrs if a.name not in decl.hidden]
    defs.register_schema(defs.OpSchema(decl.name, decl.domain, 1, inputs=inputs, outputs=outputs,
                                       type_constraints=constraints, attributes=attributes))


def _onnxscript_translation(decl: OpDecl) -> Callable:
    import onnxscript

    _register_onnx_schema(decl)
    opset = onnxscript.values.Opset(decl.domain, 1)
    n_in = len(decl.inputs)

    def translate(*args, **kwargs):
        values = decl.complete(args, kwargs)
        tensors = [t for t in decl.node_inputs(values[:n_in]) if t is not None]
        op = getattr(opset, decl.name)
        outputs = op(*tensors, **decl.node_attributes(values[n_in:]))
        _set_output_types(decl, values, outputs)
        return outputs

    translate.__name__ = decl.name
    return translate


def _set_output_types(decl: OpDecl, values: List[Any], outputs) -> None:
    """Give the node's outputs their dtype (and the shape when the inputs' shapes are static):
    the exporter's optimizer folds constants against them (an untyped output made it cast
    ``x + 1e-8`` to an integer type and drop the addition)."""
    import numpy as np
    import onnx_ir as ir

    n_in = len(decl.inputs)
    metas, static = [], True
    _TYPE_PASS["dynamic"] = False
    for v in values[:n_in]:
        if v is None:
            metas.append(None)
            continue
        dims = [d if isinstance(d, int) else 2 for d in v.shape]
        static &= all(isinstance(d, int) for d in v.shape)
        metas.append(torch.empty(dims, dtype=_torch_dtype(v.dtype), device="meta"))
    _TYPE_PASS["active"] = True
    try:
        with torch.device("meta"):
            fakes = decl.fake(*metas, *values[n_in:])
    finally:
        _TYPE_PASS["active"] = False
    static &= not _TYPE_PASS["dynamic"]
    fakes = fakes if isinstance(fakes, (tuple, list)) else (fakes,)
    outs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    for out, fake in zip(outs, fakes):
        out.dtype = ir.DataType.from_numpy(np.dtype(str(fake.dtype).replace("torch.", "")))
        if static:
            out.shape = ir.Shape(list(fake.shape))


# Set while _set_output_types runs a fake kernel by hand (outside torch's fake-tensor context).
_TYPE_PASS = {"active": False, "dynamic": False}


def dynamic_size(max_size: Optional[int] = None):
    """In a fake kernel: a size known only from the data (the voxel count, the sparse output
    sites), an unbacked symbol of torch.export. ``max_size`` bounds it when known."""
    if _TYPE_PASS["active"]:  # the output-type pass of the dynamo translation: any placeholder
        _TYPE_PASS["dynamic"] = True
        return 1
    ctx = torch.library.get_ctx()
    return ctx.new_dynamic_size(max=max_size) if max_size is not None else ctx.new_dynamic_size()


def _torch_dtype(dtype) -> torch.dtype:
    return getattr(torch, dtype.numpy().name)


def translation_table(domains: Optional[Sequence[str]] = None) -> Dict[Any, Callable]:
    """``{torch op overload: onnxscript translation}`` for the dynamo exporter."""
    if not available():
        return {}
    return {d.torch_op(): _onnxscript_translation(d) for d in _DECLS.values()
            if domains is None or d.domain in domains}
