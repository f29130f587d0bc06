"""models/: the shape generator, and the example networks export with the expected pointrt
nodes and a dynamic point axis."""

import numpy as np
import onnx
import pytest
import torch

import pointrt
from models.shapes import CLASSES, make_dataset, make_shape


def test_shapes_deterministic_and_normalised():
    X1, y1 = make_dataset(3, 128, seed=7)
    X2, y2 = make_dataset(3, 128, seed=7)
    assert X1.shape == (15, 128, 3) and X1.dtype == np.float32
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    assert sorted(np.bincount(y1)) == [3] * len(CLASSES)
    r = np.linalg.norm(X1, axis=2)
    np.testing.assert_allclose(r.max(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(X1.mean(axis=1), 0.0, atol=1e-5)
    assert not np.array_equal(make_dataset(3, 128, seed=8)[0], X1)


def test_shapes_are_surfaces():
    rng = np.random.default_rng(0)
    sphere = make_shape(0, 2000, rng, noise=0.0, scale_jitter=0.0)
    r = np.linalg.norm(sphere, axis=1)       # about the sample centroid, so not exactly 1
    assert r.max() == pytest.approx(1.0) and r.min() > 0.85 and r.std() < 0.04
    box = make_shape(1, 2000, rng, noise=0.0, scale_jitter=0.0)
    assert np.linalg.norm(box, axis=1).std() > 0.05


def count(path):
    m = onnx.load(path)
    onnx.checker.check_model(m)
    nodes = {}
    for n in m.graph.node:
        if n.domain == "pointrt":
            nodes[n.op_type] = nodes.get(n.op_type, 0) + 1
    return m, nodes


@pytest.mark.parametrize("full", [False, True])
def test_pvn3d_pointnet2_export(tmp_path, full):
    from models.pvn3d_pointnet2 import NUM_POINTS, Pointnet2MSG, example_input
    torch.manual_seed(0)
    model = Pointnet2MSG(input_channels=6).eval()
    npoints = [2048, 1024, 512, 128]
    if not full:                     # same modules and attributes, fewer centres: a short test
        npoints = [128, 64, 32, 16]
        for sa, n in zip(model.SA_modules, npoints):
            sa.npoint = n
    x = example_input(NUM_POINTS if full else 384)
    path = str(tmp_path / "pvn3d.onnx")
    rep = pointrt.export(model, (x,), path, input_names=["pointcloud"],
                         output_names=["features"], verify=full, quiet=not full)
    m, nodes = count(path)
    assert nodes == {"FurthestPointSample": 4, "GatherPoints": 4, "BallQuery": 8,
                     "GroupPoints": 16, "ThreeNN": 4, "ThreeInterpolate": 4}
    fps = [n for n in m.graph.node if n.op_type == "FurthestPointSample"]
    assert [a.i for n in fps for a in n.attribute if a.name == "npoint"] == npoints
    assert all(a.i == 1 for n in fps for a in n.attribute if a.name == "ignore_origin")
    radii = sorted({round(a.f, 4) for n in m.graph.node if n.op_type == "BallQuery"
                    for a in n.attribute if a.name == "radius"})
    assert radii == [0.0175, 0.025, 0.05, 0.1, 0.2]
    assert m.graph.input[0].type.tensor_type.shape.dim[1].dim_param == "num_points"
    assert m.graph.output[0].type.tensor_type.shape.dim[2].dim_param == "num_points"
    assert rep.size_bytes > 10e6   # ~3M float parameters


def test_ssg_classifier_export(tmp_path):
    from models.pointnet2_ssg_cls import Pointnet2SSGCls
    model = Pointnet2SSGCls(num_classes=10, width=0.25, npoints=(64, 16), nsamples=(16, 16))
    model.eval()
    path = str(tmp_path / "ssg.onnx")
    pointrt.export(model, (torch.rand(1, 256, 3) * 2 - 1,), path, input_names=["points"],
                   output_names=["logits"], verify=False, quiet=True)
    _, nodes = count(path)
    # the group-all level writes no pointrt node; use_xyz without features: 1 GroupPoints
    assert nodes == {"FurthestPointSample": 2, "GatherPoints": 2, "BallQuery": 2,
                     "GroupPoints": 3}


def test_msg_segmenter_shapes_and_export(tmp_path):
    from models.pointnet2_msg_seg import Pointnet2MSGSeg
    model = Pointnet2MSGSeg(num_classes=4, npoints=(64, 32, 16, 8)).eval()
    x = torch.cat([torch.rand(1, 256, 3) * 2 - 1, torch.rand(1, 256, 6)], -1)
    with torch.no_grad():
        assert model(x).shape == (1, 256, 4)
    path = str(tmp_path / "seg.onnx")
    pointrt.export(model, (x,), path, input_names=["points"], output_names=["logits"],
                   verify=False, quiet=True)
    m, nodes = count(path)
    assert nodes["ThreeNN"] == 4 and nodes["BallQuery"] == 8
    assert m.graph.output[0].type.tensor_type.shape.dim[1].dim_param == "num_points"
