"""PointNet++ multi-scale-grouping segmenter (Pointnet2_PyTorch's ``Pointnet2MSG`` semantic
segmentation layout: ``SA_modules``, ``FP_modules``, ``FC_layer``), on pointrt.torch.pointnet2.

SA 1024/256/64/16 with radii (0.05, 0.1) ... (0.4, 0.8), 4 FP levels, per-point logits.

    python models/pointnet2_msg_seg.py --export msg_seg.onnx --points 4096
"""
import argparse
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from pointrt.torch.pointnet2 import PointnetFPModule, PointnetSAModuleMSG  # noqa: E402

try:
    from .common import Conv1dBlock, break_up_pc
except ImportError:  # run as a script
    from common import Conv1dBlock, break_up_pc


class Pointnet2MSGSeg(nn.Module):
    def __init__(self, num_classes=13, input_channels=6, use_xyz=True,
                 npoints=(1024, 256, 64, 16),
                 radii=((0.05, 0.1), (0.1, 0.2), (0.2, 0.4), (0.4, 0.8)),
                 nsamples=(16, 32)):
        super().__init__()
        ns = list(nsamples)
        self.SA_modules = nn.ModuleList()
        c_in = input_channels
        self.SA_modules.append(PointnetSAModuleMSG(
            npoint=npoints[0], radii=list(radii[0]), nsamples=ns,
            mlps=[[c_in, 16, 16, 32], [c_in, 32, 32, 64]], use_xyz=use_xyz))
        c_out_0 = 32 + 64
        c_in = c_out_0
        self.SA_modules.append(PointnetSAModuleMSG(
            npoint=npoints[1], radii=list(radii[1]), nsamples=ns,
            mlps=[[c_in, 64, 64, 128], [c_in, 64, 96, 128]], use_xyz=use_xyz))
        c_out_1 = 128 + 128
        c_in = c_out_1
        self.SA_modules.append(PointnetSAModuleMSG(
            npoint=npoints[2], radii=list(radii[2]), nsamples=ns,
            mlps=[[c_in, 128, 196, 256], [c_in, 128, 196, 256]], use_xyz=use_xyz))
        c_out_2 = 256 + 256
        c_in = c_out_2
        self.SA_modules.append(PointnetSAModuleMSG(
            npoint=npoints[3], radii=list(radii[3]), nsamples=ns,
            mlps=[[c_in, 256, 256, 512], [c_in, 256, 384, 512]], use_xyz=use_xyz))
        c_out_3 = 512 + 512

        self.FP_modules = nn.ModuleList()
        self.FP_modules.append(PointnetFPModule(mlp=[256 + input_channels, 128, 128]))
        self.FP_modules.append(PointnetFPModule(mlp=[512 + c_out_0, 256, 256]))
        self.FP_modules.append(PointnetFPModule(mlp=[512 + c_out_1, 512, 512]))
        self.FP_modules.append(PointnetFPModule(mlp=[c_out_3 + c_out_2, 512, 512]))

        # pt_utils.Seq(128).conv1d(128, bn=True).dropout().conv1d(num_classes, activation=None)
        self.FC_layer = nn.Sequential()
        self.FC_layer.add_module("0", Conv1dBlock(128, 128, bn=True))
        self.FC_layer.add_module("1", nn.Dropout(0.5))
        self.FC_layer.add_module("2", Conv1dBlock(128, num_classes, activation=False))

    def forward(self, pointcloud):
        """pointcloud [B, N, 3 + input_channels] -> logits [B, N, num_classes]."""
        xyz, features = break_up_pc(pointcloud)
        l_xyz, l_features = [xyz], [features]
        for i in range(len(self.SA_modules)):
            li_xyz, li_features = self.SA_modules[i](l_xyz[i], l_features[i])
            l_xyz.append(li_xyz)
            l_features.append(li_features)
        for i in range(-1, -(len(self.FP_modules) + 1), -1):
            l_features[i - 1] = self.FP_modules[i](
                l_xyz[i - 1], l_xyz[i], l_features[i - 1], l_features[i])
        return self.FC_layer(l_features[0]).transpose(1, 2).contiguous()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--export", default="pointnet2_msg_seg.onnx")
    ap.add_argument("--points", type=int, default=4096)
    a = ap.parse_args()
    import pointrt
    torch.manual_seed(0)
    model = Pointnet2MSGSeg().eval()
    pc = torch.cat([torch.rand(1, a.points, 3) * 2 - 1, torch.rand(1, a.points, 6)], dim=-1)
    pointrt.export(model, (pc,), a.export, input_names=["points"], output_names=["logits"])


if __name__ == "__main__":
    main()
