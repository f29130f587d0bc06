"""pointrt.export: opset selection and errors, dynamic point axis, checker, adaptive pooling."""
import os
import warnings
from collections import Counter

import numpy as np
import onnx
import pytest
import torch

import pointrt
from pointrt import ExportError
from pointrt.torch.patches import (StaticAdaptiveAvgPool2d, adaptive_avg_pool2d_static,
                                   patch_adaptive_avg_pool2d, replace_adaptive_avg_pool2d)


# plain torch.onnx.export calls: the TorchScript exporter on every torch (dynamo is the default from 2.9)
TORCHSCRIPT = {"dynamo": False} if int(torch.__version__.split(".")[0]) >= 2 else {}


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        from pointrt.torch.pointnet2 import PointnetFPModule, PointnetSAModule
        self.sa = PointnetSAModule(mlp=[0, 8], npoint=8, radius=0.5, nsample=4)
        self.fp = PointnetFPModule(mlp=[8, 4])

    def forward(self, pc):
        nx, nf = self.sa(pc, None)
        return self.fp(pc, nx, None, nf).transpose(1, 2)


def test_default_opset_is_highest_supported():
    from torch.onnx import _constants
    from pointrt.exporter import RUNTIME_MAX_OPSET
    torchscript_max = getattr(_constants, "ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET", _constants.ONNX_MAX_OPSET)
    assert pointrt.default_opset() == min(torchscript_max, onnx.defs.onnx_opset_version(), RUNTIME_MAX_OPSET)
    assert pointrt.supported_opsets()[-1] == pointrt.default_opset()


@pytest.mark.parametrize("bad", [pointrt.default_opset() + 1, 99, 3, "17"])
def test_unsupported_opset_is_a_clear_error(tmp_path, bad):
    with pytest.raises(ExportError) as ei:
        pointrt.export(Tiny(), torch.rand(1, 16, 3), str(tmp_path / "x.onnx"),
                       input_names=["pc"], output_names=["y"], opset=bad, verify=False)
    msg = str(ei.value)
    assert f"opset {bad!r}" in msg and "not supported by the installed PyTorch" in msg
    assert str(pointrt.default_opset()) in msg
    assert ei.value.__cause__ is None and ei.value.__suppress_context__
    assert not (tmp_path / "x.onnx").exists()


def test_export_marks_point_axis_dynamic(tmp_path):
    path = str(tmp_path / "tiny.onnx")
    rep = pointrt.export(Tiny().eval(), torch.rand(1, 16, 3), path, input_names=["pc"],
                         output_names=["y"], verify=False, quiet=True)
    assert rep.opset == pointrt.default_opset()
    assert rep.pointrt_nodes == {"FurthestPointSample": 1, "GatherPoints": 1, "BallQuery": 1,
                                 "GroupPoints": 1, "ThreeNN": 1, "ThreeInterpolate": 1}
    m = onnx.load(path)
    onnx.checker.check_model(m)
    dims = m.graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_value == 1 and dims[1].dim_param == "num_points" and dims[2].dim_value == 3
    out = m.graph.output[0].type.tensor_type.shape.dim
    assert out[0].dim_value == 1 and out[1].dim_param == "num_points" and out[2].dim_value == 4
    assert rep.dynamic_axes == {"pc": {1: "num_points"}, "y": {1: "num_points"}}


def test_export_static_and_batch(tmp_path):
    path = str(tmp_path / "tiny.onnx")
    pointrt.export(Tiny().eval(), torch.rand(2, 16, 3), path, input_names=["pc"],
                   output_names=["y"], verify=False, quiet=True, dynamic_points=False,
                   dynamic_batch=True)
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert dims[0].dim_param == "batch" and dims[1].dim_value == 16


def test_output_count_mismatch(tmp_path):
    with pytest.raises(ExportError, match="returns 1 tensors but 2 output_names"):
        pointrt.export(Tiny(), torch.rand(1, 16, 3), str(tmp_path / "x.onnx"),
                       input_names=["pc"], output_names=["a", "b"], verify=False)


