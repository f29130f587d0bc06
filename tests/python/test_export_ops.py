"""Each pointrt op exports to one ``pointrt`` node with OPS.md's attributes; files pass
onnx.checker."""
import os

import numpy as np
import onnx
import pytest
import torch
from onnx import helper

from pointrt.torch import ops
from pointrt.torch.pointnet2 import pointnet2_utils as pu


class Wrap(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *a):
        return self.fn(*a)


def export_one(tmp_path, fn, args, n_out=1, opset=17):
    path = os.path.join(tmp_path, "op.onnx")
    names_in = [f"in{i}" for i in range(len(args))]
    names_out = [f"out{i}" for i in range(n_out)]
    import pointrt
    pointrt.export(Wrap(fn), tuple(args), path, input_names=names_in, output_names=names_out,
                   opset=opset, verify=False, quiet=True)
    model = onnx.load(path)
    onnx.checker.check_model(model)
    assert {(o.domain, o.version) for o in model.opset_import} >= {("pointrt", 1), ("", opset)}
    nodes = [n for n in model.graph.node if n.domain == "pointrt"]
    return model, nodes


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


XYZ = torch.rand(2, 32, 3)
NEW = torch.rand(2, 8, 3)
F = torch.rand(2, 4, 32)


@pytest.mark.parametrize("ignore_origin", [0, 1])
def test_export_fps(tmp_path, ignore_origin):
    _, nodes = export_one(tmp_path, lambda x: ops.furthest_point_sample(x, 8, ignore_origin),
                          [XYZ])
    assert [n.op_type for n in nodes] == ["FurthestPointSample"]
    assert attrs(nodes[0]) == {"npoint": 8, "ignore_origin": ignore_origin}


def test_export_ball_query(tmp_path):
    _, nodes = export_one(tmp_path, lambda x, c: ops.ball_query(x, c, 0.3, 16), [XYZ, NEW])
    assert [n.op_type for n in nodes] == ["BallQuery"]
    a = attrs(nodes[0])
    assert a["nsample"] == 16 and a["radius"] == pytest.approx(0.3) and "min_radius" not in a
    assert list(nodes[0].input) == ["in0", "in1"]
    _, nodes = export_one(tmp_path, lambda x, c: ops.ball_query(x, c, 0.3, 4, 0.1), [XYZ, NEW])
    assert attrs(nodes[0])["min_radius"] == pytest.approx(0.1)


def test_export_reference_argument_order(tmp_path):
    # pointnet2_utils.ball_query(radius, nsample, xyz, new_xyz) writes xyz first
    _, nodes = export_one(tmp_path, lambda x, c: pu.ball_query(0.2, 8, x, c), [XYZ, NEW])
    assert list(nodes[0].input) == ["in0", "in1"]
    _, nodes = export_one(tmp_path, lambda x: pu.furthest_point_sample(x, 4), [XYZ])
    assert attrs(nodes[0]) == {"npoint": 4, "ignore_origin": 1}


def test_export_gathers(tmp_path):
    idx2 = torch.randint(0, 32, (2, 8), dtype=torch.int32)
    idx3 = torch.randint(0, 32, (2, 8, 5), dtype=torch.int32)
    for fn, args, op in [(ops.gather_points, [F, idx2], "GatherPoints"),
                         (ops.group_points, [F, idx3], "GroupPoints")]:
        m, nodes = export_one(tmp_path, fn, args)
        assert [n.op_type for n in nodes] == [op] and attrs(nodes[0]) == {}
        assert m.graph.input[1].type.tensor_type.elem_type == onnx.TensorProto.INT32


def test_export_three_nn_interpolate(tmp_path):
    def fp(unknown, known, feats):
        dist, idx = ops.three_nn(unknown, known)
        r = 1.0 / (dist + 1e-8)
        w = r / torch.sum(r, dim=2, keepdim=True)
        return ops.three_interpolate(feats, idx, w), idx

    m, nodes = export_one(tmp_path, fp, [XYZ, NEW, torch.rand(2, 4, 8)], n_out=2)
    assert [n.op_type for n in nodes] == ["ThreeNN", "ThreeInterpolate"]
    assert len(nodes[0].output) == 2
    out_types = {o.name: o.type.tensor_type.elem_type for o in m.graph.output}
    assert out_types["out1"] == onnx.TensorProto.INT32
    assert out_types["out0"] == onnx.TensorProto.FLOAT


def test_export_knn(tmp_path):
    m, nodes = export_one(tmp_path, lambda x, c: ops.knn(x, c, 5), [XYZ, NEW], n_out=2)
    assert [n.op_type for n in nodes] == ["KNN"] and attrs(nodes[0]) == {"k": 5}
    out_types = [o.type.tensor_type.elem_type for o in m.graph.output]
    assert out_types == [onnx.TensorProto.INT32, onnx.TensorProto.FLOAT]


def test_export_lower_opset(tmp_path):
    _, nodes = export_one(tmp_path, lambda x: ops.furthest_point_sample(x, 4), [XYZ], opset=13)
    assert nodes[0].op_type == "FurthestPointSample"
