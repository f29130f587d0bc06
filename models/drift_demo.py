"""A small voxel + image network for the guide "find where your export drifts" (docs/compare.md).

points [P, 4] (x, y, z, intensity in a 1.6 m cube) -> Voxelize (16^3 grid, coords (0, z, y, x))
-> SubMConv3d -> ScatterDense [1, 8, 16, 16, 16] (marked "bev") -> Reshape [1, 128, 16, 16]
-> Conv2d + ReLU + BatchNorm (``bev_conv``; after the ReLU, so the exporter cannot fold it) -> bilinear Upsample x2 (``up``) -> Conv2d head.

:func:`plant` writes the three export mistakes the guide finds: a Resize with another coordinate
mode, a BatchNorm left in training mode, ScatterDense indices in (b, x, y, z) order.

    python models/drift_demo.py --export drift.onnx [--plant resize,batchnorm,scatter]
"""
import argparse
import os
import sys
from typing import Iterable

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import pointrt.torch.sparse as sp  # noqa: E402
from pointrt.torch import mark  # noqa: E402

VOXEL = [0.1, 0.1, 0.1]
RANGE = [0.0, 0.0, 0.0, 1.6, 1.6, 1.6]
GRID = [16, 16, 16]  # z, y, x: a cube, so indices in the wrong order stay in range (and go unnoticed)
PLANTS = ("resize", "batchnorm", "scatter")


class DriftDemo(nn.Module):
    def __init__(self):
        super().__init__()
        self.sparse = sp.SubMConv3d(4, 8, 3, indice_key="subm1")
        self.bev_conv = nn.Sequential(nn.Conv2d(8 * GRID[0], 16, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(16))
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.head = nn.Conv2d(16, 3, 1)

    def forward(self, points: torch.Tensor) -> torch.Tensor:
        feats, coords, _ = sp.voxelize(points, VOXEL, RANGE, 8, 4096)
        x = self.sparse(sp.SparseConvTensor(feats, coords, GRID, 1))
        bev = mark(x.dense(), "bev")  # [1, 8, 16, 16, 16]
        bev = bev.reshape(1, 8 * GRID[0], GRID[1], GRID[2])
        return self.head(self.up(self.bev_conv(bev)))


def build(seed: int = 0) -> DriftDemo:
    torch.manual_seed(seed)
    m = DriftDemo().eval()
    bn = m.bev_conv[2]
    with torch.no_grad():  # statistics far from a batch's own, so training mode shows
        bn.running_mean.uniform_(-0.5, 0.5)
        bn.running_var.uniform_(0.5, 2.0)
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-0.2, 0.2)
    return m


def sample_points(n: int = 3000, seed: int = 0) -> torch.Tensor:
    g = np.random.default_rng(seed)
    xyz = g.uniform(0.0, 1.6, (n, 3)) * np.array([1.0, 0.6, 0.3])  # not symmetric in x, y, z
    pts = np.concatenate([xyz, g.uniform(0, 1, (n, 1))], axis=1).astype(np.float32)
    return torch.from_numpy(pts)


def export(model: nn.Module, points: torch.Tensor, path: str) -> None:
    import pointrt
    pointrt.export(model, (points,), path, input_names=["points"], output_names=["heatmap"], opset=17,
                   dynamic_points=False, point_axes={"points": 0}, verify=False, quiet=True)


def plant(path: str, out: str, bugs: Iterable[str]) -> None:
    """Write ``out``: the file at ``path`` with the export mistakes named in ``bugs``."""
    import onnx
    from onnx import helper
    m = onnx.load(path)
    g = m.graph
    for bug in bugs:
        if bug not in PLANTS:
            raise ValueError(f"unknown plant {bug!r} (one of {PLANTS})")
        for i, n in enumerate(list(g.node)):
            if bug == "resize" and n.op_type == "Resize":
                for a in n.attribute:
                    if a.name == "coordinate_transformation_mode":
                        a.s = b"asymmetric"
            if bug == "batchnorm" and n.op_type == "BatchNormalization":
                kept = [a for a in n.attribute if a.name != "training_mode"]
                del n.attribute[:]
                n.attribute.extend(kept + [helper.make_attribute("training_mode", 1)])
            if bug == "scatter" and n.domain == "pointrt" and n.op_type == "ScatterDense":
                perm = helper.make_tensor("xyz_order", onnx.TensorProto.INT64, [4], [0, 3, 2, 1])
                g.initializer.append(perm)
                swapped = n.input[1] + "_xyz"
                g.node.insert(list(g.node).index(n), helper.make_node(
                    "Gather", [n.input[1], "xyz_order"], [swapped], name="/planted/Gather", axis=1))
                n.input[1] = swapped
    onnx.save(m, out)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--export", required=True)
    ap.add_argument("--plant", default="", help="comma-separated: " + ",".join(PLANTS))
    a = ap.parse_args()
    export(build(), sample_points(), a.export)
    if a.plant:
        plant(a.export, a.export, a.plant.split(","))
    print(f"wrote {a.export}")
