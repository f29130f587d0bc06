"""ONNX Runtime as the reference of ``pointrt.compare``: every value of the same file.

As Polygraphy's ``--onnx-outputs mark all``: each node output whose type ONNX shape inference
knows becomes a graph output of a copy of the model, which ONNX Runtime (CPU) runs once.
"""
from typing import Dict

import numpy as np

__all__ = ["onnxruntime_values"]


def onnxruntime_values(path: str, feeds: Dict[str, np.ndarray]) -> Dict[str, np.ndarray]:
    import onnx
    import onnxruntime as ort
    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    typed = {vi.name: vi for vi in list(model.graph.value_info) + list(model.graph.output)}
    present = {o.name for o in model.graph.output}
    for n in model.graph.node:
        for v in n.output:
            if v and v not in present and v in typed and typed[v].type.tensor_type.elem_type:
                model.graph.output.append(typed[v])
                present.add(v)
    options = ort.SessionOptions()
    # the file as it is: ORT's fusions would drop the very values we ask for
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    wanted = {i.name for i in sess.get_inputs()}
    return dict(zip(names, sess.run(None, {k: v for k, v in feeds.items() if k in wanted})))