def test_verify_skips_only_when_runtime_absent(tmp_path, monkeypatch):
    from pointrt import runtime
    monkeypatch.setattr(runtime, "_cache", runtime.RuntimeStatus(None, False, "absent (test)"))
    with pytest.warns(UserWarning, match="verification skipped: absent"):
        rep = pointrt.export(Tiny().eval(), torch.rand(1, 16, 3), str(tmp_path / "x.onnx"),
                             input_names=["pc"], output_names=["y"], quiet=True)
    assert rep.verified is None and "absent" in rep.verify_skipped


# ------------------------------------------------------------------ adaptive pooling
class PSP(torch.nn.Module):
    """PSPNet-style pyramid: bins 1, 2, 3, 6 on a 10x14 map (3 and 6 do not divide)."""

    def __init__(self):
        super().__init__()
        self.stages = torch.nn.ModuleList(torch.nn.AdaptiveAvgPool2d(s) for s in (1, 2, 3, 6))
        self.conv = torch.nn.Conv2d(4, 4, 1)

    def forward(self, x):
        x = self.conv(x)
        return [torch.nn.functional.interpolate(s(x), size=x.shape[2:], mode="bilinear",
                                                align_corners=False) for s in self.stages]


@pytest.mark.parametrize("size,out", [((10, 14), (3, 6)), ((7, 7), (3, 2)), ((8, 8), (4, 2)),
                                      ((5, 9), (1, 1)), ((6, 6), (None, 4))])
def test_static_adaptive_pool_matches_torch(size, out):
    x = torch.randn(2, 3, *size)
    torch.testing.assert_close(adaptive_avg_pool2d_static(x, out),
                               torch.nn.functional.adaptive_avg_pool2d(x, out),
                               rtol=1e-5, atol=1e-6)


def test_plain_torch_export_fails_on_adaptive_pool(tmp_path):
    with pytest.raises(Exception, match="not factor of input size"):
        torch.onnx.export(PSP().eval(), torch.randn(1, 4, 10, 14), str(tmp_path / "a.onnx"),
                          opset_version=13, **TORCHSCRIPT)


def test_export_fixes_adaptive_pool_in_one_trace_and_onnxruntime_agrees(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    model = PSP().eval()
    forwards = []
    model.register_forward_hook(lambda *a: forwards.append(1))
    x = torch.randn(1, 4, 10, 14)
    path = str(tmp_path / "psp.onnx")
    rep = pointrt.export(model, x, path, input_names=["img"], output_names=[f"s{i}" for i in range(4)],
                         dynamic_points=False, verify=False, quiet=True)
    assert rep.adaptive_pool_patched
    assert len(forwards) == 1  # decided before tracing: one trace, and no separate reference run
    assert torch.nn.functional.adaptive_avg_pool2d is not adaptive_avg_pool2d_static
    # bins 3 and 6 on 10x14: two MatMul each, with constant averaging matrices (no nodes build them)
    graph = onnx.load(path).graph
    ops = Counter(n.op_type for n in graph.node)
    assert ops["MatMul"] == 4 and not {"ScatterND", "ConstantOfShape", "Expand"} & set(ops), ops
    constants = {i.name for i in graph.initializer} | {o for n in graph.node if n.op_type == "Constant" for o in n.output}
    assert all(any(i in constants for i in n.input) for n in graph.node if n.op_type == "MatMul")
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    got = sess.run(None, {"img": x.numpy()})
    with torch.no_grad():
        ref = model(x)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r.numpy(), rtol=1e-5, atol=1e-5)


def test_export_without_fix_gives_pointrt_error(tmp_path):
    with pytest.raises(ExportError, match="patch_adaptive_avg_pool2d"):
        pointrt.export(PSP().eval(), torch.randn(1, 4, 10, 14), str(tmp_path / "p.onnx"),
                       input_names=["img"], output_names=[f"s{i}" for i in range(4)],
                       dynamic_points=False, verify=False, fix_adaptive_pool=False)


