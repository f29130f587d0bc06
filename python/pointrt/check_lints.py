"""Lints of ``pointrt check``: settings a deployed file rarely means, each naming the node and a fix."""
import hashlib
from typing import Dict, List

import numpy as np

__all__ = ["lints"]


def _attr(node, name, default=None):
    from onnx import helper
    for a in node.attribute:
        if a.name == name:
            v = helper.get_attribute_value(a)
            return v.decode() if isinstance(v, bytes) else v
    return default


def _const_array(g, value):
    from onnx import numpy_helper
    if value in g.initializers:
        return numpy_helper.to_array(g.initializers[value])
    for n in g.model.graph.node:
        if n.op_type == "Constant" and n.output and n.output[0] == value:
            for a in n.attribute:
                if a.name == "value":
                    return numpy_helper.to_array(a.t)
    return None


def _training(model, g) -> List[str]:
    out = []
    for n in model.graph.node:
        if n.op_type == "BatchNormalization" and _attr(n, "training_mode", 0):
            out.append(f"node '{n.name}' (BatchNormalization) is in training mode: it normalises with the batch's "
                       "statistics, not the running ones; fix: export after model.eval()")
        if n.op_type == "Dropout" and len(n.input) > 2 and n.input[2]:
            c = _const_array(g, n.input[2])
            if c is None or bool(c.reshape(-1)[0]):
                out.append(f"node '{n.name}' (Dropout) may run in training mode (training_mode input "
                           f"'{n.input[2]}'); fix: export after model.eval()")
    return out


def _resize(model) -> List[str]:
    out = []
    for n in model.graph.node:
        if n.op_type not in ("Resize", "Upsample"):
            continue
        mode = _attr(n, "mode", "nearest")
        ctm = _attr(n, "coordinate_transformation_mode", "half_pixel" if n.op_type == "Resize" else "asymmetric")
        if mode in ("linear", "cubic") and ctm in ("asymmetric", "tf_half_pixel_for_nn"):
            out.append(f"node '{n.name}' ({n.op_type}) is {mode} with coordinate_transformation_mode={ctm}: "
                       "PyTorch's interpolate writes half_pixel/pytorch_half_pixel (align_corners=False) or "
                       "align_corners; fix: re-export, or set the mode the model was trained with")
        elif mode == "nearest" and ctm not in ("asymmetric",) and _attr(n, "nearest_mode", "round_prefer_floor") \
                == "round_prefer_floor":
            out.append(f"node '{n.name}' ({n.op_type}) is nearest with {ctm} and nearest_mode=round_prefer_floor: "
                       "PyTorch's nearest is asymmetric + floor; fix: check the exporter's settings")
    return out


def _baked_sizes(model, g, dims: Dict[str, int]) -> List[str]:
    """A Reshape shape, Expand/Tile size or pool kernel equal to a dynamic input dimension's traced size."""
    dynamic = {}
    for i in model.graph.input:
        for k, d in enumerate(i.type.tensor_type.shape.dim):
            if d.dim_param and d.dim_param in dims:
                dynamic[dims[d.dim_param]] = f"input '{i.name}' dimension {k} ('{d.dim_param}')"
    out = []
    if not dynamic:
        return out
    for n in model.graph.node:
        sizes = []
        if n.op_type in ("Reshape", "Expand", "Tile") and len(n.input) > 1:
            c = _const_array(g, n.input[1])
            sizes = [] if c is None else [int(v) for v in c.reshape(-1)]
        elif n.op_type in ("MaxPool", "AveragePool"):
            sizes = list(_attr(n, "kernel_shape", []))
        for v in sizes:
            if v in dynamic and v > 1:
                out.append(f"node '{n.name}' ({n.op_type}) has the size {v} baked in, the traced size of "
                           f"{dynamic[v]}, which is dynamic; fix: compute it from the input's shape (x.shape[k] "
                           "kept as a tensor, or -1 in a Reshape) or make the dimension static")
    return out


def _scatter_order(model, g) -> List[str]:
    producers = {o: n for n in model.graph.node for o in n.output}
    out = []
    for n in model.graph.node:
        if not (n.domain == "pointrt" and n.op_type == "ScatterDense"):
            continue
        shape = list(_attr(n, "spatial_shape", []))
        v, hops = n.input[1], 0
        while v in producers and hops < 16:
            p = producers[v]
            if p.op_type == "Gather" and _attr(p, "axis", 0) == 1:
                perm = _const_array(g, p.input[1])
                if perm is not None and perm.reshape(-1).tolist() not in ([0, 1, 2, 3],):
                    out.append(f"node '{n.name}' (ScatterDense) reads indices reordered by '{p.name}' "
                               f"(columns {perm.reshape(-1).tolist()}); Voxelize and SparseConv keep (b, z, y, x) in "
                               f"the order of spatial_shape {shape}; fix: drop the reorder or reorder spatial_shape")
                break
            if p.domain == "pointrt" and p.op_type in ("Voxelize", "SparseConv"):
                break
            v, hops = (p.input[0] if p.input else ""), hops + 1
        if len(shape) == 3 and shape[0] > shape[2]:
            out.append(f"node '{n.name}' (ScatterDense) has spatial_shape {shape}: its first axis is larger than "
                       "the last, as x would be for a LiDAR grid given as (x, y, z); OPS.md orders it as the "
                       "indices (z, y, x for CenterPoint); fix: check the index order against the spatial shape")
    return out


def _unused_and_duplicates(model) -> List[str]:
    from onnx import numpy_helper
    read = {v for n in model.graph.node for v in n.input}
    for n in model.graph.node:  # subgraph bodies read outer values too
        for a in n.attribute:
            if a.g is not None:
                read |= {v for m in a.g.node for v in m.input}
    outputs = {o.name for o in model.graph.output}
    out = [f"initializer '{t.name}' is not used by any node; fix: remove it (onnx.utils, onnxsim)"
           for t in model.graph.initializer if t.name not in read and t.name not in outputs]
    groups: Dict[str, List[str]] = {}
    for t in model.graph.initializer:
        a = numpy_helper.to_array(t)
        if a.size >= 16:
            groups.setdefault(hashlib.sha1(a.tobytes() + str((a.dtype, a.shape)).encode()).hexdigest(), []).append(
                t.name)
    out += [f"initializers {', '.join(repr(n) for n in names)} hold the same values; fix: share one (onnxsim "
            "deduplicates)" for names in groups.values() if len(names) > 1]
    return out


def lints(model, g, kind: str, table: dict, dims: Dict[str, int]) -> List[str]:
    from .fp16 import static_hazards
    out = _training(model, g) + _resize(model) + _baked_sizes(model, g, dims) + _scatter_order(model, g)
    out += _unused_and_duplicates(model)
    out += [f"float16 hazard: {h}" for h in static_hazards(model.graph)]
    opset = g.opsets.get("ai.onnx")
    limit = table.get("opset") if kind == "opset" else table.get("opset_max")
    if opset and limit and opset > limit:
        out.append(f"the file's opset {opset} is newer than {table['target']} supports ({limit}); fix: export with "
                   f"opset_version={limit} or convert with onnx.version_converter")
    return out
