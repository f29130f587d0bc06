"""The models of issue 9's export matrix (scripts/export_matrix.py, docs/export-matrix.md), built
once here for the matrix and the end-to-end tests: each case is a model in eval mode with
randomised BatchNorm statistics, the inputs to trace with, a second frame to compare on, and the
arguments ``pointrt.export`` needs.

Sizes: "ci" are the reduced sizes the tests use; "full" the published sizes."""
from __future__ import annotations

import dataclasses
import importlib.util
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[1]
Inputs = Tuple[torch.Tensor, ...]


@dataclasses.dataclass
class Case:
    model: nn.Module
    inputs: Inputs                      # traced by the exporter
    check_inputs: Inputs                # another frame, for the comparison with PyTorch
    input_names: List[str]
    output_names: List[str]
    size: str                           # what was exported, in words
    export_kwargs: Dict[str, Any] = dataclasses.field(default_factory=dict)
    plugins: List[str] = dataclasses.field(default_factory=list)
    pointrt_nodes: Dict[str, int] = dataclasses.field(default_factory=dict)  # counts the file must have
    cleanup: Optional[Callable[[], None]] = None


def cloud(n: int, channels: int, seed: int) -> torch.Tensor:
    """[1, n, 3 + channels]: a PVN3D-scale scene (metres), extra channels uniform in [0, 1)."""
    g = torch.Generator().manual_seed(seed)
    xyz = torch.rand(1, n, 3, generator=g) * 0.3 - 0.15
    return torch.cat([xyz, torch.rand(1, n, channels, generator=g)], -1) if channels else xyz


def randomize_bn(model: nn.Module) -> nn.Module:
    g = torch.Generator().manual_seed(1)
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return model.eval()


def _pointnet2_ctors() -> Dict[str, Tuple[Callable[[], nn.Module], int, int, float]]:
    from models.pointnet2_msg_seg import Pointnet2MSGSeg
    from models.pointnet2_ssg_cls import Pointnet2SSGCls
    from models.pvn3d_pointnet2 import NUM_POINTS, Pointnet2MSG
    # name: (constructor, published points, extra channels, xyz scale)
    return {"ssg_classifier": (lambda: Pointnet2SSGCls(num_classes=40), 1024, 0, 1.0 / 0.15),
            "msg_segmenter": (lambda: Pointnet2MSGSeg(num_classes=13), 4096, 6, 1.0 / 0.15),
            "pvn3d_point_branch": (lambda: Pointnet2MSG(input_channels=6), NUM_POINTS, 6, 1.0)}


POINTNET2_CI_POINTS = {"pvn3d_point_branch": 4096}  # its first level samples 2048


def pointnet2_input(name: str, n: int, seed: int) -> torch.Tensor:
    _, _, channels, scale = _pointnet2_ctors()[name]
    x = cloud(n, channels, seed)
    x[..., :3] *= scale
    return x


def pointnet2_model(name: str) -> nn.Module:
    torch.manual_seed(0)
    return randomize_bn(_pointnet2_ctors()[name][0]())


def _pointnet2_case(name: str, size: str) -> Case:
    n = _pointnet2_ctors()[name][1]
    if size == "ci":
        n = POINTNET2_CI_POINTS.get(name, n)
    return Case(pointnet2_model(name), (pointnet2_input(name, n, 0),), (pointnet2_input(name, n, 7),), ["points"],
                ["out"], f"{n} points")


def _pvn3d_full_case(size: str) -> Case:
    from models import pvn3d_full as P
    points, image = (2048, (96, 128)) if size == "ci" else (P.NUM_POINTS, P.IMAGE_SIZE)
    return Case(P.build(points), P.example_inputs(points, image), P.example_inputs(points, image, seed=5),
                list(P.INPUT_NAMES), list(P.OUTPUT_NAMES), f"{points} points, {image[0]}x{image[1]} image",
                export_kwargs=dict(dynamic_points=False), pointrt_nodes={"FurthestPointSample": 4, "BallQuery": 8})


def _sparse_case(name: str) -> Case:
    from models import sparse_detectors as sd
    from models.lidar_synth import synth_scan
    ctor, preset = {"second_kitti": (sd.second_kitti, "kitti"),
                    "centerpoint_nuscenes": (sd.centerpoint_nuscenes, "nuscenes")}[name]
    torch.manual_seed(0)
    model = sd.randomize_batchnorm(ctor()).eval()
    scan, other = (torch.from_numpy(synth_scan(preset, seed=s, boxes=b)) for s, b in ((0, 40), (3, 25)))
    return Case(model, (scan,), (other,), ["points"], list(sd.OUTPUT_NAMES),
                f"{preset} scan, {scan.shape[0]} points, {model.max_voxels} voxels at most",
                export_kwargs=dict(point_axes={"points": 0}))


YANX27_CI_NPOINTS = (128, 64, 32, 8)


def _yanx27_case(size: str) -> Case:
    from models import yanx27_pointnet2 as y
    from pointrt.torch.adopt import adopt
    points, kwargs = (256, dict(npoints=YANX27_CI_NPOINTS)) if size == "ci" else (4096, {})
    torch.manual_seed(0)
    model = y.randomize_batchnorm(y.MODELS["sem_seg"](**kwargs))
    adopt(model, quiet=True)
    npoints = kwargs.get("npoints", "published")
    return Case(model, y.example_inputs("sem_seg", points), y.example_inputs("sem_seg", points, seed=9), ["points"],
                ["log_probs", "features"], f"sem_seg, {points} points, FPS samples {npoints}",
                cleanup=lambda: adopt(model, undo=True))


def custom_op_example() -> Any:
    """examples/custom_op/export_point_norm.py as a module."""
    spec = importlib.util.spec_from_file_location("export_point_norm", ROOT / "examples/custom_op/export_point_norm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def example_plugin() -> Path:
    return Path(os.environ.get("POINTRT_PLUGIN_DIR", ROOT / "build" / "plugins")) / "libpoint_norm_plugin.so"


def extension_build_dir() -> Path:
    return ROOT / "build" / "torch_extensions" / torch.__version__.replace("+", "_")


def _custom_op_case(size: str) -> Case:
    example = custom_op_example()
    point_norm = example.declare(example.build_extension(str(extension_build_dir())))
    torch.manual_seed(0)
    model = example.FeatureNorms(point_norm).eval()
    return Case(model, (torch.randn(2, 1024, 3),), (torch.randn(2, 1024, 3),), ["points"], ["y"],
                "example::PointNorm after an MLP, 2 x 1024 points", plugins=[str(example_plugin())])


CASES: Dict[str, Callable[[str], Case]] = {
    "ssg_classifier": lambda size: _pointnet2_case("ssg_classifier", size),
    "msg_segmenter": lambda size: _pointnet2_case("msg_segmenter", size),
    "pvn3d_point_branch": lambda size: _pointnet2_case("pvn3d_point_branch", size),
    "pvn3d_full": _pvn3d_full_case,
    "second_kitti": lambda size: _sparse_case("second_kitti"),
    "centerpoint_nuscenes": lambda size: _sparse_case("centerpoint_nuscenes"),
    "yanx27_sem_seg_adopted": _yanx27_case,
    "custom_op_example": _custom_op_case,
}


def names() -> Sequence[str]:
    return list(CASES)