def test_replace_adaptive_pool_modules(tmp_path):
    model = PSP().eval()
    sd = dict(model.state_dict())
    assert replace_adaptive_avg_pool2d(model) == 4
    assert all(isinstance(s, StaticAdaptiveAvgPool2d) for s in model.stages)
    assert model.state_dict().keys() == sd.keys()
    torch.onnx.export(model, torch.randn(1, 4, 10, 14), str(tmp_path / "r.onnx"),
                      opset_version=13, **TORCHSCRIPT)
    with patch_adaptive_avg_pool2d():
        torch.onnx.export(PSP().eval(), torch.randn(1, 4, 10, 14), str(tmp_path / "q.onnx"),
                          opset_version=13, **TORCHSCRIPT)


# ------------------------------------------------------------------ verification logic
class _FakeRuntime:
    """Stands in for pointrt._pointrt: returns PyTorch's outputs plus a chosen error."""

    def __init__(self, model, err):
        self.model, self.err = model, err
        outer = self

        class Session:
            def __init__(self, path):
                assert os.path.exists(path)
                self.input_names, self.output_names = ["pc"], ["y"]

            def run(self, feeds):
                with torch.no_grad():
                    y = outer.model(torch.from_numpy(feeds["pc"])).numpy()
                return {"y": y + outer.err}

        self.Session = Session


@pytest.mark.parametrize("err,ok", [(0.0, True), (1e-6, True), (0.5, False)])
def test_verify_reports_max_error(tmp_path, monkeypatch, capsys, err, ok):
    from pointrt import runtime
    model = Tiny().eval()
    monkeypatch.setattr(runtime, "_cache",
                        runtime.RuntimeStatus(_FakeRuntime(model, err), True, ""))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        rep = pointrt.export(model, torch.rand(1, 16, 3), str(tmp_path / "v.onnx"),
                             input_names=["pc"], output_names=["y"])
    assert rep.verified is ok
    assert rep.max_errors["y"] == pytest.approx(err, abs=1e-6)
    assert "y: max |pointrt - torch|" in capsys.readouterr().out
    assert any("differ from PyTorch" in str(x.message) for x in w) == (not ok)
    if not ok:
        with pytest.raises(pointrt.VerificationError):
            pointrt.export(model, torch.rand(1, 16, 3), str(tmp_path / "v.onnx"),
                           input_names=["pc"], output_names=["y"], strict=True, quiet=True)


def test_dynamic_points_only_on_point_clouds(tmp_path):
    class Two(torch.nn.Module):
        def forward(self, pc, img):
            return pc * 2, img.mean(dim=1)

    path = str(tmp_path / "two.onnx")
    rep = pointrt.export(Two(), (torch.rand(1, 20, 3), torch.rand(1, 3, 8, 6)), path,
                         input_names=["pc", "img"], output_names=["a", "b"], verify=False,
                         quiet=True)
    assert rep.dynamic_axes == {"pc": {1: "num_points"}, "a": {1: "num_points"}}
    rep = pointrt.export(Two(), (torch.rand(1, 20, 3), torch.rand(1, 3, 8, 6)), path,
                         input_names=["pc", "img"], output_names=["a", "b"], verify=False,
                         quiet=True, point_axes={"pc": None, "img": 2})
    assert rep.dynamic_axes == {"img": {2: "num_points"}, "b": {1: "num_points"}}


def test_each_cloud_input_has_its_own_point_symbol(tmp_path):
    from pointrt.torch import ops

    class BQ(torch.nn.Module):
        def forward(self, xyz, centres):
            return ops.ball_query(xyz, centres, 0.3, 4)

    path = str(tmp_path / "bq.onnx")
    rep = pointrt.export(BQ(), (torch.rand(1, 20, 3), torch.rand(1, 7, 3)), path,
                         input_names=["xyz", "centres"], output_names=["idx"], verify=False,
                         quiet=True)
    # the output's axis 1 comes from the centres (data flow through BallQuery)
    assert rep.dynamic_axes == {"xyz": {1: "num_points"}, "centres": {1: "num_points_centres"},
                                "idx": {1: "num_points_centres"}}
    dims = [i.type.tensor_type.shape.dim[1].dim_param for i in onnx.load(path).graph.input]
    assert dims == ["num_points", "num_points_centres"]
