"""PointNet++ single-scale-grouping classifier (Pointnet2_PyTorch's ``PointNet2ClassificationSSG``
layout: ``SA_modules`` + ``fc_layer``), on pointrt.torch.pointnet2.

Default: 1024 points, 40 classes, SA 512/0.2/64 -> 128/0.4/64 -> group all, FC 512-256.
``width`` scales every hidden width (the small demo uses 0.25).

    python models/pointnet2_ssg_cls.py --export ssg.onnx   # random weights, 1024 points
"""
import argparse
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from pointrt.torch.pointnet2 import PointnetSAModule  # noqa: E402

try:
    from .common import break_up_pc
except ImportError:  # run as a script
    from common import break_up_pc


class Pointnet2SSGCls(nn.Module):
    def __init__(self, num_classes=40, input_channels=0, use_xyz=True, width=1.0,
                 npoints=(512, 128), radii=(0.2, 0.4), nsamples=(64, 64)):
        super().__init__()

        def w(c):
            return max(8, int(round(c * width)))

        c1, c2, c3 = w(128), w(256), w(1024)
        self.SA_modules = nn.ModuleList()
        self.SA_modules.append(PointnetSAModule(
            npoint=npoints[0], radius=radii[0], nsample=nsamples[0],
            mlp=[input_channels, w(64), w(64), c1], use_xyz=use_xyz))
        self.SA_modules.append(PointnetSAModule(
            npoint=npoints[1], radius=radii[1], nsample=nsamples[1],
            mlp=[c1, w(128), w(128), c2], use_xyz=use_xyz))
        self.SA_modules.append(PointnetSAModule(mlp=[c2, w(256), w(512), c3], use_xyz=use_xyz))
        self.fc_layer = nn.Sequential(
            nn.Linear(c3, w(512), bias=False), nn.BatchNorm1d(w(512)), nn.ReLU(True),
            nn.Linear(w(512), w(256), bias=False), nn.BatchNorm1d(w(256)), nn.ReLU(True),
            nn.Dropout(0.5), nn.Linear(w(256), num_classes))

    def forward(self, pointcloud):
        """pointcloud [B, N, 3 + input_channels] -> logits [B, num_classes]."""
        xyz, features = break_up_pc(pointcloud)
        for module in self.SA_modules:
            xyz, features = module(xyz, features)
        # [..., 0] drops the group-all axis; squeeze(-1) would export as an If on the shape
        return self.fc_layer(features[..., 0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", default="pointnet2_ssg_cls.onnx")
    ap.add_argument("--points", type=int, default=1024)
    ap.add_argument("--classes", type=int, default=40)
    a = ap.parse_args()
    import pointrt
    torch.manual_seed(0)
    model = Pointnet2SSGCls(num_classes=a.classes).eval()
    pc = torch.rand(1, a.points, 3) * 2 - 1
    pointrt.export(model, (pc,), a.export, input_names=["points"], output_names=["logits"])


if __name__ == "__main__":
    main()
