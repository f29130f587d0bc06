#!/usr/bin/env python3
"""Write a small scn.onnx in NVIDIA's CUDA-CenterPoint / 3DSparseConvolution format.

The file mimics what NVIDIA's exptool.py writes (default-domain SparseConvolution and
ScatterDense nodes that no ONNX checker accepts, float16 weights, Reshape/Transpose with a `dims`
attribute) so that pointrt's scn.onnx import (src/graph/scn_import.cc) can be tried without the
original PyTorch model:

    .venv/bin/python scripts/make_scn_onnx.py /tmp/scn.onnx
    build/pointrt inspect /tmp/scn.onnx        # shows "note: rewritten from NVIDIA scn.onnx: ..."

Network (spatial shape z, y, x = [9, 32, 32], 4 input channels, 16 features):
  subm(subm1, ReLU) -> subm(subm1) -> Add -> Relu -> spconv(stride 2, key spconv2, ReLU)
  -> inverse(spconv2) -> Add -> ScatterDense -> Transpose(dims) -> Reshape(dims)
"""
import sys

import numpy as np
import onnx
from onnx import helper

SHAPE = [9, 32, 32]
DOWN = [5, 16, 16]
CIN, C = 4, 16

rng = np.random.default_rng(0)
initializers = []
nodes = []


def half_initializer(name, shape):
    value = (rng.standard_normal(shape) * 0.2).astype(np.float16)
    initializers.append(helper.make_tensor(name, onnx.TensorProto.FLOAT16, list(shape), value.tobytes(), raw=True))
    return name


def sparse_conv(name, x, y, cin, cout, in_shape, out_shape, subm, inverse, key, act, stride, padding):
    w = half_initializer(f"{name}.weight", [cout, 3, 3, 3, cin])
    b = half_initializer(f"{name}.bias", [cout])
    # Every attribute NVIDIA's exporter writes, including the ones the runtime ignores.
    nodes.append(helper.make_node(
        "SparseConvolution", [x, w, b], [y], name,
        ndim=3, input_spatial_shape=in_shape, output_spatial_shape=out_shape,
        in_channels=cin, out_channels=cout, kernel_size=[3, 3, 3], output_bound=200000,
        stride=stride, dilation=[1, 1, 1], padding=padding, transposed=inverse, inverse=inverse,
        output_padding=[0, 0, 0], groups=1, subm=subm, rulebook=key, activation=act,
        input_shape=[-1, cin], output_shape=[-1, cout]))


def main(path):
    sparse_conv("conv0", "0", "1", CIN, C, SHAPE, SHAPE, 1, 0, "subm1", "ReLU", [1, 1, 1], [0, 0, 0])
    sparse_conv("conv1", "1", "2", C, C, SHAPE, SHAPE, 1, 0, "subm1", "None", [1, 1, 1], [0, 0, 0])
    nodes.append(helper.make_node("Add", ["2", "1"], ["3"], "add0"))
    nodes.append(helper.make_node("Relu", ["3"], ["4"], "relu0"))
    sparse_conv("conv2", "4", "5", C, C, SHAPE, DOWN, 0, 0, "spconv2", "ReLU", [2, 2, 2], [1, 1, 1])
    sparse_conv("conv3", "5", "6", C, C, DOWN, SHAPE, 0, 1, "spconv2", "None", [1, 1, 1], [0, 0, 0])
    nodes.append(helper.make_node("Add", ["6", "4"], ["7"], "add1"))
    nodes.append(helper.make_node("ScatterDense", ["7"], ["8"], "scatter0", input_spatial_shape=SHAPE,
                                  format="zyx", output_shape=[1, C] + SHAPE))
    nodes.append(helper.make_node("Transpose", ["8"], ["9"], "transpose0", dims=[0, 1, 2, 4, 3]))
    nodes.append(helper.make_node("Reshape", ["9"], ["10"], "reshape0", dims=[1, C * SHAPE[0], SHAPE[2], SHAPE[1]]))
    inputs = [helper.make_tensor_value_info("0", onnx.TensorProto.FLOAT16, [1000, CIN])]
    outputs = [helper.make_tensor_value_info("10", onnx.TensorProto.FLOAT16, [1, C * SHAPE[0], SHAPE[2], SHAPE[1]])]
    graph = helper.make_graph(nodes, "scn", inputs, outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_operatorsetid("ai.onnx", 11)],
                              producer_name="pytorch", producer_version="1.9")
    model.ir_version = 7
    onnx.save_model(model, path)  # no onnx.checker: these nodes are not valid ONNX, as in NVIDIA's files
    print(f"wrote {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "scn.onnx")
