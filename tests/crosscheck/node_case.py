"""Shared by the cross-check generators: one-node ONNX models and their files in the layout of
ONNX's backend node tests (model.onnx, test_data_set_0/{input,output}_N.pb)."""
import os
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
from onnx import helper, numpy_helper


def one_node_model(name: str, op: str, opset: int, inputs: Sequence[Tuple[str, Optional[np.ndarray]]],
                   attrs: dict, outs: List[str], initializers: Sequence[int] = ()):
    """inputs: (name, array or None = omitted) in the operator's order; those whose index is in
    `initializers` become initializers, the others graph inputs. Returns (model, input infos, feeds)."""
    in_infos, node_inputs, feeds, inits = [], [], {}, []
    for i, (nm, arr) in enumerate(inputs):
        if arr is None:
            node_inputs.append("")
            continue
        node_inputs.append(nm)
        if i in initializers:
            inits.append(numpy_helper.from_array(arr, nm))
        else:
            in_infos.append(helper.make_tensor_value_info(nm, helper.np_dtype_to_tensor_dtype(arr.dtype), arr.shape))
            feeds[nm] = arr
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    node = helper.make_node(op, node_inputs, outs, **attrs)
    graph = helper.make_graph([node], name, in_infos, [onnx.ValueInfoProto(name=o) for o in outs], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, in_infos, feeds


def write_case(out_dir: str, name: str, model, in_infos, feeds: Dict[str, np.ndarray], results, outs: List[str]):
    """Writes test_<name>/ with the model (outputs typed from `results`) and one data set."""
    d = os.path.join(out_dir, f"test_{name}")
    os.makedirs(os.path.join(d, "test_data_set_0"))
    for o, r in zip(model.graph.output, results):
        r = np.asarray(r)
        o.CopyFrom(helper.make_tensor_value_info(o.name, helper.np_dtype_to_tensor_dtype(r.dtype), r.shape))
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, info in enumerate(in_infos):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[info.name], info.name).SerializeToString())
    for i, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(r), outs[i]).SerializeToString())
